import { createPublicKey, KeyObject, X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { discover } from './keys';
import { BoundedMap } from '../../../bounded-map';
import { fetchJson } from '../../../jwt-keys';
import { commaList, flexibleBoolean } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { SealedMemo } from '../../core/store';
import { EngineRoute, SecretsRequest } from '../../core/types';

export const SIGNING_ALGS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'EdDSA'] as const;

const ConfigBody = z.object({
  oidc_discovery_url: z.string().optional(),
  oidc_discovery_ca_pem: z.string().optional(),
  oidc_client_id: z.string().optional(),
  oidc_client_secret: z.string().optional(),
  oidc_response_mode: z.enum(['query', 'form_post', ''], { message: 'must be query or form_post' }).optional(),
  oidc_response_types: commaList.optional(),
  jwks_url: z.string().optional(),
  jwks_ca_pem: z.string().optional(),
  // Vault 1.16+: several JWKS URLs, each with the CA of its own TLS connection.
  jwks_pairs: z.array(z.object({ jwks_url: z.string(), jwks_ca_pem: z.string().optional() })).max(32, 'at most 32 pairs').nullish(),
  jwt_validation_pubkeys: commaList.optional(),
  bound_issuer: z.string().optional(),
  jwt_supported_algs: commaList.optional(),
  default_role: z.string().optional(),
  provider_config: z.record(z.string(), z.unknown()).nullish(),
  namespace_in_state: flexibleBoolean.optional(),
});

/** A JWKS URL and the CA (PEM, may be empty: the system's) of its connection. */
export interface JwksPair {
  readonly jwks_url: string;
  readonly jwks_ca_pem: string;
}

/** The login method's configuration, stored sealed at `config` (the client secret included). */
export interface JwtConfig {
  readonly oidc_discovery_url: string;
  readonly oidc_discovery_ca_pem: string;
  readonly oidc_client_id: string;
  readonly oidc_client_secret: string;
  readonly oidc_response_mode: '' | 'query' | 'form_post';
  readonly oidc_response_types: string[];
  readonly jwks_url: string;
  readonly jwks_ca_pem: string;
  readonly jwks_pairs: ReadonlyArray<JwksPair>;
  readonly jwt_validation_pubkeys: string[];
  readonly bound_issuer: string;
  readonly jwt_supported_algs: string[];
  readonly default_role: string;
  readonly provider_config: Record<string, unknown>;
  readonly namespace_in_state: boolean;
}

const EMPTY: JwtConfig = {
  oidc_discovery_url: '',
  oidc_discovery_ca_pem: '',
  oidc_client_id: '',
  oidc_client_secret: '',
  oidc_response_mode: '',
  oidc_response_types: [],
  jwks_url: '',
  jwks_ca_pem: '',
  jwks_pairs: [],
  jwt_validation_pubkeys: [],
  bound_issuer: '',
  jwt_supported_algs: [],
  default_role: '',
  provider_config: {},
  namespace_in_state: true,
};

// Opened once per process while unchanged (MountStore.getMemo): every login reads the config.
const configs = new SealedMemo<JwtConfig>(256);

export async function readConfig(req: Pick<SecretsRequest, 'store'>): Promise<JwtConfig | undefined> {
  return req.store.getMemo<JwtConfig>('config', configs, (stored) => ({ ...EMPTY, ...stored }));
}

// Parsing a PEM key costs about as much as the signature check it serves: parsed once per text.
const keyObjects = new BoundedMap<string, KeyObject>(256);

/** A PEM public key or certificate as a KeyObject; throws a message naming the entry. */
export function publicKeyOf(pem: string, index: number): KeyObject {
  try {
    let key = keyObjects.get(pem);
    if (!key) {
      key = pem.includes('BEGIN CERTIFICATE') ? new X509Certificate(pem).publicKey : createPublicKey(pem);
      keyObjects.set(pem, key);
    }
    return key;
  } catch {
    throw badInput(`jwt_validation_pubkeys[${index}]: not a PEM public key or certificate`);
  }
}

function checkCaPem(field: string, pem: string): void {
  if (!pem) return;
  try {
    new X509Certificate(pem);
  } catch {
    throw badInput(`${field}: not a PEM certificate`);
  }
}

function checkUrl(field: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badInput(`${field}: "${value}" is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw badInput(`${field}: "${value}" must be an http(s) URL`);
}

/** The provider names Vault has specific handling for (`provider_config.provider`). */
const PROVIDERS = ['azure', 'gsuite', 'ibm', 'secureauth'];

/**
 * `provider_config` is checked as Vault checks it (a non-empty map names a known `provider`), then
 * stored and shown as given. No provider changes the login here: groups and claims come from the
 * ID token alone (Vault's providers call Microsoft Graph or Google's directory for more).
 */
function checkProviderConfig(pc: Record<string, unknown>): void {
  if (Object.keys(pc).length === 0) return;
  if (typeof pc.provider !== 'string') throw badInput("invalid provider_config: 'provider' field not found in provider_config");
  if (!PROVIDERS.includes(pc.provider)) {
    throw badInput(`invalid provider_config: provider "${pc.provider}" not found in custom providers (use ${PROVIDERS.join(', ')})`);
  }
  if (JSON.stringify(pc).length > 64 * 1024) throw badInput('invalid provider_config: larger than 64 KiB');
}

async function writeConfig(req: SecretsRequest<z.infer<typeof ConfigBody>>): Promise<undefined> {
  const b = req.body;
  const pairs: JwksPair[] = (b.jwks_pairs ?? []).map((p) => ({ jwks_url: p.jwks_url, jwks_ca_pem: p.jwks_ca_pem ?? '' }));
  const config: JwtConfig = {
    ...EMPTY,
    ...Object.fromEntries(Object.entries(b).filter(([, v]) => v !== undefined && v !== null)),
    jwks_pairs: pairs,
  } as JwtConfig;
  const sources = [config.oidc_discovery_url, config.jwks_url, config.jwt_validation_pubkeys.length ? 'x' : '', pairs.length ? 'x' : ''].filter((v) => v !== '');
  if (sources.length !== 1) {
    throw badInput("exactly one of 'jwt_validation_pubkeys', 'jwks_url', 'jwks_pairs' or 'oidc_discovery_url' must be set");
  }
  if (pairs.length && config.jwks_ca_pem) throw badInput("jwks_ca_pem: CA PEM must be provided as part of the 'jwks_pairs' when using multiple JWKS URLs");
  pairs.forEach((p, i) => {
    if (!p.jwks_url) throw badInput(`jwks_pairs[${i}].jwks_url is required`);
    checkUrl(`jwks_pairs[${i}].jwks_url`, p.jwks_url);
    checkCaPem(`jwks_pairs[${i}].jwks_ca_pem`, p.jwks_ca_pem);
  });
  checkCaPem('oidc_discovery_ca_pem', config.oidc_discovery_ca_pem);
  checkCaPem('jwks_ca_pem', config.jwks_ca_pem);
  if (config.oidc_discovery_ca_pem && !config.oidc_discovery_url) throw badInput('oidc_discovery_ca_pem: only with oidc_discovery_url');
  if (config.jwks_ca_pem && !config.jwks_url) throw badInput('jwks_ca_pem: only with jwks_url');
  if ((config.oidc_client_id || config.oidc_client_secret) && !config.oidc_discovery_url) {
    throw badInput('oidc_client_id and oidc_client_secret need oidc_discovery_url');
  }
  if (config.oidc_client_secret && !config.oidc_client_id) throw badInput('oidc_client_secret needs oidc_client_id');
  for (const t of config.oidc_response_types) {
    if (t !== 'code' && t !== 'id_token') throw badInput(`oidc_response_types: "${t}" is invalid; use code and/or id_token`);
  }
  if (config.oidc_response_types.includes('id_token') && config.oidc_response_mode !== 'form_post') {
    throw badInput("oidc_response_types: 'id_token' needs oidc_response_mode 'form_post'");
  }
  for (const alg of config.jwt_supported_algs) {
    if (!(SIGNING_ALGS as readonly string[]).includes(alg)) throw badInput(`jwt_supported_algs: "${alg}" is not supported; use ${SIGNING_ALGS.join(', ')}`);
  }
  config.jwt_validation_pubkeys.forEach((pem, i) => publicKeyOf(pem, i));
  checkProviderConfig(config.provider_config);
  // Like the public service, the provider is contacted now: a wrong URL or CA fails here, not at login.
  if (config.oidc_discovery_url) {
    checkUrl('oidc_discovery_url', config.oidc_discovery_url);
    try {
      await discover(config.oidc_discovery_url, config.oidc_discovery_ca_pem || undefined);
    } catch (err) {
      throw badInput(`error checking oidc discovery URL: ${(err as Error).message}`);
    }
  }
  if (config.jwks_url) checkUrl('jwks_url', config.jwks_url);
  // Each JWKS is fetched now, as the public service does: a wrong URL or CA fails here, not at login.
  const jwks = config.jwks_url ? [{ jwks_url: config.jwks_url, jwks_ca_pem: config.jwks_ca_pem }] : pairs;
  for (const p of jwks) {
    try {
      const res = await fetchJson(p.jwks_url, p.jwks_ca_pem || undefined);
      if (res.status !== 200 || !Array.isArray(res.body.keys)) throw new Error(`not a JWKS (status ${res.status})`);
    } catch (err) {
      throw badInput(`error checking jwks URL${pairs.length ? ` ${p.jwks_url}` : ''}: ${(err as Error).message}`);
    }
  }
  await req.core.context(req.mount).tx((store) => store.put('config', config));
  return undefined;
}

/** `config`: write (one of three key sources) and read (never the client secret). */
export const configRoutes: EngineRoute[] = [
  {
    pattern: 'config',
    body: ConfigBody,
    // The provider is fetched outside any transaction; the write opens its own.
    ownTransactions: ['create', 'update'],
    exists: (req) => req.store.exists('config'),
    readOnly: true,
    read: async (req) => {
      const c = await readConfig(req);
      if (!c) throw missing();
      const { oidc_client_secret: _secret, ...shown } = c;
      // As stored: an unset response mode and types read "" and [] (the public plugin's), though they act as query and code.
      return { data: shown };
    },
    write: writeConfig,
  },
];
