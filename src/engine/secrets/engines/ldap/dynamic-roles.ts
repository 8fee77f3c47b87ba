import { z } from 'zod';
import { LdapConfig, newPassword, readConfig } from './config';
import { ldapName, roleLookups } from './names';
import { HangarError } from '../../../http/errors';
import { duration, rfc3339 } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { EngineContext, EngineRoute, LeaseRecord, SecretsRequest, SecretsResponse } from '../../core/types';
import { Fn, renderTemplate } from '../database/template';
import { Directory } from '../directory/directory';
import { parseLdif } from '../directory/ldif';
import { listResponse } from '../directory/names';

/** The public service's default username template. */
const DEFAULT_USERNAME_TEMPLATE = 'v_{{.DisplayName}}_{{.RoleName}}_{{random 10}}_{{unix_time}}';

/** What LDIF templates may use besides Vault's template functions: `utf16le` (Active Directory's unicodePwd). */
const LDIF_FUNCTIONS: Record<string, Fn> = { utf16le: ([s]) => Buffer.from(String(s), 'utf16le') };

const RoleBody = z.object({
  creation_ldif: z.string().max(64 * 1024).nullish(),
  deletion_ldif: z.string().max(64 * 1024).nullish(),
  rollback_ldif: z.string().max(64 * 1024).nullish(),
  username_template: z.string().max(1024).nullish(),
  default_ttl: duration().nullish(),
  max_ttl: duration().nullish(),
});
type RoleBody = z.infer<typeof RoleBody>;

/** A dynamic role, at `role/<name>`. */
interface DynamicRole {
  readonly name: string;
  readonly creation_ldif: string;
  readonly deletion_ldif: string;
  readonly rollback_ldif: string;
  readonly username_template: string;
  /** Seconds; 0: the mount's default lease TTL and maximum. */
  readonly default_ttl: number;
  readonly max_ttl: number;
}

/** The fields of LDIF templates (Vault's dynamicTemplateData), all as text. */
type TemplateData = Record<'Username' | 'Password' | 'DisplayName' | 'RoleName' | 'IssueTime' | 'IssueTimeSeconds' | 'ExpirationTime' | 'ExpirationTimeSeconds', string>;

/** What a credential's lease carries (sealed with it) to its revocation. */
interface DynamicLease {
  readonly kind: 'dynamic';
  readonly role: string;
  readonly deletion_ldif: string;
  readonly template_data: TemplateData;
}

const key = (name: string) => `role/${name}`;
const roleName = (req: SecretsRequest) => ldapName('role', req.params.name);

/** LDIF as given, or decoded when it is base64 (the public service accepts both). */
function decodeBase64(text: string): string {
  if (text === '' || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) return text;
  return Buffer.from(text, 'base64').toString('utf8');
}

function templateData(fields: Pick<TemplateData, 'Username' | 'Password' | 'DisplayName' | 'RoleName'>, now: number, ttl: number): TemplateData {
  // A line break in a value (a JWT login's display name comes from a claim) would add LDIF lines of
  // the caller's choosing: refused, where the public service renders it as it is.
  for (const [field, value] of Object.entries(fields)) {
    if (/[\r\n]/.test(value)) throw badInput(`${field} contains a line break and cannot go into an LDIF template`);
  }
  const exp = now + ttl * 1000;
  const rfc = (ms: number) => rfc3339(Math.floor(ms / 1000) * 1000);
  return {
    ...fields,
    IssueTime: rfc(now),
    IssueTimeSeconds: String(Math.floor(now / 1000)),
    ExpirationTime: rfc(exp),
    ExpirationTimeSeconds: String(Math.floor(exp / 1000)),
  };
}

/** Renders an LDIF template and parses the result into change records. */
function ldifOf(template: string, data: TemplateData, now: number) {
  return parseLdif(renderTemplate(template, data, now, LDIF_FUNCTIONS));
}

/** Checks a template renders (with sample data) into at least one LDIF record; the message names the field. */
function checkLdif(field: string, template: string): void {
  const sample = templateData({ Username: 'testuser', Password: 'testpass', DisplayName: 'testdisplayname', RoleName: 'testrolename' }, Date.now(), 86_400);
  let records;
  try {
    records = ldifOf(template, sample, Date.now());
  } catch (err) {
    throw badInput(`invalid ${field}: ${(err as Error).message}`);
  }
  if (records.length === 0) throw badInput(`invalid ${field}: must specify at least one LDIF entry`);
}

async function writeRole(req: SecretsRequest<RoleBody>): Promise<undefined> {
  const name = roleName(req);
  const b = req.body;
  const existing = await req.store.get<DynamicRole>(key(name));
  const role: DynamicRole = {
    name,
    creation_ldif: decodeBase64(b.creation_ldif ?? existing?.creation_ldif ?? ''),
    deletion_ldif: decodeBase64(b.deletion_ldif ?? existing?.deletion_ldif ?? ''),
    rollback_ldif: decodeBase64(b.rollback_ldif ?? existing?.rollback_ldif ?? ''),
    username_template: b.username_template ?? existing?.username_template ?? '',
    default_ttl: b.default_ttl ?? existing?.default_ttl ?? 0,
    max_ttl: b.max_ttl ?? existing?.max_ttl ?? 0,
  };
  if (!role.creation_ldif) throw badInput('missing creation_ldif');
  if (!role.deletion_ldif) throw badInput('missing deletion_ldif');
  checkLdif('creation_ldif', role.creation_ldif);
  checkLdif('deletion_ldif', role.deletion_ldif);
  if (role.rollback_ldif) checkLdif('rollback_ldif', role.rollback_ldif);
  if (role.username_template) {
    try {
      renderTemplate(role.username_template, { DisplayName: 'sample', RoleName: 'sample' }, Date.now());
    } catch (err) {
      throw badInput(`username_template: ${(err as Error).message}`);
    }
  }
  if (role.max_ttl && role.default_ttl > role.max_ttl) throw badInput(`default_ttl (${role.default_ttl}) must not exceed max_ttl (${role.max_ttl})`);
  await req.store.put(key(name), role);
  return undefined;
}

/**
 * `creds/:name`: a new directory entry from the role's creation LDIF, under a lease whose
 * revocation applies the deletion LDIF. A failed creation applies the rollback LDIF, if any.
 */
async function issueCreds(req: SecretsRequest): Promise<SecretsResponse> {
  const name = roleName(req);
  const ctx = req.core.context(req.mount);
  const { role, config } = await ctx.tx(async (store) => ({ role: await store.get<DynamicRole>(key(name)), config: await readConfig(store) }));
  if (!role) throw missing();
  if (!config) throw badInput('missing LDAP configuration');
  const now = req.engine.clock.now();
  const displayName = req.caller?.entry.displayName ?? 'root';
  let username: string;
  try {
    username = renderTemplate(role.username_template || DEFAULT_USERNAME_TEMPLATE, { DisplayName: displayName, RoleName: name }, now);
  } catch (err) {
    throw badInput(`failed to generate username: ${(err as Error).message}`);
  }
  const password = await newPassword(ctx, config);
  // The expiration the templates see: the role's TTL, else the mount's default, else the system's (768h).
  const ttl = role.default_ttl || req.mount.defaultLeaseTtl || 768 * 3600;
  const data = templateData({ Username: username, Password: password, DisplayName: displayName, RoleName: name }, now, ttl);
  let records;
  try {
    records = ldifOf(role.creation_ldif, data, now);
  } catch (err) {
    throw badInput(`creation_ldif: ${(err as Error).message}`);
  }
  await Directory.with(config, async (d) => {
    try {
      await d.execute(records, false);
    } catch (err) {
      if (!role.rollback_ldif) throw err;
      const messages = [`failed to create user: ${(err as Error).message}`];
      try {
        await d.execute(ldifOf(role.rollback_ldif, data, now), true);
      } catch (rollback) {
        messages.push(`failed to roll back user creation: ${(rollback as Error).message}`);
      }
      throw new HangarError(502, messages);
    }
  });
  const internal: DynamicLease = { kind: 'dynamic', role: name, deletion_ldif: role.deletion_ldif, template_data: data };
  return {
    data: { username, password, distinguished_names: records.map((r) => r.dn) },
    lease: { ttl: role.default_ttl, maxTtl: role.max_ttl, renewable: true, internal },
  };
}

/** Whether a lease of this engine is a dynamic credential (else a library check-out). */
export const isDynamicLease = (lease: LeaseRecord) => (lease.internal as Partial<DynamicLease> | undefined)?.kind === 'dynamic';

/** Revocation: the deletion LDIF, rendered with the credential's own data; what is already gone counts as deleted. */
export async function revokeDynamic(lease: LeaseRecord, ctx: EngineContext): Promise<void> {
  const internal = lease.internal as DynamicLease;
  const config = await ctx.tx((store) => store.get<LdapConfig>('config'));
  if (!config) throw new Error('missing LDAP configuration: the credential cannot be deleted until config is written again');
  const records = ldifOf(internal.deletion_ldif, internal.template_data, ctx.engine.clock.now());
  await Directory.with(config, (d) => d.execute(records, true));
}

/** Renewal: only while the role exists (as the public service). */
export async function renewDynamic(lease: LeaseRecord, ctx: EngineContext): Promise<void> {
  const internal = lease.internal as DynamicLease;
  if (!(await ctx.tx((store) => store.exists(key(internal.role))))) throw new Error('unable to renew: role does not exist');
}

/** `role`, `role/:name` (names may hold `/`) and `creds/:name`. */
export const dynamicRoleRoutes: EngineRoute[] = [
  { pattern: 'role', readOnly: true, list: (req) => listResponse(req.store, 'role/', true) },
  {
    pattern: 'role/*name',
    body: RoleBody,
    ...roleLookups('role'),
    read: async (req) => {
      const role = await req.store.get<DynamicRole>(key(roleName(req)));
      if (!role) throw missing();
      const { name: _name, ...shown } = role;
      return { data: shown };
    },
    write: writeRole,
    delete: async (req) => {
      await req.store.delete(key(roleName(req)));
      return undefined;
    },
  },
  { pattern: 'creds/*name', ownTransactions: ['read'], read: issueCreds },
];
