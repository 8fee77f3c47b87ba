import * as sshpk from 'sshpk';
import { z } from 'zod';
import { Clients } from './clients';
import { ResourceKind } from './kind';
import { fromEnv } from './secrets-kinds';
import { atMount, named, pathKind } from './secrets-path-kind';
import { ApiError } from '../client/errors';

/**
 * The SSH engine's managed objects: its CA (one per mount), roles and zero-address list. An
 * imported CA's private key never travels in a payload: the payload names an environment variable.
 */

const CaDesired = z.union([
  z.object({ privateKeyEnv: z.string().min(1), publicKey: z.string().min(1) }),
  z.object({ keyType: z.string().default('ssh-rsa'), keyBits: z.number().int().min(0).default(0) }),
]);
type CaDesired = z.infer<typeof CaDesired>;

/** The live CA's `type base64`, or undefined. */
async function livePublicKey(clients: Clients, mount: string): Promise<string | undefined> {
  try {
    const res = await clients.secrets.read(`${mount}/config/ca`);
    return (res?.data?.public_key as string | undefined)?.trim();
  } catch (err) {
    // A mount without a CA answers 400 "keys haven't been configured yet".
    if (err instanceof ApiError && err.status === 400) return undefined;
    throw err;
  }
}

/** Whether a live CA key is what the desired state asks for (so a deploy keeps it). */
function matches(desired: CaDesired, live: string): boolean {
  if ('publicKey' in desired) return live.split(/\s+/).slice(0, 2).join(' ') === desired.publicKey;
  const key = sshpk.parseKey(live, 'ssh');
  const type = live.split(' ')[0];
  return type === desired.keyType && (type !== 'ssh-rsa' || !desired.keyBits || key.size === desired.keyBits);
}

export const secretsSshCaKind: ResourceKind<CaDesired> = {
  kind: 'secrets.ssh-ca',
  deleteOrder: 20,
  desired: CaDesired,
  async read(clients, key, desired) {
    const live = await livePublicKey(clients, key);
    if (!live) return undefined;
    // A live CA is shown as the desired state when it matches it, as what it is otherwise.
    if (desired && matches(desired, live)) return desired;
    return { publicKey: live.split(/\s+/).slice(0, 2).join(' '), privateKeyEnv: '' };
  },
  async upsert(clients, key, desired) {
    const live = await livePublicKey(clients, key);
    if (live && matches(desired, live)) return 'unchanged';
    // Writing config/ca replaces the CA: certificates it signed stop being trusted where the new key replaces it.
    await clients.secrets.write(
      `${key}/config/ca`,
      'publicKey' in desired
        ? { generate_signing_key: false, private_key: fromEnv(desired.privateKeyEnv, 'privateKeyEnv'), public_key: desired.publicKey }
        : { generate_signing_key: true, key_type: desired.keyType, key_bits: desired.keyBits },
    );
    return live ? 'updated' : 'created';
  },
  async delete(clients, key) {
    const existed = (await livePublicKey(clients, key)) !== undefined;
    if (existed) await clients.secrets.delete(`${key}/config/ca`);
    return existed;
  },
};

/** A role as the API takes and shows it (snake_case fields of its key type). */
const RoleDesired = z.record(z.string(), z.unknown());
type RoleDesired = z.infer<typeof RoleDesired>;

export const secretsSshRoleKind = pathKind<RoleDesired>({ kind: 'secrets.ssh-role', deleteOrder: 30, desired: RoleDesired, path: named('roles') });

const ZeroDesired = z.object({ roles: z.array(z.string()) });
type ZeroDesired = z.infer<typeof ZeroDesired>;

export const secretsSshZeroAddressKind = pathKind<ZeroDesired>({
  kind: 'secrets.ssh-zeroaddress',
  deleteOrder: 40,
  desired: ZeroDesired,
  path: atMount('config/zeroaddress'),
  fromApi: (d) => {
    const roles = (d.roles ?? []) as string[];
    return roles.length ? { roles: [...roles].sort() } : undefined;
  },
  toApi: (d) => ({ roles: d.roles.join(',') }),
});

export const SECRETS_SSH_KINDS = [secretsSshCaKind, secretsSshRoleKind, secretsSshZeroAddressKind] as const;
