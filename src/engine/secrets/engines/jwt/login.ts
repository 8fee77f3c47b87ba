import { z } from 'zod';
import { Claims, checkAudience, checkTimes, loginFromClaims } from './claims';
import { JwtConfig, publicKeyOf, readConfig, SIGNING_ALGS } from './config';
import { keyFitsAlg, parseJws, payloadOf, signedBy } from './jws';
import { discover, Discovery, verifyWithJwks } from './keys';
import { JwtRole, readRole } from './roles';
import { badInput } from '../../core/request';
import { EngineRoute, SecretsRequest } from '../../core/types';

const DISCOVERY_MAX_AGE_MS = 3600_000;
const discoveries = new Map<string, { doc: Discovery; at: number }>();

/** The provider's discovery document, cached for an hour. */
export async function discovery(config: JwtConfig): Promise<Discovery> {
  const cached = discoveries.get(config.oidc_discovery_url);
  if (cached && Date.now() - cached.at < DISCOVERY_MAX_AGE_MS) return cached.doc;
  try {
    const doc = await discover(config.oidc_discovery_url, config.oidc_discovery_ca_pem || undefined);
    discoveries.set(config.oidc_discovery_url, { doc, at: Date.now() });
    return doc;
  } catch (err) {
    throw badInput(`cannot reach the OIDC provider: ${(err as Error).message}`);
  }
}

/** Config and role of a login, read in one short read-only transaction. */
export async function loginSetup(req: SecretsRequest, requested: string | undefined) {
  return req.core.context(req.mount).tx(async (store) => {
    const config = await readConfig({ store });
    if (!config) throw badInput('the login method is not configured: write its config first');
    const name = (requested || config.default_role).toLowerCase();
    if (!name) throw badInput('missing role: give "role" or set default_role in the config');
    const role = await readRole({ store }, name);
    if (!role) throw badInput(`role "${name}" could not be found`);
    return { config, name, role };
  }, { readOnly: true });
}

const INVALID_SIGNATURE = 'signature is invalid: no trusted key verifies this token';

/**
 * Verifies a JWT's signature (configured public keys, a JWKS URL, or the provider's JWKS) and
 * returns its claims. `alg: none`, algorithms outside `jwt_supported_algs`, bad signatures and
 * malformed tokens are refused with a message saying which.
 */
export async function verifySignature(config: JwtConfig, token: string, algorithms: readonly string[]): Promise<Claims> {
  const jws = parseJws(token, algorithms);
  if (config.jwt_validation_pubkeys.length) {
    // Keys of several types may be configured: only those that can verify this alg are tried.
    const keys = config.jwt_validation_pubkeys.map((pem, i) => publicKeyOf(pem, i)).filter((key) => keyFitsAlg(key, jws.alg));
    if (!keys.some((key) => signedBy(jws, key))) throw badInput(INVALID_SIGNATURE);
  } else {
    // jwks_pairs: every set is tried (Vault's multi key set); a key of any of them may have signed.
    const single = async () =>
      config.jwks_url
        ? { jwks_url: config.jwks_url, jwks_ca_pem: config.jwks_ca_pem }
        : { jwks_url: (await discovery(config)).jwks_uri, jwks_ca_pem: config.oidc_discovery_ca_pem };
    const sets = config.jwks_pairs.length ? config.jwks_pairs : [await single()];
    let verified: boolean | undefined;
    for (const set of sets) {
      const result = await verifyWithJwks(set.jwks_url, set.jwks_ca_pem || undefined, jws);
      if (result) {
        verified = true;
        break;
      }
      verified = verified ?? result;
    }
    if (verified === undefined) throw badInput(`no key in the provider's JWKS matches this token (kid "${String(jws.kid ?? '')}")`);
    if (!verified) throw badInput(INVALID_SIGNATURE);
  }
  return payloadOf(jws);
}

/** The issuer a token must carry: `bound_issuer`, else the discovered provider's. */
export async function expectedIssuer(config: JwtConfig): Promise<string> {
  if (config.bound_issuer) return config.bound_issuer;
  return config.oidc_discovery_url ? (await discovery(config)).issuer : '';
}

export function checkIssuer(claims: Claims, issuer: string): void {
  if (issuer && claims.iss !== issuer) throw badInput(`iss claim "${String(claims.iss ?? '')}" does not match the bound issuer`);
}

/** The algorithms a role accepts: the config's list, else RS256 for OIDC and all for JWT roles. */
export function algorithmsFor(config: JwtConfig, role: JwtRole): readonly string[] {
  if (config.jwt_supported_algs.length) return config.jwt_supported_algs;
  return role.role_type === 'oidc' ? ['RS256'] : SIGNING_ALGS;
}

const LoginBody = z.object({ role: z.string().optional(), jwt: z.string({ message: 'jwt is required' }).min(1, 'jwt is required').max(64 * 1024) });

/** `login`: a signed JWT and a jwt role give a token. */
export const loginRoutes: EngineRoute[] = [
  {
    pattern: 'login',
    body: LoginBody,
    unauthenticated: true,
    ownTransactions: ['create', 'update'],
    write: async (req) => {
      const body = req.body as z.infer<typeof LoginBody>;
      const { config, name, role } = await loginSetup(req, body.role);
      if (role.role_type !== 'jwt') throw badInput(`role "${name}" has role_type oidc: log in through oidc/auth_url, or use a jwt role`);
      const claims = await verifySignature(config, body.jwt, algorithmsFor(config, role));
      checkIssuer(claims, await expectedIssuer(config));
      checkTimes(claims, role, req.now);
      checkAudience(claims, role.bound_audiences);
      return { auth: loginFromClaims(req, name, role, claims) };
    },
  },
];
