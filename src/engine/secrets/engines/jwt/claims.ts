import { effectiveLeeway, JwtRole } from './roles';
import { badInput, permissionDenied } from '../../core/request';
import { ipAllowed } from '../../core/tokens';
import { AuthSpec, SecretsRequest } from '../../core/types';

export type Claims = Record<string, unknown>;

/** A claim by name, or by JSON pointer (`/a/b`, RFC 6901) when asked or when it starts with `/`. */
export function claimAt(claims: Claims, name: string, pointer = name.startsWith('/')): unknown {
  if (!pointer) return claims[name];
  if (name === '') return claims;
  if (!name.startsWith('/')) return undefined;
  let value: unknown = claims;
  for (const raw of name.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Compiled glob patterns: the same few come back on every login or request (bounded: cleared when full). */
const GLOBS = new Map<string, RegExp>();

/** Whether `value` matches `pattern`, where `*` stands for any characters (none included). */
export function globMatch(pattern: string, value: string): boolean {
  let re = GLOBS.get(pattern);
  if (!re) {
    const source = pattern.split('*').map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*');
    re = new RegExp(`^${source}$`, 's');
    if (GLOBS.size >= 1000) GLOBS.clear();
    GLOBS.set(pattern, re);
  }
  return re.test(value);
}

/** Expiry and not-before with the role's leeways (0 the default, -1 off), by the engine clock. */
export function checkTimes(claims: Claims, role: JwtRole, now: number, defaults = { skew: 60, exp: 150, nbf: 150 }): void {
  const nowSec = Math.floor(now / 1000);
  const skew = effectiveLeeway(role.clock_skew_leeway, defaults.skew);
  const expLeeway = effectiveLeeway(role.expiration_leeway, defaults.exp);
  const nbfLeeway = effectiveLeeway(role.not_before_leeway, defaults.nbf);
  for (const claim of ['exp', 'nbf', 'iat']) {
    if (claims[claim] !== undefined && typeof claims[claim] !== 'number') throw badInput(`invalid ${claim} claim: must be a number`);
  }
  if (typeof claims.exp === 'number' && nowSec - skew - expLeeway >= claims.exp) throw badInput('token is expired (exp)');
  if (typeof claims.nbf === 'number' && nowSec + skew + nbfLeeway < claims.nbf) throw badInput('token is not valid yet (nbf)');
  if (typeof claims.iat === 'number' && nowSec + skew < claims.iat) throw badInput('token is issued in the future (iat)');
}

/** Audience: any bound audience in `aud`; a token with `aud` needs bound audiences. */
export function checkAudience(claims: Claims, bound: readonly string[], alsoAllowed: readonly string[] = []): void {
  const aud = claims.aud === undefined ? [] : Array.isArray(claims.aud) ? claims.aud.map(String) : [String(claims.aud)];
  const wanted = [...bound, ...alsoAllowed];
  if (wanted.length === 0) {
    if (aud.length) throw badInput('audience claim found in JWT but no audiences bound to the role');
    return;
  }
  if (!aud.some((a) => wanted.includes(a))) throw badInput('aud claim does not match any bound audience');
}

function matchesBoundClaim(expected: unknown, actual: unknown, glob: boolean): boolean {
  const wanted = (Array.isArray(expected) ? expected : [expected]).map(String);
  const have = (Array.isArray(actual) ? actual : [actual]).filter((v) => ['string', 'number', 'boolean'].includes(typeof v)).map(String);
  return have.some((h) => wanted.some((w) => (glob ? globMatch(w, h) : w === h)));
}

/**
 * The checks every login shares once the signature, issuer and audience are good: subject, bound
 * claims, the user claim, groups, claim mappings, CIDRs. Returns the login for the core.
 */
export function loginFromClaims(req: SecretsRequest, roleName: string, role: JwtRole, claims: Claims): AuthSpec {
  if (role.token_bound_cidrs.length && !ipAllowed(req.clientIp, role.token_bound_cidrs)) throw permissionDenied();
  if (role.bound_subject && claims.sub !== role.bound_subject) throw badInput('sub claim does not match bound subject');
  for (const [key, expected] of Object.entries(role.bound_claims)) {
    const actual = claimAt(claims, key);
    if (actual === undefined) throw badInput(`claim "${key}" is missing`);
    if (!matchesBoundClaim(expected, actual, role.bound_claims_type === 'glob')) {
      throw badInput(`claim "${key}" does not match any associated bound claim values`);
    }
  }
  const user = claimAt(claims, role.user_claim, role.user_claim_json_pointer || role.user_claim.startsWith('/'));
  if (user === undefined) throw badInput(`claim "${role.user_claim}" not found in token`);
  if (typeof user !== 'string' || user === '') throw badInput(`claim "${role.user_claim}" must be a non-empty string`);
  let groups: string[] | undefined;
  if (role.groups_claim) {
    const value = claimAt(claims, role.groups_claim);
    if (value === undefined) throw badInput(`groups claim "${role.groups_claim}" not found in token`);
    // Vault also takes a single string as a one-element list.
    const list: unknown[] = Array.isArray(value) ? value : [value];
    if (list.some((g) => typeof g !== 'string')) throw badInput(`groups claim "${role.groups_claim}" must be a list of strings`);
    groups = list as string[];
  }
  const metadata: Record<string, string> = { role: roleName };
  for (const [source, target] of Object.entries(role.claim_mappings)) {
    const value = claimAt(claims, source);
    if (value === undefined) continue;
    if (!['string', 'number', 'boolean'].includes(typeof value)) throw badInput(`claim "${source}" for claim_mappings must be a string, number or boolean`);
    metadata[target] = String(value);
  }
  const type = role.token_type.replace(/^default-/, '');
  return {
    policies: role.token_policies,
    metadata,
    displayName: `${req.mount.path.split('/').slice(-2, -1)[0]}-${user}`,
    ttl: role.token_ttl,
    maxTtl: role.token_max_ttl,
    explicitMaxTtl: role.token_explicit_max_ttl,
    period: role.token_period,
    numUses: role.token_num_uses,
    boundCidrs: role.token_bound_cidrs,
    noDefaultPolicy: role.token_no_default_policy,
    // `default` leaves the choice to the mount's tuned token_type (core/request.ts).
    type: type === 'batch' || type === 'service' ? type : 'default',
    role: roleName,
    ...(groups ? { groups } : {}),
  };
}
