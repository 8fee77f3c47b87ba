import { z } from 'zod';
import { keyVersion } from './input';
import { Keyring, keyInfo, keyringExists, keyringOf, keyringToChange, KEY_TYPES, newVersion, openKeyring, rotate, saveKeyring, symmetric } from './keyring';
import { duration, flexibleBoolean, flexibleInt } from '../../core/durations';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';
import { listKeys } from '../kv/secret';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

const CreateBody = z.object({
  type: z.enum(KEY_TYPES, { message: `must be one of ${KEY_TYPES.join(', ')}` }).optional(),
  derived: flexibleBoolean.optional(),
  convergent_encryption: flexibleBoolean.optional(),
  exportable: flexibleBoolean.optional(),
  allow_plaintext_backup: flexibleBoolean.optional(),
  auto_rotate_period: duration().optional(),
  // Vault: 32 to 512 bytes (HmacMinKeySize, HmacMaxKeySize); 0 is "not given" (its Terraform provider sends 0).
  key_size: flexibleInt
    .pipe(z.number().int().refine((n) => n === 0 || (n >= 32 && n <= 512), 'must be 32 to 512 bytes'))
    .transform((n) => (n === 0 ? undefined : n))
    .optional(),
});
const ConfigBody = z.object({
  min_decryption_version: keyVersion.optional(),
  min_encryption_version: keyVersion.optional(),
  deletion_allowed: flexibleBoolean.optional(),
  exportable: flexibleBoolean.optional(),
  allow_plaintext_backup: flexibleBoolean.optional(),
  auto_rotate_period: duration().optional(),
});

/** Vault: an automatic rotation period is 0 (off) or at least an hour (transit keys, transform's tokenization keys). */
export function checkRotatePeriod(seconds: number | undefined): void {
  if (seconds !== undefined && seconds !== 0 && seconds < 3600) throw badInput('auto_rotate_period: must be 0 (never) or at least 1h');
}

/** `keys/`: create, read, list, delete, `config`, `rotate` of the transit engine's named keys. */
export const keyRoutes: EngineRoute[] = [
  { pattern: 'keys', readOnly: true, list: (req) => listKeys(req.store, 'keys/') },
  { pattern: 'keys/:name', readOnly: true, read: async (req) => ({ data: keyInfo(await keyringOf(req)) }) },
  {
    pattern: 'keys/:name',
    body: CreateBody,
    exists: (req) => keyringExists(req.store, req.params.name),
    // Creating a key that exists changes nothing (Vault); the answer is the key either way.
    write: async (req: SecretsRequest<z.infer<typeof CreateBody>>) => {
      const existing = await openKeyring(req.store, req.params.name);
      if (existing) return { data: keyInfo(existing) };
      if (!NAME.test(req.params.name)) throw badInput(`name: "${req.params.name}" must be letters, digits, "_", "-" or "." (up to 128)`);
      const b = req.body;
      const type = b.type ?? 'aes256-gcm96';
      if (b.convergent_encryption && !b.derived) throw badInput('convergent_encryption: convergent encryption requires derivation to be enabled');
      if (b.derived && !symmetric(type)) throw badInput(`derived: key derivation is only supported by the aes and chacha20 key types, not ${type}`);
      if (b.key_size !== undefined && type !== 'hmac') throw badInput('key_size: only hmac keys take a size');
      checkRotatePeriod(b.auto_rotate_period);
      const ring: Keyring = {
        name: req.params.name,
        type,
        derived: b.derived ?? false,
        convergent: b.convergent_encryption ?? false,
        exportable: b.exportable ?? false,
        allowPlaintextBackup: b.allow_plaintext_backup ?? false,
        deletionAllowed: false,
        minDecryptionVersion: 1,
        minEncryptionVersion: 0,
        autoRotatePeriod: b.auto_rotate_period ?? 0,
        latestVersion: 1,
        versions: { 1: newVersion(type, req.now, b.key_size) },
      };
      await saveKeyring(req.store, ring);
      return { data: keyInfo(ring) };
    },
    delete: async (req) => {
      const ring = await openKeyring(req.store, req.params.name);
      if (!ring) return undefined;
      if (!ring.deletionAllowed) throw badInput('deletion is not allowed for this key: set deletion_allowed with keys/:name/config first');
      await req.store.delete(`keys/${ring.name}`);
      return undefined;
    },
  },
  {
    pattern: 'keys/:name/config',
    body: ConfigBody,
    write: async (req: SecretsRequest<z.infer<typeof ConfigBody>>) => {
      const ring = await keyringToChange(req);
      const b = req.body;
      const minDec = b.min_decryption_version ?? ring.minDecryptionVersion;
      const minEnc = b.min_encryption_version ?? ring.minEncryptionVersion;
      if (minDec > ring.latestVersion) throw badInput(`min_decryption_version: cannot be above the latest version ${ring.latestVersion}`);
      if (minEnc > ring.latestVersion) throw badInput(`min_encryption_version: cannot be above the latest version ${ring.latestVersion}`);
      if (minEnc !== 0 && minEnc < minDec) throw badInput('min_encryption_version: must be 0 or at least min_decryption_version');
      if (b.exportable === false && ring.exportable) throw badInput('exportable: cannot be disabled once enabled');
      if (b.allow_plaintext_backup === false && ring.allowPlaintextBackup) throw badInput('allow_plaintext_backup: cannot be disabled once enabled');
      checkRotatePeriod(b.auto_rotate_period);
      Object.assign(ring, {
        minDecryptionVersion: Math.max(1, minDec),
        minEncryptionVersion: minEnc,
        deletionAllowed: b.deletion_allowed ?? ring.deletionAllowed,
        exportable: b.exportable ?? ring.exportable,
        allowPlaintextBackup: b.allow_plaintext_backup ?? ring.allowPlaintextBackup,
        autoRotatePeriod: b.auto_rotate_period ?? ring.autoRotatePeriod,
      });
      await saveKeyring(req.store, ring);
      return { data: keyInfo(ring) };
    },
  },
  {
    pattern: 'keys/:name/rotate',
    write: async (req) => {
      const ring = await keyringToChange(req);
      rotate(ring, req.now);
      await saveKeyring(req.store, ring);
      return { data: keyInfo(ring) };
    },
  },
];
