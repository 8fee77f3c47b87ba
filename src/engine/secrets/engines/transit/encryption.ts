import { constants, createCipheriv, createDecipheriv, privateDecrypt, publicEncrypt, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { b64, batched, keyVersion } from './input';
import {
  canEncrypt,
  isRsa,
  Keyring,
  keyringExists,
  keyringOf,
  newVersion,
  openKeyring,
  parseVersioned,
  privateKeyOf,
  publicKeyOf,
  saveKeyring,
  symmetric,
  symmetricKey,
  versioned,
  versionFor,
  versionOf,
  KEY_TYPES,
} from './keyring';
import { pooledRandomBytes } from '../../../random';
import { flexibleInt } from '../../core/durations';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

const NONCE = 12;
const TAG = 16;

/** `associated_data`: authenticated with the ciphertext (AEAD types), never stored in it. */
const aad = { associated_data: b64.optional() };
const EncryptItem = z.object({
  plaintext: b64,
  context: b64.optional(),
  key_version: keyVersion.optional(),
  reference: z.string().optional(),
  ...aad,
});
const EncryptBody = EncryptItem.partial({ plaintext: true }).extend({
  type: z.enum(KEY_TYPES, { message: `must be one of ${KEY_TYPES.join(', ')}` }).optional(),
  derived: z.boolean().optional(),
  batch_input: z.array(EncryptItem).optional(),
});
const DecryptItem = z.object({ ciphertext: z.string(), context: b64.optional(), reference: z.string().optional(), ...aad });
const DecryptBody = DecryptItem.partial({ ciphertext: true }).extend({ batch_input: z.array(DecryptItem).optional() });
const RewrapItem = DecryptItem.extend({ key_version: keyVersion.optional() });
const RewrapBody = RewrapItem.partial({ ciphertext: true }).extend({ batch_input: z.array(RewrapItem).optional() });
const DatakeyBody = z.object({
  context: b64.optional(),
  bits: flexibleInt.pipe(z.union([z.literal(128), z.literal(256), z.literal(512)], { message: 'must be 128, 256 or 512' })).optional(),
  key_version: keyVersion.optional(),
});

function checkEncrypting(ring: Keyring): void {
  if (!canEncrypt(ring.type)) throw badInput(`key type ${ring.type} does not support encryption`);
}

/** Associated data only for the AEAD types (Vault refuses it for RSA). */
function checkAad(ring: Keyring, associated: Buffer | undefined): void {
  if (associated && isRsa(ring.type)) throw badInput(`associated_data: key type ${ring.type} does not support associated data`);
}

export function encrypt(ring: Keyring, plaintext: Buffer, context: Buffer | undefined, asked?: number, associated?: Buffer): Record<string, unknown> {
  checkEncrypting(ring);
  checkAad(ring, associated);
  const [n, v] = versionFor(ring, asked);
  let payload: Buffer;
  if (isRsa(ring.type)) {
    payload = publicEncrypt({ key: publicKeyOf(v), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, plaintext);
  } else {
    // Vault's layout: nonce, ciphertext, tag.
    const nonce = pooledRandomBytes(NONCE);
    const cipher = createCipheriv(symmetric(ring.type)!.cipher as 'aes-256-gcm', symmetricKey(ring, v, context), nonce, { authTagLength: TAG });
    if (associated) cipher.setAAD(associated);
    payload = Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
  }
  return { ciphertext: versioned(n, payload), key_version: n };
}

export function decrypt(ring: Keyring, ciphertext: string, context: Buffer | undefined, associated?: Buffer): Buffer {
  checkEncrypting(ring);
  checkAad(ring, associated);
  const [n, payload] = parseVersioned('ciphertext', ciphertext);
  const v = versionOf(ring, n);
  try {
    if (isRsa(ring.type)) return privateDecrypt({ key: privateKeyOf(v), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, payload);
    if (payload.length < NONCE + TAG) throw new Error('short');
    const decipher = createDecipheriv(symmetric(ring.type)!.cipher as 'aes-256-gcm', symmetricKey(ring, v, context), payload.subarray(0, NONCE), { authTagLength: TAG });
    decipher.setAuthTag(payload.subarray(payload.length - TAG));
    if (associated) decipher.setAAD(associated);
    return Buffer.concat([decipher.update(payload.subarray(NONCE, payload.length - TAG)), decipher.final()]);
  } catch (e) {
    if (e instanceof Error && e.name === 'HangarError') throw e;
    throw badInput('ciphertext: cipher: message authentication failed');
  }
}

/**
 * `encrypt/:name` creates the key when it does not exist yet (Vault's upsert: the `create`
 * capability decides), of `type` (default aes256-gcm96).
 */
async function upsert(req: SecretsRequest<z.infer<typeof EncryptBody>>): Promise<Keyring> {
  const found = await openKeyring(req.store, req.params.name);
  if (found) return found;
  const type = req.body.type ?? 'aes256-gcm96';
  if (!canEncrypt(type)) throw badInput(`type: key type ${type} does not support encryption`);
  const ring: Keyring = {
    name: req.params.name,
    type,
    derived: req.body.derived ?? false,
    exportable: false,
    allowPlaintextBackup: false,
    deletionAllowed: false,
    minDecryptionVersion: 1,
    minEncryptionVersion: 0,
    autoRotatePeriod: 0,
    latestVersion: 1,
    versions: { 1: newVersion(type, req.now) },
  };
  await saveKeyring(req.store, ring);
  return ring;
}

const required = <T>(value: T | undefined, field: string): T => {
  if (value === undefined) throw badInput(`${field} is required`);
  return value;
};

/** `encrypt/`, `decrypt/`, `rewrap/`, `datakey/` of the transit engine. */
export const encryptionRoutes: EngineRoute[] = [
  {
    pattern: 'encrypt/:name',
    body: EncryptBody,
    // Encrypting with a key that exists writes nothing; creating the key does.
    readOnly: ['update'],
    exists: (req) => keyringExists(req.store, req.params.name),
    write: async (req: SecretsRequest<z.infer<typeof EncryptBody>>) => {
      const ring = await upsert(req);
      const b = req.body;
      return batched(b.batch_input, { ...b, plaintext: b.plaintext! }, (i) =>
        encrypt(ring, required(i.plaintext, 'plaintext'), i.context, i.key_version, i.associated_data),
      );
    },
  },
  {
    pattern: 'decrypt/:name',
    readOnly: true,
    body: DecryptBody,
    write: async (req: SecretsRequest<z.infer<typeof DecryptBody>>) => {
      const ring = await keyringOf(req);
      const b = req.body;
      return batched(b.batch_input, { ...b, ciphertext: b.ciphertext! }, (i) => ({
        plaintext: decrypt(ring, required(i.ciphertext, 'ciphertext'), i.context, i.associated_data).toString('base64'),
      }));
    },
  },
  {
    pattern: 'rewrap/:name',
    readOnly: true,
    body: RewrapBody,
    write: async (req: SecretsRequest<z.infer<typeof RewrapBody>>) => {
      const ring = await keyringOf(req);
      const b = req.body;
      return batched(b.batch_input, { ...b, ciphertext: b.ciphertext! }, (i) =>
        encrypt(ring, decrypt(ring, required(i.ciphertext, 'ciphertext'), i.context, i.associated_data), i.context, i.key_version, i.associated_data),
      );
    },
  },
  {
    pattern: 'datakey/:kind/:name',
    readOnly: true,
    body: DatakeyBody,
    write: async (req: SecretsRequest<z.infer<typeof DatakeyBody>>) => {
      const kind = req.params.kind;
      if (kind !== 'plaintext' && kind !== 'wrapped') throw badInput(`datakey type "${kind}": must be plaintext or wrapped`);
      const ring = await keyringOf(req);
      const key = randomBytes((req.body.bits ?? 256) / 8);
      const out = encrypt(ring, key, req.body.context, req.body.key_version);
      return { data: kind === 'plaintext' ? { ...out, plaintext: key.toString('base64') } : out };
    },
  },
];
