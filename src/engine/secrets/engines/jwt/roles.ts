import { z } from 'zod';
import { commaList, duration, flexibleBoolean, flexibleInt } from '../../core/durations';
import { badInput, missing } from '../../core/request';
import { SealedMemo } from '../../core/store';
import { checkCidr } from '../../core/tokens';
import { EngineRoute, SecretsRequest } from '../../core/types';

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/;
const leeway = z.unknown().transform((v, ctx) => {
  const parsed = duration(-1).safeParse(v);
  if (!parsed.success) {
    ctx.addIssue({ code: 'custom', message: parsed.error.issues[0].message });
    return z.NEVER;
  }
  return parsed.data;
});
const claimValues = z.union([z.string(), z.number(), z.boolean(), z.array(z.union([z.string(), z.number(), z.boolean()]))]);

/** Every role field the spec lists, with Vault's deprecated aliases (`policies`, `ttl`, ...). */
const RoleBody = z.object({
  role_type: z.enum(['oidc', 'jwt'], { message: 'must be oidc or jwt' }).optional(),
  bound_audiences: commaList.optional(),
  user_claim: z.string().optional(),
  user_claim_json_pointer: flexibleBoolean.optional(),
  clock_skew_leeway: leeway.optional(),
  expiration_leeway: leeway.optional(),
  not_before_leeway: leeway.optional(),
  bound_subject: z.string().optional(),
  bound_claims: z.record(z.string(), claimValues).nullish(),
  bound_claims_type: z.enum(['string', 'glob'], { message: 'must be string or glob' }).optional(),
  groups_claim: z.string().optional(),
  claim_mappings: z.record(z.string(), z.string()).nullish(),
  oidc_scopes: commaList.optional(),
  allowed_redirect_uris: commaList.optional(),
  verbose_oidc_logging: flexibleBoolean.optional(),
  max_age: duration().optional(),
  token_ttl: duration().optional(),
  token_max_ttl: duration().optional(),
  token_explicit_max_ttl: duration().optional(),
  token_policies: commaList.optional(),
  token_bound_cidrs: commaList.optional(),
  token_no_default_policy: flexibleBoolean.optional(),
  token_num_uses: flexibleInt.pipe(z.number().int().min(0, 'must be 0 (unlimited) or more')).optional(),
  token_period: duration().optional(),
  token_type: z.enum(['service', 'batch', 'default', 'default-service', 'default-batch'], { message: 'must be service, batch or default' }).optional(),
  policies: commaList.optional(),
  bound_cidrs: commaList.optional(),
  ttl: duration().optional(),
  max_ttl: duration().optional(),
  period: duration().optional(),
  num_uses: flexibleInt.pipe(z.number().int().min(0, 'must be 0 (unlimited) or more')).optional(),
});
type RoleBody = z.infer<typeof RoleBody>;

export interface JwtRole {
  readonly role_type: 'oidc' | 'jwt';
  readonly bound_audiences: string[];
  readonly user_claim: string;
  readonly user_claim_json_pointer: boolean;
  readonly clock_skew_leeway: number;
  readonly expiration_leeway: number;
  readonly not_before_leeway: number;
  readonly bound_subject: string;
  readonly bound_claims: Record<string, string | number | boolean | Array<string | number | boolean>>;
  readonly bound_claims_type: 'string' | 'glob';
  readonly groups_claim: string;
  readonly claim_mappings: Record<string, string>;
  readonly oidc_scopes: string[];
  readonly allowed_redirect_uris: string[];
  readonly verbose_oidc_logging: boolean;
  readonly max_age: number;
  readonly token_ttl: number;
  readonly token_max_ttl: number;
  readonly token_explicit_max_ttl: number;
  readonly token_policies: string[];
  readonly token_bound_cidrs: string[];
  readonly token_no_default_policy: boolean;
  readonly token_num_uses: number;
  readonly token_period: number;
  readonly token_type: 'service' | 'batch' | 'default' | 'default-service' | 'default-batch';
}

const DEFAULTS: JwtRole = {
  role_type: 'oidc',
  bound_audiences: [],
  user_claim: '',
  user_claim_json_pointer: false,
  clock_skew_leeway: 0,
  expiration_leeway: 0,
  not_before_leeway: 0,
  bound_subject: '',
  bound_claims: {},
  bound_claims_type: 'string',
  groups_claim: '',
  claim_mappings: {},
  oidc_scopes: [],
  allowed_redirect_uris: [],
  verbose_oidc_logging: false,
  max_age: 0,
  token_ttl: 0,
  token_max_ttl: 0,
  token_explicit_max_ttl: 0,
  token_policies: [],
  token_bound_cidrs: [],
  token_no_default_policy: false,
  token_num_uses: 0,
  token_period: 0,
  token_type: 'default',
};

export function roleName(req: SecretsRequest): string {
  const name = req.params.name;
  if (!NAME.test(name)) throw badInput(`role name "${name}" is invalid: use letters, digits, ".", "_", "-", "@"`);
  return name.toLowerCase();
}

// Opened once per process while unchanged (MountStore.getMemo): every login reads its role.
const roles = new SealedMemo<JwtRole>(1024);

export async function readRole(req: Pick<SecretsRequest, 'store'>, name: string): Promise<JwtRole | undefined> {
  return req.store.getMemo<JwtRole>(`role/${name.toLowerCase()}`, roles, (role) => ({ ...DEFAULTS, ...role }));
}

/** Leeway seconds in effect: 0 selects the default, -1 disables. */
export function effectiveLeeway(value: number, fallback: number): number {
  return value === 0 ? fallback : value < 0 ? 0 : value;
}

/** Applies a write to a role (new or existing: fields left out keep their value), then checks it. */
function merge(existing: JwtRole | undefined, b: RoleBody): JwtRole {
  const next: Record<string, unknown> = { ...DEFAULTS, ...existing };
  for (const [key, value] of Object.entries(b)) {
    if (value === undefined) continue;
    next[key] = value ?? (key === 'bound_claims' || key === 'claim_mappings' ? {} : value);
  }
  // Deprecated aliases fill the token_ fields unless those were given too.
  const alias: Array<[keyof RoleBody, keyof JwtRole]> = [
    ['policies', 'token_policies'],
    ['bound_cidrs', 'token_bound_cidrs'],
    ['ttl', 'token_ttl'],
    ['max_ttl', 'token_max_ttl'],
    ['period', 'token_period'],
    ['num_uses', 'token_num_uses'],
  ];
  for (const [old, current] of alias) {
    if (b[old] !== undefined && b[current as keyof RoleBody] === undefined) next[current] = b[old];
    delete next[old];
  }
  const role = next as unknown as JwtRole;
  if (!role.user_claim) throw badInput('user_claim is required: the claim whose (string) value names the user');
  if (role.role_type === 'jwt') {
    if (!role.bound_audiences.length && !role.bound_subject && !Object.keys(role.bound_claims).length && !role.token_bound_cidrs.length) {
      throw badInput('must have at least one bound constraint when creating/updating a jwt role: bound_audiences, bound_subject, bound_claims or token_bound_cidrs');
    }
  } else if (!role.allowed_redirect_uris.length) {
    throw badInput("'allowed_redirect_uris' must be set if 'role_type' is 'oidc' or unspecified");
  }
  if (role.bound_claims_type === 'glob') {
    for (const [k, v] of Object.entries(role.bound_claims)) {
      const values = Array.isArray(v) ? v : [v];
      if (values.some((x) => typeof x !== 'string')) throw badInput(`bound_claims.${k}: glob values must be strings`);
    }
  }
  for (const uri of role.allowed_redirect_uris) {
    try {
      new URL(uri);
    } catch {
      throw badInput(`allowed_redirect_uris: "${uri}" is not a URL`);
    }
  }
  for (const cidr of role.token_bound_cidrs) {
    const problem = checkCidr(cidr);
    if (problem) throw badInput(`token_bound_cidrs: ${problem}`);
  }
  if (role.token_max_ttl && role.token_ttl > role.token_max_ttl) throw badInput('token_ttl should not be greater than token_max_ttl');
  if (role.token_type.endsWith('batch') && role.token_period) throw badInput('token_type batch cannot have a token_period');
  const targets = Object.values(role.claim_mappings);
  if (new Set(targets).size !== targets.length) throw badInput('claim_mappings: two claims map to the same metadata field');
  if (targets.includes('role')) throw badInput('claim_mappings: "role" is reserved for the role name');
  return role;
}

/** The role as read: every field, plus the deprecated names the spec lists. */
function shown(role: JwtRole): Record<string, unknown> {
  return {
    ...role,
    policies: role.token_policies,
    bound_cidrs: role.token_bound_cidrs,
    period: role.token_period,
    ttl: role.token_ttl,
    num_uses: role.token_num_uses,
    max_ttl: role.token_max_ttl,
  };
}

/** `role/:name` and the role list. */
export const roleRoutes: EngineRoute[] = [
  {
    pattern: 'role',
    readOnly: true,
    list: async (req) => ({ data: { keys: (await req.store.list('role/')).filter((k) => !k.endsWith('/')) } }),
  },
  {
    pattern: 'role/:name',
    body: RoleBody,
    exists: async (req) => NAME.test(req.params.name) && req.store.exists(`role/${req.params.name.toLowerCase()}`),
    read: async (req) => {
      const role = await readRole(req, roleName(req));
      if (!role) throw missing();
      return { data: shown(role) };
    },
    write: async (req) => {
      const name = roleName(req);
      await req.store.put(`role/${name}`, merge(await readRole(req, name), req.body as RoleBody));
      return undefined;
    },
    delete: async (req) => {
      await req.store.delete(`role/${roleName(req)}`);
      return undefined;
    },
  },
];
