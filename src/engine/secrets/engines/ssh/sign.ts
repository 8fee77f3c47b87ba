import { z } from 'zod';
import { CA_KEY, generateDefaultCa, mountTx } from './ca';
import { HOST_CERT, signCertificate, USER_CERT } from './certificate';
import { generateKeys, KeyPair, keySpec, signatureAlgorithm, signerOf } from './keys';
import { commaString, items, readRole, roleName, SshRole, stringMap } from './roles';
import { parsePublicKey, publicKeyHash, SshPublicKey } from './wire';
import { duration, flexibleInt } from '../../core/durations';
import { badInput } from '../../core/request';
import type { MountStore } from '../../core/store';
import { SYSTEM_MAX_TTL } from '../../core/tokens';
import { EngineRoute, SecretsRequest, SecretsResponse } from '../../core/types';

const common = {
  ttl: duration().optional(),
  valid_principals: commaString.optional(),
  cert_type: z.string().optional(),
  key_id: z.string().max(1024).optional(),
  critical_options: stringMap.nullish(),
  extensions: stringMap.nullish(),
};
const SignBody = z.object({ ...common, public_key: z.string({ message: 'public_key is required' }).max(16_384) });
const IssueBody = z.object({
  ...common,
  key_type: z.enum(['rsa', 'ec', 'ed25519'], { message: 'must be rsa, ec or ed25519' }).optional(),
  key_bits: flexibleInt.pipe(z.number().int().min(0)).optional(),
});
type Common = z.infer<z.ZodObject<typeof common>>;

/** The role's `allowed_user_key_lengths` entries that name this key: its family, short name and type id. */
function aliases(key: SshPublicKey): string[] {
  switch (key.family) {
    case 'rsa':
      return ['rsa', 'ssh-rsa'];
    case 'dsa':
      return ['dsa', 'ssh-dss'];
    case 'ecdsa':
      return ['ec', 'ecdsa', key.type];
    default:
      return ['ed25519', 'ssh-ed25519'];
  }
}

/**
 * `allowed_user_key_lengths`: a key passes when its type is listed and, for RSA, DSA and the `ec`/`ecdsa`
 * entries, its size is one of the listed values (a named curve or ed25519 fixes the size).
 */
function checkKeyLength(role: SshRole, key: SshPublicKey): void {
  const map = role.allowed_user_key_lengths;
  if (!Object.keys(map).length) return;
  const present = aliases(key).filter((a) => Object.prototype.hasOwnProperty.call(map, a));
  if (!present.length) throw badInput(`public_key: key of type ${key.type} is not allowed by the role's allowed_user_key_lengths`);
  const sized = (a: string) => key.family === 'rsa' || key.family === 'dsa' || a === 'ec' || a === 'ecdsa';
  if (!present.some((a) => !sized(a) || map[a].includes(key.bits))) {
    throw badInput(`public_key: a ${key.bits}-bit ${key.family} key is of an invalid size for this role (allowed_user_key_lengths)`);
  }
}

const TEMPLATE = /{{.+?}}/;

/** The principals of the certificate, within the role's allowed users (user) or domains (host). */
function principals(role: SshRole, certType: number, requested: string | undefined): string[] {
  const host = certType === HOST_CERT;
  const fallback = host ? '' : role.default_user;
  let asked = [...new Set(items(requested ?? fallback))];
  if (!asked.length && fallback) asked = [fallback];
  const allowedRaw = host ? role.allowed_domains : role.allowed_users;
  // With *_template, Vault renders `{{identity.…}}` entries from the token's entity, and skips them
  // when the token has none; Hangar's tokens carry no entity, so such entries never allow anything.
  const templated = host ? role.allowed_domains_template : role.allowed_users_template;
  const allowed = items(allowedRaw).filter((a) => !(templated && TEMPLATE.test(a)));
  if (!asked.length) {
    if (role.allow_empty_principals) return [];
    throw badInput('valid_principals: empty valid principals not allowed by role');
  }
  if (!allowed.length) throw badInput(`valid_principals: role is not configured to allow any principals (${host ? 'allowed_domains' : 'allowed_users'} is empty)`);
  if (allowedRaw.trim() === '*') return asked;
  for (const p of asked) {
    const ok = host
      ? allowed.some((d) => (role.allow_bare_domains && p === d) || (role.allow_subdomains && p.endsWith(`.${d}`)))
      : allowed.includes(p);
    if (!ok) throw badInput(`valid_principals: ${p} is not a valid value for valid_principals`);
  }
  return asked;
}

/** TTL in seconds: the request's (never above max), else the role's, else the mount's default. */
function ttlOf(req: SecretsRequest, role: SshRole, requested: number | undefined): number {
  const max = role.max_ttl || req.mount.maxLeaseTtl || SYSTEM_MAX_TTL;
  const ttl = requested || role.ttl || req.mount.defaultLeaseTtl || SYSTEM_MAX_TTL;
  if (ttl <= max) return ttl;
  if (requested) throw badInput(`ttl: ${requested} is larger than the maximum allowed ${max}`);
  return max;
}

function criticalOptions(role: SshRole, requested: Record<string, string> | null | undefined): Record<string, string> {
  if (!requested || !Object.keys(requested).length) return role.default_critical_options;
  const allowed = items(role.allowed_critical_options);
  const refused = Object.keys(requested).filter((o) => allowed.length && !allowed.includes(o));
  if (refused.length) throw badInput(`critical_options: not on the role's allowed list: ${refused.join(', ')}`);
  return requested;
}

/** Requested extensions within allowed_extensions (`*` any, unset none), else the role's defaults. */
function extensions(role: SshRole, requested: Record<string, string> | null | undefined, warnings: string[]): Record<string, string> {
  if (requested && Object.keys(requested).length) {
    if (role.allowed_extensions.trim() === '*') return requested;
    const allowed = items(role.allowed_extensions);
    const refused = Object.keys(requested).filter((e) => !allowed.includes(e));
    if (refused.length) throw badInput(`extensions: not on the role's allowed list: ${refused.join(', ')}`);
    return requested;
  }
  if (!role.default_extensions_template) return role.default_extensions;
  // Identity templates need an entity, which tokens here do not carry: such values are skipped.
  const out = Object.fromEntries(Object.entries(role.default_extensions).filter(([, v]) => !TEMPLATE.test(v)));
  if (Object.keys(out).length !== Object.keys(role.default_extensions).length) {
    warnings.push('default_extensions templating is enabled but the request has no identity entity: templated extensions were skipped');
  }
  return out;
}

function keyId(req: SecretsRequest, role: SshRole, name: string, key: SshPublicKey, requested: string | undefined): string {
  if (requested) {
    if (!role.allow_user_key_ids) throw badInput('key_id: setting key_id is not allowed by role (allow_user_key_ids)');
    return requested;
  }
  const display = req.caller?.entry.displayName ?? '';
  const format = role.key_id_format || (display ? 'vault-{{token_display_name}}-{{public_key_hash}}' : 'vault-{{public_key_hash}}');
  const vars: Record<string, string> = { token_display_name: display, role_name: name, public_key_hash: publicKeyHash(key) };
  return format.replace(/{{(token_display_name|role_name|public_key_hash)}}/g, (_, v: string) => vars[v]);
}

/**
 * The role and CA of a signing request. Signing writes nothing, except with the `create` capability
 * on a mount without a CA: then a CA is generated with the defaults (the route's `exists` asks
 * for `update` when a CA exists, `create` when not, so a caller needs both to sign in every state).
 * Updates run in the request's read-only transaction; creates in their own, with the key generated
 * outside any.
 */
async function prepare(req: SecretsRequest): Promise<{ name: string; role: SshRole; ca: KeyPair }> {
  const name = roleName(req);
  const load = async (store: MountStore) => ({ role: await readRole({ store }, name), ca: await store.get<KeyPair>(CA_KEY) });
  const creating = req.operation === 'create';
  const { role, ca } = creating ? await mountTx(req)(load) : await load(req.store);
  if (!role) throw badInput(`Unknown role: ${name}`);
  if (role.key_type !== 'ca') throw badInput(`role "${name}" has key_type ${role.key_type}: only ca roles sign certificates`);
  if (ca) return { name, role, ca };
  if (!creating) throw badInput('backend not configured with a CA key: write config/ca first');
  return { name, role, ca: await generateDefaultCa(mountTx(req)) };
}

/** Checks a request against the role and signs the key: the response's `serial_number` and `signed_key`. */
function certify(req: SecretsRequest, name: string, role: SshRole, ca: KeyPair, key: SshPublicKey, b: Common): SecretsResponse {
  const certTypeName = b.cert_type || 'user';
  if (certTypeName !== 'user' && certTypeName !== 'host') throw badInput(`cert_type: must be user or host, not "${certTypeName}"`);
  const certType = certTypeName === 'host' ? HOST_CERT : USER_CERT;
  if (certType === USER_CERT && !role.allow_user_certificates) throw badInput("cert_type: 'user' is not allowed by role");
  if (certType === HOST_CERT && !role.allow_host_certificates) throw badInput("cert_type: 'host' is not allowed by role");
  checkKeyLength(role, key);
  const warnings: string[] = [];
  const signer = signerOf(ca);
  const now = Math.floor(req.now / 1000);
  const { serial, signedKey } = signCertificate(signer, {
    publicKey: key,
    certType,
    keyId: keyId(req, role, name, key, b.key_id),
    principals: principals(role, certType, b.valid_principals),
    validAfter: now - role.not_before_duration,
    validBefore: now + ttlOf(req, role, b.ttl),
    criticalOptions: criticalOptions(role, b.critical_options),
    extensions: extensions(role, b.extensions, warnings),
    algorithm: signatureAlgorithm(signer, role.algorithm_signer),
  });
  return { data: { serial_number: serial.toString(16), signed_key: signedKey }, warnings };
}

const exists = (req: SecretsRequest) => req.store.exists(CA_KEY);

/** `sign/:name` and `issue/:name`: nothing they return is stored. */
export const signRoutes: EngineRoute[] = [
  {
    pattern: 'sign/:name',
    body: SignBody,
    exists,
    readOnly: true,
    ownTransactions: ['create'],
    write: async (req) => {
      const b = req.body as z.infer<typeof SignBody>;
      const { name, role, ca } = await prepare(req);
      const key = parsePublicKey(b.public_key);
      if (!key) throw badInput('public_key: not an SSH public key (expected one line such as "ssh-ed25519 AAAA... comment")');
      return certify(req, name, role, ca, key, b);
    },
  },
  {
    pattern: 'issue/:name',
    body: IssueBody,
    exists,
    readOnly: true,
    ownTransactions: ['create'],
    write: async (req) => {
      const b = req.body as z.infer<typeof IssueBody>;
      const { name, role, ca } = await prepare(req);
      const type = b.key_type ?? 'rsa';
      const pair = await generateKeys(keySpec(type, b.key_bits ?? 0, 2048));
      const res = certify(req, name, role, ca, parsePublicKey(pair.publicKey)!, b);
      return { ...res, data: { ...res.data, private_key: pair.privateKey, private_key_type: type } };
    },
  },
];
