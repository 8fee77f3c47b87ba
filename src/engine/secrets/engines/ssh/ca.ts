import { z } from 'zod';
import { generateKeys, importKeys, KeyPair, keySpec } from './keys';
import { weakBoolean } from './roles';
import { flexibleInt } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { EngineContext, EngineRoute, SecretsRequest } from '../../core/types';

/** The CA key pair, sealed by the barrier like every entry. */
export const CA_KEY = 'config/ca';

const CaBody = z.object({
  private_key: z.string().max(65_536).optional(),
  public_key: z.string().max(65_536).optional(),
  generate_signing_key: weakBoolean.optional(),
  key_type: z.string().max(64).optional(),
  key_bits: flexibleInt.pipe(z.number().int().min(0, 'must be 0 (the default size) or a key size')).optional(),
});
type CaBody = z.infer<typeof CaBody>;

export type MountTx = EngineContext['tx'];
export const mountTx = (req: SecretsRequest): MountTx => req.core.context(req.mount).tx;

/** A CA with the defaults of `config/ca` (4096-bit RSA): what signing with only `create` makes. */
export async function generateDefaultCa(tx: MountTx): Promise<KeyPair> {
  const pair = await generateKeys(keySpec('ssh-rsa', 0, 4096));
  // Another request may have made one meanwhile: the first one stays.
  return tx(async (store) => {
    const existing = await store.get<KeyPair>(CA_KEY);
    if (existing) return existing;
    await store.put(CA_KEY, pair);
    return pair;
  });
}

/** The key pair a `config/ca` write asks for: generated (key_type, key_bits) or imported. */
async function wanted(b: CaBody): Promise<{ pair: KeyPair; generated: boolean }> {
  const publicKey = b.public_key?.trim() ?? '';
  const privateKey = b.private_key?.trim() ?? '';
  if (b.generate_signing_key === true && (publicKey || privateKey)) {
    throw badInput('public_key and private_key must not be set when generate_signing_key is set to true');
  }
  const generate = b.generate_signing_key ?? (!publicKey && !privateKey);
  if (generate) return { pair: await generateKeys(keySpec(b.key_type || 'ssh-rsa', b.key_bits ?? 0, 4096)), generated: true };
  if (!publicKey) throw badInput('public_key is required when generate_signing_key is false');
  if (!privateKey) throw badInput('private_key is required when generate_signing_key is false');
  return { pair: importKeys(`${privateKey}\n`, b.public_key!), generated: false };
}

/** `config/ca` and the unauthenticated `public_key`. */
export const caRoutes: EngineRoute[] = [
  {
    pattern: 'config/ca',
    body: CaBody,
    // Key generation (4096-bit RSA takes seconds) runs outside any transaction.
    ownTransactions: ['create', 'update'],
    read: async (req) => {
      const pair = await req.store.get<KeyPair>(CA_KEY);
      if (!pair) throw badInput("keys haven't been configured yet");
      return { data: { public_key: pair.publicKey } };
    },
    write: async (req) => {
      const { pair, generated } = await wanted(req.body as CaBody);
      // The spec: a new CA replaces the existing one.
      await mountTx(req)((store) => store.put(CA_KEY, pair));
      return generated ? { data: { public_key: pair.publicKey } } : undefined;
    },
    delete: async (req) => {
      await req.store.delete(CA_KEY);
      return undefined;
    },
  },
  {
    pattern: 'public_key',
    unauthenticated: true,
    readOnly: true,
    read: async (req) => {
      const pair = await req.store.get<KeyPair>(CA_KEY);
      if (!pair) throw missing();
      return { raw: { contentType: 'text/plain; charset=utf-8', body: pair.publicKey } };
    },
  },
];
