import { z } from 'zod';
import { duration, flexibleBoolean, flexibleInt, rfc3339 } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import type { MountStore } from '../../core/store';
import { EngineContext, EngineRoute, SecretsRequest } from '../../core/types';
import { passwordFor, PasswordPolicy } from '../../system/password-policy';
import { checkConnection, DirectoryConfig, SCHEMAS, Schema, TLS_VERSIONS } from '../directory/settings';

const TLS_MESSAGE = { message: 'must be tls10, tls11, tls12 or tls13' };

/**
 * The public service's LDAP client settings (its `ldaputil` fields) that this engine stores and
 * reads back but does not use: group search and login options of the auth method sharing the code.
 */
const ECHOED = {
  groupdn: z.string().max(4096),
  groupfilter: z.string().max(4096),
  groupattr: z.string().max(256),
  userfilter: z.string().max(4096),
  deny_null_bind: flexibleBoolean,
  discoverdn: flexibleBoolean,
  anonymous_group_search: flexibleBoolean,
  use_token_groups: flexibleBoolean,
  username_as_alias: flexibleBoolean,
  enable_samaccountname_login: flexibleBoolean,
  dereference_aliases: z.enum(['never', 'finding', 'searching', 'always'], { message: 'must be never, finding, searching or always' }),
  max_page_size: flexibleInt,
};

const ConfigBody = z.object({
  url: z.string().max(4096).nullish(),
  binddn: z.string().max(4096).nullish(),
  bindpass: z.string().max(4096).nullish(),
  userdn: z.string().max(4096).nullish(),
  userattr: z.string().max(256).regex(/^[A-Za-z][A-Za-z0-9-]*$/, 'must be an attribute name').nullish(),
  upndomain: z.string().max(1024).nullish(),
  schema: z.enum(SCHEMAS, { message: 'must be openldap, ad or racf' }).nullish(),
  password_policy: z.string().max(256).nullish(),
  length: flexibleInt.nullish(),
  certificate: z.string().max(256 * 1024).nullish(),
  client_tls_cert: z.string().max(256 * 1024).nullish(),
  client_tls_key: z.string().max(256 * 1024).nullish(),
  insecure_tls: flexibleBoolean.nullish(),
  starttls: flexibleBoolean.nullish(),
  tls_min_version: z.enum(TLS_VERSIONS, TLS_MESSAGE).nullish(),
  tls_max_version: z.enum(TLS_VERSIONS, TLS_MESSAGE).nullish(),
  connection_timeout: duration(1).nullish(),
  request_timeout: duration(1).nullish(),
  case_sensitive_names: flexibleBoolean.nullish(),
  skip_static_role_import_rotation: flexibleBoolean.nullish(),
  credential_type: z.enum(['password', 'phrase'], { message: 'must be password or phrase' }).nullish(),
  ...Object.fromEntries(Object.entries(ECHOED).map(([k, v]) => [k, v.nullish()])),
});
type ConfigBody = z.infer<typeof ConfigBody>;

type Echoed = { readonly [K in keyof typeof ECHOED]: z.infer<(typeof ECHOED)[K]> };

/** The engine's configuration, sealed at `config` (the bind password included). */
export interface LdapConfig extends DirectoryConfig, Echoed {
  readonly userattr: string;
  readonly connection_timeout: number;
  readonly client_tls_cert: string;
  readonly client_tls_key: string;
  readonly credential_type: 'password' | 'phrase';
  readonly password_policy: string;
  /** Deprecated by the public service; 0 when not set (passwords are then 64 characters). */
  readonly length: number;
  readonly skip_static_role_import_rotation: boolean;
}

const DEFAULTS: Omit<LdapConfig, 'binddn' | 'bindpass' | 'userattr' | 'schema'> = {
  url: 'ldap://127.0.0.1',
  userdn: '',
  upndomain: '',
  certificate: '',
  client_tls_cert: '',
  client_tls_key: '',
  insecure_tls: false,
  starttls: false,
  tls_min_version: 'tls12',
  tls_max_version: 'tls12',
  connection_timeout: 30,
  request_timeout: 90,
  case_sensitive_names: false,
  credential_type: 'password',
  password_policy: '',
  length: 0,
  skip_static_role_import_rotation: false,
  groupdn: '',
  groupfilter: '(|(memberUid={{.Username}})(member={{.UserDN}})(uniqueMember={{.UserDN}}))',
  groupattr: 'cn',
  userfilter: '({{.UserAttr}}={{.Username}})',
  deny_null_bind: true,
  discoverdn: false,
  anonymous_group_search: false,
  use_token_groups: false,
  username_as_alias: false,
  enable_samaccountname_login: false,
  dereference_aliases: 'never',
  max_page_size: 0,
};

/** The attribute accounts are named by, per schema, when the configuration gives none on creation. */
const DEFAULT_USERATTR: Record<Schema, string> = { openldap: 'cn', ad: 'userPrincipalName', racf: 'racfid' };

/** Without a password policy: base62, 64 characters or the deprecated `length` (as the public service). */
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export async function readConfig(store: MountStore): Promise<LdapConfig | undefined> {
  return store.get<LdapConfig>('config');
}

/** The configuration, or a 400 that says what to do first. */
export async function requireConfig(store: MountStore): Promise<LdapConfig> {
  const config = await readConfig(store);
  if (!config) throw badInput('missing LDAP configuration: write config first (binddn, bindpass, url)');
  return config;
}

/** A new password: from the configured password policy, else base62 of `length` (64). */
export function newPassword(ctx: Pick<EngineContext, 'tx' | 'core'>, config: LdapConfig): Promise<string> {
  const fallback: PasswordPolicy = { length: config.length || 64, rules: [{ charset: BASE62, minChars: 0 }] };
  return ctx.tx(async (_store, db) => {
    try {
      return await passwordFor(ctx.core, db, config.password_policy || undefined, fallback);
    } catch (err) {
      throw badInput(`password_policy: ${(err as Error).message}`);
    }
  });
}

/**
 * The given fields over the stored configuration (or the defaults): an update changes only what it
 * names, except `length` and `credential_type`, which the public plugin resets when not given.
 */
function merged(existing: LdapConfig | undefined, body: ConfigBody): LdapConfig {
  const given = Object.fromEntries(Object.entries(body).filter(([, v]) => v !== undefined && v !== null)) as Partial<LdapConfig>;
  const schema = given.schema ?? existing?.schema ?? 'openldap';
  const base = existing ?? { ...DEFAULTS, binddn: '', bindpass: '', schema, userattr: DEFAULT_USERATTR[schema] };
  // As the public plugin: `length` and `credential_type` are not kept from an earlier write.
  const c = { ...base, length: 0, credential_type: 'password', ...given, schema } as LdapConfig;
  if (!existing && !given.userattr) return { ...c, userattr: DEFAULT_USERATTR[schema] };
  return c;
}

function check(c: LdapConfig, body: ConfigBody): void {
  // As the public service: some way to find the accounts must be configured.
  if (!c.discoverdn && (!c.binddn || !c.bindpass) && !c.upndomain && !c.userdn) throw badInput('binddn and bindpass are required (or userdn, upndomain or discoverdn): cannot derive the DN to bind as');
  if (c.password_policy && body.length != null) throw badInput("cannot set both 'password_policy' and 'length'");
  if (c.length && (c.length < 8 || c.length > 1024)) throw badInput(`length: must be between 8 and 1024, not ${c.length}`);
  if (c.max_page_size < 0) throw badInput(`max_page_size: must not be negative, not ${c.max_page_size}`);
  checkConnection(c);
}

/** What a read shows: the public service's fields, without the bind password or the client key. */
function shown(c: LdapConfig): Record<string, unknown> {
  return {
    url: c.url,
    binddn: c.binddn,
    userdn: c.userdn,
    userattr: c.userattr,
    upndomain: c.upndomain,
    schema: c.schema,
    certificate: c.certificate,
    insecure_tls: c.insecure_tls,
    starttls: c.starttls,
    tls_min_version: c.tls_min_version,
    tls_max_version: c.tls_max_version,
    connection_timeout: c.connection_timeout,
    request_timeout: c.request_timeout,
    case_sensitive_names: c.case_sensitive_names,
    skip_static_role_import_rotation: c.skip_static_role_import_rotation,
    credential_type: c.credential_type,
    ...Object.fromEntries(Object.keys(ECHOED).map((k) => [k, c[k as keyof Echoed]])),
    // Automated root rotation is an Enterprise feature of the public service: shown unset.
    rotation_period: 0,
    rotation_schedule: '',
    rotation_window: 0,
    disable_automated_rotation: false,
    ...(c.length ? { length: c.length } : {}),
    ...(c.password_policy ? { password_policy: c.password_policy } : {}),
    ...(c.root_rotated_at ? { last_bind_password_rotation: rfc3339(c.root_rotated_at) } : {}),
  };
}

/** `config`: write (merged into what is stored; credentials are not tried), read, delete. */
export const configRoutes: EngineRoute[] = [
  {
    pattern: 'config',
    body: ConfigBody,
    exists: (req) => req.store.exists('config'),
    read: async (req) => {
      const c = await readConfig(req.store);
      if (!c) throw missing();
      return { data: shown(c) };
    },
    write: async (req: SecretsRequest<ConfigBody>) => {
      const config = merged(await readConfig(req.store), req.body);
      check(config, req.body);
      await req.store.put('config', config);
      return undefined;
    },
    delete: async (req) => {
      await req.store.delete('config');
      return undefined;
    },
  },
];
