import { z } from 'zod';
import { Clients } from './clients';
import { differences, Outcome, ResourceKind } from './kind';
import { named, pathKind } from './secrets-path-kind';
import type { SecretsMountInfo } from '../client/secrets';

// Kept importable from here for the engines' kinds files.
export { splitRoleKey } from './secrets-path-kind';

/**
 * The secrets service's managed objects: secrets engines, auth methods, ACL policies, and the
 * JWT/OIDC login method's config and roles. Secret and key material never travels in a payload:
 * the payload names an environment variable (`...Env`), read here at deploy time.
 */

const Mount = z.object({
  type: z.string().min(1),
  description: z.string().default(''),
  defaultLeaseTtl: z.number().int().min(0).default(0),
  maxLeaseTtl: z.number().int().min(0).default(0),
});
type Mount = z.infer<typeof Mount>;

function mountState(info: SecretsMountInfo): Mount {
  return { type: info.type, description: info.description, defaultLeaseTtl: info.config.default_lease_ttl, maxLeaseTtl: info.config.max_lease_ttl };
}

function mountKind(kind: 'secrets.mount' | 'secrets.auth', what: 'secret' | 'auth'): ResourceKind<Mount> {
  const get = (c: Clients, key: string) => (what === 'auth' ? c.secrets.getAuth(key) : c.secrets.getMount(key));
  return {
    kind,
    deleteOrder: 10,
    desired: Mount,
    async read(clients, key) {
      const info = await get(clients, key);
      return info && mountState(info);
    },
    async upsert(clients, key, desired) {
      const actual = await this.read(clients, key);
      if (!actual) {
        await (what === 'auth' ? clients.secrets.enableAuth(key, desired) : clients.secrets.enableMount(key, desired));
        return 'created';
      }
      if (actual.type !== desired.type) {
        throw new Error(`${key}/ is a "${actual.type}" mount; its type cannot change to "${desired.type}": use another path`);
      }
      if (differences(desired, actual).length === 0) return 'unchanged';
      await (what === 'auth' ? clients.secrets.tuneAuth(key, desired) : clients.secrets.tuneMount(key, desired));
      return 'updated';
    },
    delete: (clients, key) => (what === 'auth' ? clients.secrets.disableAuth(key) : clients.secrets.disableMount(key)),
  };
}

export const secretsMountKind = mountKind('secrets.mount', 'secret');
export const secretsAuthKind = mountKind('secrets.auth', 'auth');

const PolicyDesired = z.object({ policy: z.string() });

export const secretsPolicyKind: ResourceKind<z.infer<typeof PolicyDesired>> = {
  kind: 'secrets.policy',
  deleteOrder: 10,
  desired: PolicyDesired,
  async read(clients, key) {
    const policy = await clients.secrets.getPolicy(key);
    return policy === undefined ? undefined : { policy };
  },
  async upsert(clients, key, desired) {
    const actual = await clients.secrets.getPolicy(key);
    if (actual === desired.policy) return 'unchanged';
    await clients.secrets.putPolicy(key, desired.policy);
    return actual === undefined ? 'created' : 'updated';
  },
  delete: (clients, key) => clients.secrets.deletePolicy(key),
};

/** A value named by an environment variable; a clear error when it is not set. */
export function fromEnv(name: string | undefined, prop: string): string | undefined {
  if (!name) return undefined;
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`the environment variable ${name} (${prop}) is not set: it holds the value at deploy time`);
  return value;
}

/** PEM blocks of one environment variable (several public keys may be concatenated). */
function pemBlocks(text: string): string[] {
  return text.match(/-----BEGIN [^-]+-----[\s\S]+?-----END [^-]+-----/g) ?? [];
}

const JwtConfigDesired = z.object({
  oidcDiscoveryUrl: z.string().optional(),
  oidcDiscoveryCaPemEnv: z.string().optional(),
  oidcClientId: z.string().optional(),
  oidcClientSecretEnv: z.string().optional(),
  oidcResponseMode: z.string().optional(),
  oidcResponseTypes: z.array(z.string()).optional(),
  jwksUrl: z.string().optional(),
  jwksCaPemEnv: z.string().optional(),
  jwtValidationPubkeysEnv: z.string().optional(),
  boundIssuer: z.string().optional(),
  jwtSupportedAlgs: z.array(z.string()).optional(),
  defaultRole: z.string().optional(),
  providerConfig: z.record(z.string(), z.string()).optional(),
  namespaceInState: z.boolean().optional(),
});
type JwtConfigDesired = z.infer<typeof JwtConfigDesired>;

/** The API body of a config: the public fields from the payload, the rest from the environment. */
function jwtConfigBody(d: JwtConfigDesired): Record<string, unknown> {
  const pubkeys = fromEnv(d.jwtValidationPubkeysEnv, 'jwtValidationPubkeysEnv');
  return {
    oidc_discovery_url: d.oidcDiscoveryUrl ?? '',
    oidc_discovery_ca_pem: fromEnv(d.oidcDiscoveryCaPemEnv, 'oidcDiscoveryCaPemEnv') ?? '',
    oidc_client_id: d.oidcClientId ?? '',
    oidc_client_secret: fromEnv(d.oidcClientSecretEnv, 'oidcClientSecretEnv') ?? '',
    oidc_response_mode: d.oidcResponseMode ?? '',
    oidc_response_types: d.oidcResponseTypes ?? [],
    jwks_url: d.jwksUrl ?? '',
    jwks_ca_pem: fromEnv(d.jwksCaPemEnv, 'jwksCaPemEnv') ?? '',
    jwt_validation_pubkeys: pubkeys ? pemBlocks(pubkeys) : [],
    bound_issuer: d.boundIssuer ?? '',
    jwt_supported_algs: d.jwtSupportedAlgs ?? [],
    default_role: d.defaultRole ?? '',
    provider_config: d.providerConfig ?? {},
    namespace_in_state: d.namespaceInState ?? true,
  };
}

/** The public part of a live config, in the payload's shape (secrets and PEMs cannot be compared). */
function jwtConfigState(data: Record<string, any>): JwtConfigDesired {
  return {
    oidcDiscoveryUrl: data.oidc_discovery_url || undefined,
    oidcClientId: data.oidc_client_id || undefined,
    jwksUrl: data.jwks_url || undefined,
    boundIssuer: data.bound_issuer || undefined,
    jwtSupportedAlgs: data.jwt_supported_algs?.length ? data.jwt_supported_algs : undefined,
    defaultRole: data.default_role || undefined,
  };
}

/**
 * The fields named by environment variables, as far as they can be checked: the public keys and CA
 * chains the server shows must equal the variables' current values; the client secret is never
 * shown, so it is taken as given. A field that does not match (or whose variable is unset) is left
 * out, so drift detection reports it.
 */
function jwtConfigEnvState(data: Record<string, any>, desired: JwtConfigDesired): Partial<JwtConfigDesired> {
  const current = (name: string | undefined) => (name ? process.env[name] || undefined : undefined);
  const samePems = (name: string | undefined, live: string[] | undefined) =>
    JSON.stringify(pemBlocks(current(name) ?? '').map((k) => k.trim())) === JSON.stringify((live ?? []).map((k) => k.trim()));
  // A field the server does not show (undefined) cannot be compared: taken as given.
  const checked = (name: string | undefined, live: string | undefined) =>
    live === undefined || samePems(name, pemBlocks(live)) ? name : undefined;
  return {
    jwtValidationPubkeysEnv: samePems(desired.jwtValidationPubkeysEnv, data.jwt_validation_pubkeys) ? desired.jwtValidationPubkeysEnv : undefined,
    oidcDiscoveryCaPemEnv: checked(desired.oidcDiscoveryCaPemEnv, data.oidc_discovery_ca_pem),
    jwksCaPemEnv: checked(desired.jwksCaPemEnv, data.jwks_ca_pem),
    oidcClientSecretEnv: desired.oidcClientSecretEnv,
  };
}

export const secretsJwtConfigKind: ResourceKind<JwtConfigDesired> = {
  kind: 'secrets.jwt-config',
  deleteOrder: 20,
  desired: JwtConfigDesired,
  async read(clients, key, desired) {
    const res = await clients.secrets.read(`auth/${key}/config`);
    if (!res?.data) return undefined;
    return { ...jwtConfigState(res.data), ...(desired ? jwtConfigEnvState(res.data, desired) : {}) };
  },
  async upsert(clients, key, desired): Promise<Outcome> {
    const existing = await clients.secrets.read(`auth/${key}/config`);
    // Secrets and PEMs are not readable back, so the config is written whenever it names any.
    const opaque = desired.oidcClientSecretEnv || desired.oidcDiscoveryCaPemEnv || desired.jwksCaPemEnv || desired.jwtValidationPubkeysEnv;
    const visible = Object.fromEntries(Object.keys(jwtConfigState({})).map((k) => [k, (desired as Record<string, unknown>)[k]]));
    if (existing?.data && !opaque && differences(visible, jwtConfigState(existing.data)).length === 0) return 'unchanged';
    await clients.secrets.write(`auth/${key}/config`, jwtConfigBody(desired));
    return existing ? 'updated' : 'created';
  },
  // The config goes with its auth method; there is no separate delete in the API.
  delete: async () => true,
};

const JwtRoleDesired = z.record(z.string(), z.unknown());

export const secretsJwtRoleKind = pathKind<Record<string, unknown>>({
  kind: 'secrets.jwt-role',
  deleteOrder: 30,
  desired: JwtRoleDesired,
  path: named('role', 'auth/'),
});

export const SECRETS_KINDS = [secretsMountKind, secretsAuthKind, secretsPolicyKind, secretsJwtConfigKind, secretsJwtRoleKind] as const;
