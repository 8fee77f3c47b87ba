import { constants, createCipheriv, createDecipheriv, privateDecrypt, publicEncrypt, randomBytes } from 'node:crypto';
import { z } from 'zod';
import { b64, batched, fromB64, itemErrorsFail, ITEM_ERRORS_OK, keyVersion, partialFailureCode } from './input';
import {
  canEncrypt,
  convergentKey,
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
import { flexibleBoolean, flexibleInt } from '../../core/durations';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

const NONCE = 12;
const TAG = 16;

const required = <T>(value: T | undefined, field: string): T => {
  if (value === undefined) throw badInput(`${field} is required`);
  return value;
};

/**
 * Items' base64 fields stay text until the item runs (`fromB64`), so that one that does not decode
 * fails in its place. `associated_data` is authenticated with the ciphertext (AEAD types), never
 * stored in it; `nonce` is Vault's for keys of its 0.6.1 convergent scheme, which Hangar never makes.
 */
const itemFields = {
  context: z.string().optional(),
  reference: z.string().optional(),
  associated_data: z.string().optional(),
  nonce: z.string().optional(),
};
const EncryptItem = z.object({ plaintext: z.string(), key_version: keyVersion.optional(), ...itemFields });
const EncryptBody = EncryptItem.partial({ plaintext: true }).extend({
  type: z.enum(KEY_TYPES, { message: `must be one of ${KEY_TYPES.join(', ')}` }).optional(),
  derived: z.boolean().optional(),
  convergent_encryption: flexibleBoolean.optional(),
  batch_input: z.array(EncryptItem).optional(),
  ...partialFailureCode,
});
const DecryptItem = z.object({ ciphertext: z.string(), ...itemFields });
const DecryptBody = DecryptItem.partial({ ciphertext: true }).extend({ batch_input: z.array(DecryptItem).optional(), ...partialFailureCode });
// Vault reports a rewrap item without a ciphertext in its place.
const RewrapItem = DecryptItem.partial({ ciphertext: true }).extend({ key_version: keyVersion.optional() });
const RewrapBody = RewrapItem.extend({ batch_input: z.array(RewrapItem).optional() });
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

/** Vault takes a nonce only for keys of its 0.6.1 convergent scheme (never made here). */
function checkNonce(nonce: string | undefined): void {
  if (nonce) throw badInput('nonce: provided nonce not allowed for this key');
}

/** Vault's rule for `encrypt/` and `rewrap/`: a context in every item or in none. */
function checkContexts(items: readonly { context?: string }[]): boolean {
  const set = !!items[0]?.context;
  if (items.some((i) => !!i.context !== set)) throw badInput('context: should be set either in all the request blocks or in none');
  return set;
}

export function encrypt(ring: Keyring, plaintext: Buffer, context: Buffer | undefined, asked?: number, associated?: Buffer): Record<string, unknown> {
  checkEncrypting(ring);
  checkAad(ring, associated);
  const [n, v] = versionFor(ring, asked);
  let payload: Buffer;
  if (isRsa(ring.type)) {
    payload = publicEncrypt({ key: publicKeyOf(v), padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, plaintext);
  } else {
    // Vault's layout: nonce, ciphertext, tag (convergent keys too).
    const [key, nonce] = ring.convergent ? convergentKey(v, context, plaintext, NONCE) : [symmetricKey(ring, v, context), pooledRandomBytes(NONCE)];
    const cipher = createCipheriv(symmetric(ring.type)!.cipher as 'aes-256-gcm', key, nonce, { authTagLength: TAG });
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

/** An item's ciphertext decrypted, its base64 fields decoded on the way. */
const decryptItem = (ring: Keyring, i: z.infer<typeof RewrapItem>): Buffer =>
  decrypt(ring, required(i.ciphertext, 'ciphertext'), fromB64('context', i.context), fromB64('associated_data', i.associated_data));

/**
 * `encrypt/:name` creates the key when it does not exist yet (Vault's upsert: the `create`
 * capability decides), of `type` (default aes256-gcm96), derived when the items carry a context
 * (Vault's rule), convergent with `convergent_encryption`.
 */
async function upsert(req: SecretsRequest<z.infer<typeof EncryptBody>>, contextSet: boolean): Promise<Keyring> {
  const found = await openKeyring(req.store, req.params.name);
  if (found) return found;
  const type = req.body.type ?? 'aes256-gcm96';
  if (!canEncrypt(type)) throw badInput(`type: key type ${type} does not support encryption`);
  const derived = contextSet || (req.body.derived ?? false);
  const convergent = req.body.convergent_encryption ?? false;
  if (convergent && !derived) throw badInput('convergent_encryption: convergent encryption requires derivation to be enabled, so context is required');
  if (derived && !symmetric(type)) throw badInput(`context: key derivation is only supported by the aes and chacha20 key types, not ${type}`);
  const ring: Keyring = {
    name: req.params.name,
    type,
    derived,
    convergent,
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

/** `encrypt/`, `decrypt/`, `rewrap/`, `datakey/` of the transit engine. */
export const encryptionRoutes: EngineRoute[] = [
  {
    pattern: 'encrypt/:name',
    body: EncryptBody,
    // Encrypting with a key that exists writes nothing; creating the key does.
    readOnly: ['update'],
    exists: (req) => keyringExists(req.store, req.params.name),
    write: async (req: SecretsRequest<z.infer<typeof EncryptBody>>) => {
      const b = req.body;
      const single = { ...b, plaintext: b.plaintext! };
      const ring = await upsert(req, checkContexts(b.batch_input ?? [b]));
      const run = (i: z.infer<typeof EncryptItem>) => {
        checkNonce(i.nonce);
        return encrypt(ring, fromB64('plaintext', required(i.plaintext, 'plaintext')), fromB64('context', i.context), i.key_version, fromB64('associated_data', i.associated_data));
      };
      return batched(b.batch_input, single, run, itemErrorsFail(b.partial_failure_response_code));
    },
  },
  {
    pattern: 'decrypt/:name',
    readOnly: true,
    body: DecryptBody,
    write: async (req: SecretsRequest<z.infer<typeof DecryptBody>>) => {
      const ring = await keyringOf(req);
      const b = req.body;
      const run = (i: z.infer<typeof DecryptItem>) => {
        checkNonce(i.nonce);
        return { plaintext: decryptItem(ring, i).toString('base64') };
      };
      return batched(b.batch_input, { ...b, ciphertext: b.ciphertext! }, run, itemErrorsFail(b.partial_failure_response_code));
    },
  },
  {
    pattern: 'rewrap/:name',
    readOnly: true,
    body: RewrapBody,
    write: async (req: SecretsRequest<z.infer<typeof RewrapBody>>) => {
      const ring = await keyringOf(req);
      const b = req.body;
      checkContexts(b.batch_input ?? [b]);
      const run = (i: z.infer<typeof RewrapItem>) => {
        checkNonce(i.nonce);
        return encrypt(ring, decryptItem(ring, i), fromB64('context', i.context), i.key_version, fromB64('associated_data', i.associated_data));
      };
      return batched(b.batch_input, b, run, ITEM_ERRORS_OK);
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
