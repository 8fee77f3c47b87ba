import { z } from 'zod';
import { listed, readRole, roleRoutes, TokenRole } from './roles';
import { HangarError } from '../../../http/errors';
import { commaList, duration, flexibleBoolean, flexibleInt, rfc3339, secondsLeft } from '../../core/durations';
import { RESPONSE_WRAPPING_POLICY } from '../../core/policies';
import { badInput, normalizePolicies, permissionDenied } from '../../core/request';
import { checkCidr, SYSTEM_MAX_TTL } from '../../core/tokens';
import { EngineRoute, EngineType, SecretsRequest, SecretsResponse, TokenEntry } from '../../core/types';

const CreateBody = z.object({
  policies: commaList.optional(),
  meta: z.record(z.string(), z.string()).optional(),
  no_parent: flexibleBoolean.optional(),
  no_default_policy: flexibleBoolean.optional(),
  renewable: flexibleBoolean.optional(),
  ttl: duration().optional(),
  lease: duration().optional(),
  explicit_max_ttl: duration().optional(),
  period: duration().optional(),
  display_name: z.string().max(256).optional(),
  num_uses: flexibleInt.pipe(z.number().int().min(0, 'must be 0 (unlimited) or more')).optional(),
  // The Go client always sends `type`; empty is the default, as in Vault.
  type: z.enum(['service', 'batch', 'default', ''], { message: 'must be service, batch or default' }).optional(),
  bound_cidrs: commaList.optional(),
  id: z.string().optional(),
  role_name: z.string().optional(),
  entity_alias: z.string().optional(),
});
type CreateBody = z.infer<typeof CreateBody>;

const TokenBody = z.object({ token: z.string({ message: 'token is required' }).min(1, 'token is required') });
const AccessorBody = z.object({ accessor: z.string({ message: 'accessor is required' }).min(1, 'accessor is required') });
const Increment = { increment: duration().optional() };


/** Vault's token lookup data; `id` only when the caller presented the token itself. */
export function lookupData(entry: TokenEntry, now: number, id: string, identityPolicies: readonly string[] = []): Record<string, unknown> {
  return {
    accessor: entry.accessor,
    creation_time: Math.floor(entry.creationTime / 1000),
    creation_ttl: entry.creationTtl,
    display_name: entry.displayName,
    entity_id: '',
    expire_time: entry.expireAt ? rfc3339(entry.expireAt) : null,
    explicit_max_ttl: entry.explicitMaxTtl,
    id,
    // Vault's lease times print with sub-second precision (Go's RFC 3339 with nanoseconds), so that
    // expire_time - issue_time is the TTL (the Terraform provider reads its lease_duration so).
    issue_time: rfc3339(entry.creationTime),
    meta: Object.keys(entry.meta).length ? entry.meta : null,
    num_uses: Math.max(0, entry.numUses),
    orphan: entry.orphan,
    path: entry.path,
    policies: entry.policies,
    renewable: entry.renewable,
    ttl: entry.expireAt ? secondsLeft(entry.expireAt, now) : 0,
    type: entry.type,
    ...(entry.period ? { period: entry.period } : {}),
    ...(entry.boundCidrs.length ? { bound_cidrs: entry.boundCidrs } : {}),
    ...(entry.lastRenewalTime ? { last_renewal_time: Math.floor(entry.lastRenewalTime / 1000), last_renewal: rfc3339(entry.lastRenewalTime) } : {}),
    ...(entry.role ? { role: entry.role } : {}),
    ...(identityPolicies.length ? { identity_policies: identityPolicies } : {}),
  };
}

/**
 * Vault's display name of a created token (vault/token_store.go): "token-" and the given name,
 * each character outside letters, digits and "-" replaced by "-", one trailing "-" dropped; case kept.
 */
export function displayNameOf(given: string | undefined): string {
  return given ? `token-${given}`.replace(/[^a-zA-Z0-9-]/g, '-').replace(/-$/, '') : 'token';
}

async function lookup(req: SecretsRequest, entry: TokenEntry, id: string): Promise<SecretsResponse> {
  return { data: lookupData(entry, req.now, id, await req.core.identityPolicies(req.db, entry)) };
}

/** The token type of a creation: the role's fixed type wins, its default applies when none is asked. */
function tokenTypeOf(asked: CreateBody['type'], role: TokenRole | undefined): 'service' | 'batch' {
  if (role?.tokenType === 'service' || role?.tokenType === 'batch') return role.tokenType;
  if (role?.tokenType === 'default-batch' && !asked) return 'batch';
  return asked === 'batch' ? 'batch' : 'service';
}

/**
 * The policies of a token created against a role that limits them (Vault): the asked ones, else
 * the role's allowed ones, else the parent's; each must be allowed (exactly or by a glob) and none
 * disallowed. The parent's own policies do not limit them: that is what such a role is for.
 */
function rolePolicies(asked: readonly string[] | undefined, role: TokenRole, parent: TokenEntry, noDefault: boolean): string[] {
  const withoutDefault = noDefault || role.tokenNoDefaultPolicy || listed(role.disallowedPolicies, role.disallowedPoliciesGlob, 'default');
  let policies = asked?.length ? normalizePolicies(asked, withoutDefault) : [];
  if (role.allowedPolicies.length || role.allowedPoliciesGlob.length) {
    const allowed = normalizePolicies(role.allowedPolicies, withoutDefault);
    if (!policies.length) policies = allowed;
    const extra = policies.filter((p) => !listed(allowed, role.allowedPoliciesGlob, p));
    if (extra.length) {
      throw badInput(`token policies (${policies.join(', ')}) must be a subset of the role's allowed policies (${allowed.join(', ')}) or glob policies (${role.allowedPoliciesGlob.join(', ')}): ${extra.join(', ')} not allowed`);
    }
  } else if (!policies.length) {
    policies = normalizePolicies(parent.policies, withoutDefault);
  }
  const refused = policies.find((p) => listed(role.disallowedPolicies, role.disallowedPoliciesGlob, p));
  if (refused) throw badInput(`token policy "${refused}" is disallowed by this role`);
  return policies;
}

/** Vault's rule for a value both the request and the role set: the lesser, with a warning. */
function lesser(asked: number | undefined, byRole: number, what: string, warnings: string[]): number | undefined {
  if (!byRole) return asked;
  if (!asked) return byRole;
  warnings.push(`${what} specified both during creation call and in role; using the lesser value of ${Math.min(asked, byRole)} seconds`);
  return Math.min(asked, byRole);
}

async function createToken(req: SecretsRequest<CreateBody>, orphanPath: boolean, role?: TokenRole): Promise<SecretsResponse> {
  const caller = req.caller!;
  const b = req.body;
  const parent = caller.entry;
  const warnings: string[] = [];
  if (parent.type === 'batch') throw badInput('batch tokens cannot create more tokens');
  if (parent.numUses !== 0) throw badInput('a token with a use limit cannot create child tokens');
  if (b.id !== undefined) throw badInput('id: custom token values are not supported; a random token is issued');
  const acl = await req.core.acl(req.db, parent, caller.root);
  const sudo = acl.allows(`${req.mount.path}${req.path}`, 'sudo');
  // A role decides orphaning itself; `no_parent` is for sudo callers without one.
  if (b.no_parent && !sudo && !role) throw badInput('root or sudo privileges required to create an orphan token with no_parent');
  const type = tokenTypeOf(b.type, role);
  if (type === 'batch' && (b.period || b.num_uses || b.explicit_max_ttl)) throw badInput('batch tokens cannot be periodic, have a use limit or an explicit max TTL');
  // The Go client always sends `entity_alias`, empty.
  if (b.entity_alias) {
    if (!role) throw badInput('entity_alias: only allowed in combination with a token role');
    if (!listed(role.allowedEntityAliases, role.allowedEntityAliases, b.entity_alias.toLowerCase())) throw badInput("entity_alias: invalid 'entity_alias' value: not in the role's allowed_entity_aliases");
    warnings.push('entity_alias: Hangar has no identity entities; the token is not tied to one');
  }
  const limits = role ? [role.allowedPolicies, role.disallowedPolicies, role.allowedPoliciesGlob, role.disallowedPoliciesGlob] : [];
  const restricts = role && limits.some((l) => l.length);
  let policies: string[];
  if (restricts) {
    policies = rolePolicies(b.policies, role, parent, b.no_default_policy === true);
  } else {
    const requested = b.policies ?? parent.policies.filter((p) => p !== 'root' || caller.root);
    policies = normalizePolicies(requested, b.no_default_policy === true);
    if (!caller.root && !sudo) {
      const allowed = new Set([...parent.policies, 'default']);
      const extra = policies.filter((p) => !allowed.has(p));
      if (extra.length) throw badInput(`child policies must be a subset of the parent's: ${extra.join(', ')} not allowed`);
    }
  }
  if (b.no_default_policy) policies = policies.filter((p) => p !== 'default');
  if (policies.includes(RESPONSE_WRAPPING_POLICY)) throw badInput(`cannot assign policy "${RESPONSE_WRAPPING_POLICY}"`);
  if (policies.includes('root') && !caller.root) throw permissionDenied();
  const boundCidrs = role?.tokenBoundCidrs.length ? role.tokenBoundCidrs : b.bound_cidrs;
  for (const cidr of b.bound_cidrs ?? []) {
    const problem = checkCidr(cidr);
    if (problem) throw badInput(`bound_cidrs: ${problem}`);
  }
  const mountMax = req.mount.maxLeaseTtl || SYSTEM_MAX_TTL;
  let ttl = b.ttl ?? b.lease ?? 0;
  if (ttl === 0 && !policies.includes('root')) ttl = req.mount.defaultLeaseTtl || SYSTEM_MAX_TTL;
  ttl = Math.min(ttl, mountMax);
  const batch = type === 'batch';
  const period = role && !batch ? lesser(b.period, role.tokenPeriod, 'Period', warnings) : b.period;
  const explicitMaxTtl = role && !batch ? lesser(b.explicit_max_ttl, role.tokenExplicitMaxTtl, 'Explicit max TTL', warnings) : b.explicit_max_ttl;
  // The role's use limit caps the asked one.
  const numUses = role?.tokenNumUses && (!b.num_uses || role.tokenNumUses < b.num_uses) ? role.tokenNumUses : b.num_uses;
  // As Vault: a root token's children are children too (revoked with it), except batch tokens,
  // which need a stored parent to check against and the root token is not stored.
  const orphan = role ? role.orphan : orphanPath || b.no_parent === true || (batch && caller.root);
  const issued = await req.core.tokens.create(
    req.db,
    {
      policies,
      meta: b.meta,
      displayName: displayNameOf(b.display_name),
      numUses,
      ttl,
      maxTtl: mountMax,
      explicitMaxTtl,
      period,
      renewable: b.renewable !== false && (role?.renewable ?? true),
      type,
      parent: orphan ? undefined : parent,
      // A child never outlives its parent: its expiry stops at the parent's, to the millisecond.
      expireBy: orphan ? undefined : parent.expireAt || undefined,
      // A child acts for the same identity: its parent's groups apply to it too (Vault's entity_id).
      groupIds: parent.groupIds,
      // A role's tokens live under `auth/token/create/<role>[/<suffix>]`, so revoke-prefix reaches them.
      path: `${req.mount.path}${req.path}${role?.pathSuffix ? `/${role.pathSuffix}` : ''}`,
      boundCidrs,
      role: role?.name,
    },
    req.now,
  );
  return { issued, ...(warnings.length ? { warnings } : {}) };
}

/** The entry of a token given in a body, or a 403/400. */
async function target(req: SecretsRequest, token: string): Promise<TokenEntry> {
  const found = await req.core.tokenEntry(req.db, token, req.now);
  if (!found) throw badInput('bad token');
  return found.entry;
}

async function byAccessor(req: SecretsRequest, accessor: string): Promise<TokenEntry> {
  const entry = await req.core.tokens.byAccessor(req.db, accessor, req.now);
  if (!entry) throw badInput('invalid accessor');
  return entry;
}

async function renew(req: SecretsRequest<{ increment?: number }>, entry: TokenEntry, token: string): Promise<SecretsResponse> {
  if (entry.type === 'batch') throw badInput('batch tokens cannot be renewed');
  try {
    const renewed = await req.core.tokens.renew(req.db, entry, req.body.increment ?? 0, req.now);
    return { issued: { token, entry: renewed } };
  } catch (err) {
    if (err instanceof HangarError) throw err;
    throw badInput((err as Error).message);
  }
}

async function revoke(req: SecretsRequest, entry: TokenEntry, orphan = false): Promise<undefined> {
  if (entry.policies.includes('root') && entry.path === 'auth/token/root') throw badInput("the engine's root token cannot be revoked");
  if (entry.type === 'batch') throw badInput('batch tokens cannot be revoked; they expire or go with their parent');
  const leases = await req.core.revokeToken(req.db, entry.idHash, req.now, orphan);
  req.afterCommit(async () => void (await req.core.revokeLeases(leases)));
  return undefined;
}

const routes: EngineRoute[] = [
  { pattern: 'create', body: CreateBody, write: (req) => createToken(req, false) },
  { pattern: 'create-orphan', body: CreateBody, write: (req) => createToken(req, true) },
  {
    pattern: 'create/:role',
    body: CreateBody,
    write: async (req) => {
      const role = await readRole(req, req.params.role);
      if (!role) throw badInput(`unknown role ${req.params.role}`);
      return createToken(req, false, role);
    },
  },
  ...roleRoutes,
  {
    pattern: 'lookup-self',
    readOnly: true,
    read: async (req) => lookup(req, req.caller!.entry, req.caller!.token),
    write: async (req) => lookup(req, req.caller!.entry, req.caller!.token),
  },
  {
    pattern: 'lookup',
    body: TokenBody,
    readOnly: true,
    write: async (req) => lookup(req, await target(req, req.body.token), req.body.token),
  },
  {
    pattern: 'lookup-accessor',
    body: AccessorBody,
    readOnly: true,
    write: async (req) => lookup(req, await byAccessor(req, req.body.accessor), ''),
  },
  {
    pattern: 'renew-self',
    body: z.object(Increment),
    write: async (req) => renew(req, req.caller!.entry, req.caller!.token),
  },
  {
    pattern: 'renew',
    body: TokenBody.extend(Increment),
    write: async (req) => renew(req, await target(req, req.body.token), req.body.token),
  },
  {
    pattern: 'renew-accessor',
    body: AccessorBody.extend(Increment),
    write: async (req) => renew(req, await byAccessor(req, req.body.accessor), ''),
  },
  { pattern: 'revoke-self', write: async (req) => revoke(req, req.caller!.entry) },
  { pattern: 'revoke', body: TokenBody, write: async (req) => revoke(req, await target(req, req.body.token)) },
  { pattern: 'revoke-accessor', body: AccessorBody, write: async (req) => revoke(req, await byAccessor(req, req.body.accessor)) },
  { pattern: 'revoke-orphan', body: TokenBody, sudo: true, write: async (req) => revoke(req, await target(req, req.body.token), true) },
  {
    pattern: 'accessors',
    sudo: true,
    readOnly: true,
    list: async (req) => {
      const rows = await req.db.all<{ id_hash: string }>('SELECT id_hash FROM secrets_tokens ORDER BY id_hash');
      const keys: string[] = [];
      for (const { id_hash } of rows) {
        const e = await req.core.tokens.byHash(req.db, id_hash, req.now);
        if (e) keys.push(e.accessor);
      }
      return { data: { keys } };
    },
  },
];

/** The token store, Vault's `auth/token/` (always mounted). */
export const tokenEngine: EngineType = {
  type: 'token',
  kind: 'auth',
  description: 'token based credentials',
  routes,
};
