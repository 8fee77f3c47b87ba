import { z } from 'zod';
import { commaList, duration, flexibleBoolean, flexibleInt } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { checkCidr, SYSTEM_MAX_TTL } from '../../core/tokens';
import { EngineRoute, SecretsRequest } from '../../core/types';
import { globMatch } from '../jwt/claims';

/** A token role (`auth/token/roles/:name`), Vault's tsRoleEntry. TTLs in seconds. */
export interface TokenRole {
  readonly name: string;
  readonly allowedPolicies: readonly string[];
  readonly disallowedPolicies: readonly string[];
  readonly allowedPoliciesGlob: readonly string[];
  readonly disallowedPoliciesGlob: readonly string[];
  readonly orphan: boolean;
  readonly renewable: boolean;
  readonly pathSuffix: string;
  readonly allowedEntityAliases: readonly string[];
  readonly tokenPeriod: number;
  readonly tokenExplicitMaxTtl: number;
  /** The deprecated `period`/`explicit_max_ttl`/`bound_cidrs` as written, shown back on read. */
  readonly period: number;
  readonly explicitMaxTtl: number;
  readonly boundCidrs: readonly string[];
  readonly tokenBoundCidrs: readonly string[];
  readonly tokenNoDefaultPolicy: boolean;
  readonly tokenNumUses: number;
  readonly tokenType: 'service' | 'batch' | 'default-service' | 'default-batch';
}

/** Vault's framework.GenericNameRegex. */
const ROLE_NAME = /^\w(?:[\w.-]*\w)?$/;
const PATH_SUFFIX = /^\w(?:[\w./-]*\w)?$/;
const roleKey = (name: string) => `role/${name}`;

const RoleBody = z.object({
  allowed_policies: commaList.optional(),
  disallowed_policies: commaList.optional(),
  allowed_policies_glob: commaList.optional(),
  disallowed_policies_glob: commaList.optional(),
  orphan: flexibleBoolean.optional(),
  renewable: flexibleBoolean.optional(),
  path_suffix: z.string().max(256).optional(),
  allowed_entity_aliases: commaList.optional(),
  token_period: duration().optional(),
  period: duration().optional(),
  token_explicit_max_ttl: duration().optional(),
  explicit_max_ttl: duration().optional(),
  token_bound_cidrs: commaList.optional(),
  bound_cidrs: commaList.optional(),
  token_no_default_policy: flexibleBoolean.optional(),
  token_num_uses: flexibleInt.pipe(z.number().int().min(0, 'must be 0 (unlimited) or more')).optional(),
  token_type: z.enum(['service', 'batch', 'default-service', 'default-batch', 'default'], { message: 'must be service, batch, default-service or default-batch' }).optional(),
});
type RoleBody = z.infer<typeof RoleBody>;

const lower = (list: readonly string[]) => [...new Set(list.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))].sort();

function roleName(req: SecretsRequest): string {
  const name = req.params.name;
  if (!ROLE_NAME.test(name)) throw badInput(`role name "${name}" is invalid: use letters, digits, "_", "-" and "."`);
  return name;
}

/** The role of a name, or undefined. */
export const readRole = (req: SecretsRequest, name: string) => req.store.get<TokenRole>(roleKey(name));

/**
 * Writes a role: on create every field starts at Vault's default, on update only the fields given
 * change. The deprecated `period`, `explicit_max_ttl` and `bound_cidrs` are kept for reads; the
 * `token_` names win when both are given.
 */
async function writeRole(req: SecretsRequest<RoleBody>) {
  const name = roleName(req);
  const b = req.body;
  const old = await readRole(req as SecretsRequest, name);
  const warnings: string[] = [];
  const pick = <T>(given: T | undefined, current: T | undefined, fallback: T): T => given ?? current ?? fallback;
  if (b.path_suffix && (!PATH_SUFFIX.test(b.path_suffix) || b.path_suffix.includes('..'))) {
    throw badInput(`path_suffix: "${b.path_suffix}" is invalid: use letters, digits, "_", "-", "." and "/", starting and ending with a letter or digit, without ".."`);
  }
  for (const cidr of [...(b.token_bound_cidrs ?? []), ...(b.bound_cidrs ?? [])]) {
    const problem = checkCidr(cidr);
    if (problem) throw badInput(`token_bound_cidrs: ${problem}`);
  }
  /** A `token_` field and its deprecated twin: [token value, deprecated value shown on read]. */
  const legacy = <T>(modern: T | undefined, old_: T | undefined, currentModern: T, currentOld: T, empty: T, field: string): [T, T] => {
    if (modern !== undefined) {
      if (old_ !== undefined) warnings.push(`Both 'token_${field}' and deprecated '${field}' value supplied, ignoring the deprecated value`);
      return [modern, empty];
    }
    return old_ !== undefined ? [old_, old_] : [currentModern, currentOld];
  };
  const [tokenPeriod, period] = legacy(b.token_period, b.period, old?.tokenPeriod ?? 0, old?.period ?? 0, 0, 'period');
  const [tokenExplicitMaxTtl, explicitMaxTtl] = legacy(b.token_explicit_max_ttl, b.explicit_max_ttl, old?.tokenExplicitMaxTtl ?? 0, old?.explicitMaxTtl ?? 0, 0, 'explicit_max_ttl');
  const [tokenBoundCidrs, boundCidrs] = legacy<readonly string[]>(b.token_bound_cidrs, b.bound_cidrs, old?.tokenBoundCidrs ?? [], old?.boundCidrs ?? [], [], 'bound_cidrs');
  const type = b.token_type === 'default' ? 'default-service' : b.token_type;
  const role: TokenRole = {
    name,
    allowedPolicies: lower(pick(b.allowed_policies, old?.allowedPolicies, [])),
    disallowedPolicies: lower(pick(b.disallowed_policies, old?.disallowedPolicies, [])),
    allowedPoliciesGlob: lower(pick(b.allowed_policies_glob, old?.allowedPoliciesGlob, [])),
    disallowedPoliciesGlob: lower(pick(b.disallowed_policies_glob, old?.disallowedPoliciesGlob, [])),
    orphan: pick(b.orphan, old?.orphan, false),
    renewable: pick(b.renewable, old?.renewable, true),
    pathSuffix: pick(b.path_suffix, old?.pathSuffix, ''),
    allowedEntityAliases: lower(pick(b.allowed_entity_aliases, old?.allowedEntityAliases, [])),
    tokenPeriod,
    period,
    tokenExplicitMaxTtl,
    explicitMaxTtl,
    tokenBoundCidrs,
    boundCidrs,
    tokenNoDefaultPolicy: pick(b.token_no_default_policy, old?.tokenNoDefaultPolicy, false),
    tokenNumUses: pick(b.token_num_uses, old?.tokenNumUses, 0),
    tokenType: pick(type, old?.tokenType, 'default-service'),
  };
  if (role.tokenType === 'batch') {
    const problem = !role.orphan
      ? 'non-orphan'
      : role.tokenPeriod
        ? 'periodic'
        : role.renewable
          ? 'renewable'
          : role.tokenExplicitMaxTtl
            ? 'explicit max TTL'
            : undefined;
    if (problem) throw badInput(`token_type: cannot be 'batch' when the role generates ${problem} tokens`);
  }
  const mountMax = req.mount.maxLeaseTtl || SYSTEM_MAX_TTL;
  if (role.tokenExplicitMaxTtl > mountMax) {
    warnings.push(
      `Given explicit max TTL of ${role.tokenExplicitMaxTtl} is greater than system/mount allowed value of ${mountMax} seconds; until this is fixed attempting to create tokens against this role will result in an error`,
    );
  }
  await req.store.put(roleKey(name), role);
  return warnings.length ? { warnings } : undefined;
}

function roleData(r: TokenRole): Record<string, unknown> {
  return {
    allowed_entity_aliases: r.allowedEntityAliases.length ? r.allowedEntityAliases : null,
    allowed_policies: r.allowedPolicies,
    allowed_policies_glob: r.allowedPoliciesGlob,
    disallowed_policies: r.disallowedPolicies,
    disallowed_policies_glob: r.disallowedPoliciesGlob,
    explicit_max_ttl: r.explicitMaxTtl,
    name: r.name,
    orphan: r.orphan,
    path_suffix: r.pathSuffix,
    period: r.period,
    renewable: r.renewable,
    token_explicit_max_ttl: r.tokenExplicitMaxTtl,
    token_no_default_policy: r.tokenNoDefaultPolicy,
    token_period: r.tokenPeriod,
    token_type: r.tokenType,
    ...(r.tokenBoundCidrs.length ? { token_bound_cidrs: r.tokenBoundCidrs } : {}),
    ...(r.boundCidrs.length ? { bound_cidrs: r.boundCidrs } : {}),
    ...(r.tokenNumUses > 0 ? { token_num_uses: r.tokenNumUses } : {}),
  };
}

/** Whether a policy name is in a list, exactly or by a glob (`*` anywhere). */
export const listed = (names: readonly string[], globs: readonly string[], policy: string) =>
  names.includes(policy) || globs.some((g) => globMatch(g, policy));

/** `auth/token/roles` and `auth/token/roles/:name`. */
export const roleRoutes: EngineRoute[] = [
  {
    pattern: 'roles',
    readOnly: true,
    list: async (req) => {
      const keys = (await req.store.list('role/')).filter((k) => !k.endsWith('/'));
      if (!keys.length) throw missing();
      return { data: { keys } };
    },
  },
  {
    pattern: 'roles/:name',
    readOnly: true,
    read: async (req) => {
      const role = await readRole(req, roleName(req));
      if (!role) throw missing();
      return { data: roleData(role) };
    },
  },
  {
    pattern: 'roles/:name',
    body: RoleBody,
    exists: async (req) => (await readRole(req, req.params.name)) !== undefined,
    write: writeRole,
    delete: async (req) => {
      await req.store.delete(roleKey(roleName(req)));
      return undefined;
    },
  },
];
