import { z } from 'zod';
import { Clients } from './clients';
import { differences, ResourceKind } from './kind';

const BoxDesired = z.object({
  shortDescription: z.string().optional(),
  description: z.string().optional(),
  private: z.boolean().optional(),
});
export type BoxDesired = z.infer<typeof BoxDesired>;

/** A box's key is its tag, `owner/name`. */
export function splitTag(key: string): [string, string] {
  const parts = key.split('/');
  if (parts.length !== 2 || !parts[0] || !parts[1]) throw new Error(`box key "${key}" is not of the form owner/name`);
  return [parts[0], parts[1]];
}

export const boxKind: ResourceKind<BoxDesired> = {
  kind: 'registry.box',
  deleteOrder: 10,
  desired: BoxDesired,

  async read(clients, key) {
    const box = await clients.registry.getBox(...splitTag(key));
    return box && { shortDescription: box.short_description, description: box.description_markdown, private: box.private };
  },

  async upsert(clients: Clients, key, desired) {
    const [owner, name] = splitTag(key);
    const input = { shortDescription: desired.shortDescription, description: desired.description, isPrivate: desired.private };
    const actual = await this.read(clients, key);
    if (!actual) {
      await clients.registry.createBox(owner, name, input);
      return 'created';
    }
    if (differences(desired, actual).length === 0) return 'unchanged';
    await clients.registry.updateBox(owner, name, input);
    return 'updated';
  },

  async delete(clients, key) {
    return clients.registry.deleteBox(...splitTag(key));
  },
};
