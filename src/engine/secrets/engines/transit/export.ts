import { z } from 'zod';
import { keyVersion } from './input';
import { canEncrypt, canSign, Keyring, keyInfo, keyringExists, keyringOf, keyringToChange, KEY_TYPES, privateKeyOf, publicKeyText, saveKeyring, KeyVersion } from './keyring';
import { flexibleBoolean } from '../../core/durations';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

const EXPORT_TYPES = ['encryption-key', 'signing-key', 'hmac-key', 'public-key'] as const;

/** One version's material as `export/` shows it (Vault's encodings). */
function exported(ring: Keyring, what: (typeof EXPORT_TYPES)[number], v: KeyVersion): string {
  if (what === 'hmac-key') return ring.type === 'hmac' ? v.key! : v.hmacKey;
  if (what === 'public-key') return publicKeyText(ring.type, v);
  if (v.key) return v.key;
  const key = privateKeyOf(v);
  // ed25519: the 64-byte seed and public key; ECDSA: SEC 1 PEM; RSA: PKCS#1 PEM.
  if (ring.type === 'ed25519') {
    const jwk = key.export({ format: 'jwk' });
    return Buffer.concat([Buffer.from(jwk.d!, 'base64url'), Buffer.from(jwk.x!, 'base64url')]).toString('base64');
  }
  return key.export({ type: ring.type.startsWith('rsa-') ? 'pkcs1' : 'sec1', format: 'pem' }).toString();
}

function checkExport(ring: Keyring, what: string): asserts what is (typeof EXPORT_TYPES)[number] {
  if (!(EXPORT_TYPES as readonly string[]).includes(what)) throw badInput(`export type "${what}": must be one of ${EXPORT_TYPES.join(', ')}`);
  if (what === 'public-key') {
    if (!canSign(ring.type)) throw badInput(`public-key: key type ${ring.type} has no public key`);
    return;
  }
  if (!ring.exportable) throw badInput('key is not exportable: set exportable with keys/:name/config first');
  if (what === 'encryption-key' && !canEncrypt(ring.type)) throw badInput(`encryption-key: key type ${ring.type} does not support encryption`);
  if (what === 'signing-key' && !canSign(ring.type)) throw badInput(`signing-key: key type ${ring.type} does not support signing`);
}

async function exportKey(req: SecretsRequest) {
  const ring = await keyringOf(req);
  const what = req.params.type;
  checkExport(ring, what);
  const asked = req.params.version;
  const versions = asked === undefined ? Object.keys(ring.versions) : [asked === 'latest' ? String(ring.latestVersion) : asked];
  const keys: Record<string, string> = {};
  for (const n of versions) {
    const v = ring.versions[n];
    if (!v) throw badInput(`version: ${n} does not exist`);
    keys[n] = exported(ring, what, v);
  }
  return { data: { name: ring.name, type: ring.type, keys } };
}

const TrimBody = z.object({ min_available_version: keyVersion.pipe(z.number().min(1, 'must be 1 or more')) });
const RestoreBody = z.object({ backup: z.string().min(1, 'backup is required'), name: z.string().optional(), force: flexibleBoolean.optional() });

/** What a backup holds: the whole keyring. Hangar's own format (Vault's is internal to it). */
interface Backup {
  readonly hangar_transit_backup: 1;
  readonly keyring: Keyring;
}

/** `export/`, `backup/`, `restore`, `keys/:name/trim` of the transit engine. */
export const exportRoutes: EngineRoute[] = [
  { pattern: 'export/:type/:name', readOnly: true, read: exportKey },
  { pattern: 'export/:type/:name/:version', readOnly: true, read: exportKey },
  {
    pattern: 'backup/:name',
    readOnly: true,
    read: async (req) => {
      const ring = await keyringOf(req);
      if (!ring.exportable || !ring.allowPlaintextBackup) throw badInput('backup: the key needs exportable and allow_plaintext_backup');
      const backup: Backup = { hangar_transit_backup: 1, keyring: ring };
      return { data: { backup: Buffer.from(JSON.stringify(backup)).toString('base64') } };
    },
  },
  ...['restore', 'restore/:name'].map((pattern) => ({
    pattern,
    body: RestoreBody,
    write: async (req: SecretsRequest<z.infer<typeof RestoreBody>>) => {
      let backup: Backup;
      try {
        backup = JSON.parse(Buffer.from(req.body.backup, 'base64').toString());
      } catch {
        throw badInput('backup: not a transit key backup of Hangar');
      }
      if (backup?.hangar_transit_backup !== 1 || !KEY_TYPES.includes(backup.keyring?.type)) throw badInput('backup: not a transit key backup of Hangar');
      const name = req.params.name ?? req.body.name ?? backup.keyring.name;
      if ((await keyringExists(req.store, name)) && !req.body.force) throw badInput(`key "${name}" already exists: set force to overwrite it`);
      await saveKeyring(req.store, { ...backup.keyring, name });
      return undefined;
    },
  })),
  {
    pattern: 'keys/:name/trim',
    body: TrimBody,
    write: async (req: SecretsRequest<z.infer<typeof TrimBody>>) => {
      const ring = await keyringToChange(req as SecretsRequest);
      const min = req.body.min_available_version;
      if (min > ring.minDecryptionVersion || (ring.minEncryptionVersion && min > ring.minEncryptionVersion)) {
        throw badInput('min_available_version: must not be above min_decryption_version and min_encryption_version');
      }
      for (const n of Object.keys(ring.versions)) if (Number(n) < min) delete ring.versions[n];
      ring.minAvailableVersion = min;
      await saveKeyring(req.store, ring);
      return { data: keyInfo(ring) };
    },
  },
];
