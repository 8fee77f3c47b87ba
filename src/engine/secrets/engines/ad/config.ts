import { z } from 'zod';
import { duration, flexibleBoolean, flexibleInt } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';
import { PLACEHOLDER } from '../directory/rotation';
import { checkConnection, DirectoryConfig, TLS_VERSIONS } from '../directory/settings';

/** The public service's defaults: passwords live 32 days; a fixed complexity prefix without a formatter. */
const DEFAULT_TTL = 32 * 24 * 3600;
export const MIN_LENGTH = 14;
/** The shortest random part a formatter may leave (length minus the formatter's fixed text). */
export const MIN_RANDOM = 8;

const ConfigBody = z.object({
  ttl: duration().optional(),
  max_ttl: duration().optional(),
  length: flexibleInt.optional(),
  formatter: z.string().max(1024).optional(),
  url: z.string().max(4096).optional(),
  case_sensitive_names: flexibleBoolean.optional(),
  request_timeout: duration(1).optional(),
  starttls: flexibleBoolean.optional(),
  insecure_tls: flexibleBoolean.optional(),
  certificate: z.string().max(256 * 1024).optional(),
  binddn: z.string().max(4096).optional(),
  bindpass: z.string().max(4096).optional(),
  userdn: z.string().max(4096).optional(),
  upndomain: z.string().max(1024).optional(),
  last_rotation_tolerance: duration().optional(),
  tls_min_version: z.enum(TLS_VERSIONS, { message: 'must be tls10, tls11, tls12 or tls13' }).optional(),
  tls_max_version: z.enum(TLS_VERSIONS, { message: 'must be tls10, tls11, tls12 or tls13' }).optional(),
  schema: z.enum(['ad', 'openldap'], { message: 'must be ad (Active Directory) or openldap' }).optional(),
});

/** The engine's configuration, stored sealed at `config` (the bind password included). */
export interface AdConfig extends DirectoryConfig {
  readonly ttl: number;
  readonly max_ttl: number;
  readonly length: number;
  readonly formatter: string;
  readonly last_rotation_tolerance: number;
  /** The directory's dialect: `ad` (unicodePwd, pwdLastSet, UPN) or `openldap` (userPassword, pwdChangedTime). */
  readonly schema: 'ad' | 'openldap';
  /** Which of Hangar's own settings the last write gave (absent in configs written before: all shown). */
  readonly own_given?: readonly string[];
}

const DEFAULTS: Omit<AdConfig, 'binddn' | 'bindpass'> = {
  ttl: DEFAULT_TTL,
  max_ttl: DEFAULT_TTL,
  length: 64,
  formatter: '',
  url: 'ldap://127.0.0.1',
  case_sensitive_names: false,
  request_timeout: 90,
  starttls: false,
  insecure_tls: false,
  certificate: '',
  userdn: '',
  upndomain: '',
  last_rotation_tolerance: 5,
  tls_min_version: 'tls12',
  tls_max_version: 'tls12',
  schema: 'ad',
};

export async function readConfig(store: SecretsRequest['store']): Promise<AdConfig | undefined> {
  return store.get<AdConfig>('config');
}

/** The configuration, or a 400 that says what to do first. */
export async function requireConfig(store: SecretsRequest['store']): Promise<AdConfig> {
  const config = await readConfig(store);
  if (!config) throw badInput('the directory engine is not configured: write config first (binddn, bindpass, url)');
  return config;
}

function check(c: AdConfig): void {
  if (!c.binddn) throw badInput('binddn is required: the DN Hangar binds as to manage passwords');
  if (!c.bindpass) throw badInput('bindpass is required: the password of binddn');
  if (c.length < MIN_LENGTH) throw badInput(`length: must be at least ${MIN_LENGTH}, not ${c.length}`);
  if (c.length > 1024) throw badInput(`length: must be at most 1024, not ${c.length}`);
  if (c.formatter) {
    if (c.formatter.split(PLACEHOLDER).length !== 2) throw badInput(`formatter: must contain ${PLACEHOLDER} exactly once`);
    const random = c.length - (c.formatter.length - PLACEHOLDER.length);
    if (random < MIN_RANDOM) throw badInput(`formatter: leaves ${random} random characters at length ${c.length}; raise length or shorten the formatter (at least ${MIN_RANDOM})`);
  }
  if (c.max_ttl && c.ttl > c.max_ttl) throw badInput(`ttl (${c.ttl}) must not exceed max_ttl (${c.max_ttl})`);
  checkConnection(c);
}

/** Hangar's settings beyond the public ad plugin's: reads show them only when the write gave them. */
const OWN_SETTINGS = ['request_timeout', 'case_sensitive_names', 'schema'] as const;

/**
 * What a read shows: every setting the public ad plugin returns (never the bind password), and
 * those of Hangar's own settings that were written: a tool that never sent them (the public
 * service's Terraform provider) must not read a value it would then plan to remove.
 */
function shown(c: AdConfig): Record<string, unknown> {
  const { bindpass: _secret, pending: _pending, root_rotated_at: _at, own_given: given, ...rest } = c;
  for (const key of OWN_SETTINGS) if (given && !given.includes(key)) delete (rest as Partial<typeof rest>)[key];
  return rest;
}

/** `config`: write (replaces the whole configuration; credentials are not tried, as the spec says), read, delete. */
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
    write: async (req: SecretsRequest<z.infer<typeof ConfigBody>>) => {
      const given = Object.fromEntries(Object.entries(req.body).filter(([, v]) => v !== undefined));
      const config = { ...DEFAULTS, binddn: '', bindpass: '', ...given } as AdConfig;
      check(config);
      await req.store.put('config', { ...config, own_given: OWN_SETTINGS.filter((k) => k in given) });
      return undefined;
    },
    delete: async (req) => {
      await req.store.delete('config');
      return undefined;
    },
  },
];
