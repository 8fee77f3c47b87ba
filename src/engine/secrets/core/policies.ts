import type { Barrier } from './barrier';
import { mergeParameterRules, ParameterRules, parametersAllowed, parseParameterRules } from './parameters';
import { bumpConfigStamp, configStamp } from './stamp';
import { CAPABILITIES, Capability } from './types';
import { HclObject, HclValue, parseHcl } from '../../hcl';
import type { Db } from '../../storage';

export interface PathRule {
  readonly path: string;
  readonly capabilities: readonly Capability[];
  readonly parameters?: ParameterRules;
}

export interface StoredPolicy {
  readonly name: string;
  readonly text: string;
  readonly rules: readonly PathRule[];
}

/** Vault's `default` policy: what every token may do with itself. */
export const DEFAULT_POLICY_TEXT = `# Allow tokens to look up their own properties
path "auth/token/lookup-self" {
    capabilities = ["read"]
}

# Allow tokens to renew themselves
path "auth/token/renew-self" {
    capabilities = ["update"]
}

# Allow tokens to revoke themselves
path "auth/token/revoke-self" {
    capabilities = ["update"]
}

# Allow a token to look up its own capabilities on a path
path "sys/capabilities-self" {
    capabilities = ["update"]
}

# Allow a token to renew a lease via lease_id in the request body
path "sys/leases/renew" {
    capabilities = ["update"]
}
path "sys/renew" {
    capabilities = ["update"]
}

# Allow looking up lease properties; requires knowing the lease ID
path "sys/leases/lookup" {
    capabilities = ["update"]
}

# Allow a token to manage its own cubbyhole
path "cubbyhole/*" {
    capabilities = ["create", "read", "update", "delete", "list"]
}

# Allow a token to wrap arbitrary values in a response-wrapping token
path "sys/wrapping/wrap" {
    capabilities = ["update"]
}

# Allow a token to look up the creation time and TTL of a given
# response-wrapping token
path "sys/wrapping/lookup" {
    capabilities = ["update"]
}

# Allow a token to unwrap a response-wrapping token
path "sys/wrapping/unwrap" {
    capabilities = ["update"]
}
`;

/** The policy of response-wrapping tokens (built in, immutable, never assignable): it can only unwrap. */
export const RESPONSE_WRAPPING_POLICY = 'response-wrapping';
const RESPONSE_WRAPPING_POLICY_TEXT = `path "cubbyhole/response" {
    capabilities = ["create", "read"]
}

path "sys/wrapping/unwrap" {
    capabilities = ["update"]
}
`;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.@-]{0,127}$/;
const OLD_STYLE: Record<string, Capability[]> = {
  deny: ['deny'],
  read: ['read', 'list'],
  write: ['create', 'read', 'update', 'delete', 'list'],
  sudo: ['create', 'read', 'update', 'delete', 'list', 'sudo'],
};

/** Checks a policy name; returns it lowercased (names are case-insensitive, as in Vault). */
export function policyName(name: string): string {
  if (!NAME.test(name)) throw new Error(`policy name "${name}" is invalid: use letters, digits, ".", "_", "-", "@", at most 128`);
  return name.toLowerCase();
}

/** Parses policy text (HCL or JSON) into path rules; throws a message that names the problem. */
export function parsePolicy(text: string): PathRule[] {
  let doc: HclObject;
  const trimmed = text.trim();
  if (trimmed.startsWith('{')) {
    try {
      doc = JSON.parse(trimmed) as HclObject;
    } catch (err) {
      throw new Error(`policy is not valid JSON: ${(err as Error).message}`);
    }
  } else {
    doc = parseHcl(text, {
      dialect: 'lenient',
      document: 'the policy',
      error: (line, message) => new Error(`policy syntax error at line ${line}: ${message}`),
    });
  }
  for (const key of Object.keys(doc)) if (key !== 'path' && key !== 'name') throw new Error(`policy: unknown top-level key "${key}"`);
  const paths = doc.path;
  if (paths === undefined) return [];
  if (!isObject(paths)) throw new Error('policy: "path" must be blocks such as path "secret/*" { capabilities = ["read"] }');
  const rules: PathRule[] = [];
  for (const [path, body] of Object.entries(paths)) {
    checkPattern(path);
    if (!isObject(body)) throw new Error(`policy path "${path}": expected a block`);
    const caps = new Set<Capability>();
    for (const [key, value] of Object.entries(body)) {
      if (key === 'capabilities') {
        if (!Array.isArray(value)) throw new Error(`policy path "${path}": capabilities must be a list`);
        for (const c of value) {
          if (typeof c !== 'string' || !CAPABILITIES.includes(c.toLowerCase() as Capability)) {
            throw new Error(`policy path "${path}": invalid capability "${String(c)}"; use ${CAPABILITIES.join(', ')}`);
          }
          caps.add(c.toLowerCase() as Capability);
        }
      } else if (key === 'policy') {
        const old = typeof value === 'string' ? OLD_STYLE[value] : undefined;
        if (!old) throw new Error(`policy path "${path}": policy must be one of deny, read, write, sudo`);
        old.forEach((c) => caps.add(c));
      } else if (!['allowed_parameters', 'denied_parameters', 'required_parameters', 'min_wrapping_ttl', 'max_wrapping_ttl', 'control_group', 'mfa_methods'].includes(key)) {
        throw new Error(`policy path "${path}": unknown key "${key}"`);
      }
    }
    const parameters = parseParameterRules(path, body);
    rules.push({ path, capabilities: caps.has('deny') ? ['deny'] : [...caps], ...(parameters ? { parameters } : {}) });
  }
  return rules;
}

function isObject(v: HclValue | undefined): v is HclObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function checkPattern(path: string): void {
  const star = path.indexOf('*');
  if (star >= 0 && star !== path.length - 1) throw new Error(`policy path "${path}": "*" is only allowed at the end of a path`);
  if (path.split('/').some((seg) => seg.includes('+') && seg !== '+')) {
    throw new Error(`policy path "${path}": "+" must be a whole path segment, as in "secret/+/config"`);
  }
}

/** One compiled rule: a pattern and its merged capabilities. */
interface CompiledRule {
  readonly pattern: string;
  readonly regex: RegExp;
  readonly caps: ReadonlySet<Capability>;
  readonly parameters?: ParameterRules;
  readonly firstWildcard: number;
  readonly glob: boolean;
  readonly plusCount: number;
}

/**
 * The access control list of a token: its policies merged. A request path is governed by exactly
 * one rule, the most specific that matches (Vault's priority: exact, then the later first wildcard,
 * no trailing glob, fewer `+`, longer, lexically larger); deny wins within it.
 */
export class Acl {
  readonly root: boolean;
  private readonly rules: CompiledRule[];

  constructor(policies: readonly StoredPolicy[], root = false) {
    this.root = root;
    const merged = new Map<string, { caps: Set<Capability>; parameters?: ParameterRules }>();
    for (const p of policies) {
      for (const r of p.rules) {
        const m = merged.get(r.path) ?? { caps: new Set<Capability>() };
        r.capabilities.forEach((c) => m.caps.add(c));
        m.parameters = mergeParameterRules(m.parameters, r.parameters);
        merged.set(r.path, m);
      }
    }
    this.rules = [...merged].map(([pattern, m]) => compile(pattern, m.caps.has('deny') ? new Set<Capability>(['deny']) : m.caps, m.parameters));
  }

  /** The capabilities on a path (`root` for the root token; `deny` when none). */
  capabilities(path: string): string[] {
    if (this.root) return ['root'];
    const rule = this.match(path);
    if (!rule || rule.caps.has('deny') || rule.caps.size === 0) return ['deny'];
    return [...rule.caps].sort();
  }

  /**
   * Whether the capability is granted on the path. With `body`, a create or update also has to pass
   * the governing rule's parameter constraints.
   */
  allows(path: string, capability: Capability, body?: unknown): boolean {
    if (this.root) return true;
    const rule = this.match(path);
    if (!rule || rule.caps.has('deny') || !rule.caps.has(capability)) return false;
    const checked = body !== undefined && (capability === 'create' || capability === 'update' || capability === 'patch') && rule.parameters;
    return !checked || parametersAllowed(rule.parameters!, body);
  }

  /**
   * Vault's hasMountAccess (vault/logical_system.go): some capability other than `deny` on a mount's
   * path (`secret/`, `auth/jwt/`) or on any path a rule could reach under it.
   */
  hasMountAccess(mountPath: string): boolean {
    if (this.root || !this.capabilities(mountPath).includes('deny')) return true;
    const mount = mountPath.split('/').filter((s) => s !== '');
    return this.rules.some((r) => !r.caps.has('deny') && r.caps.size > 0 && reachesUnder(r.pattern, mount));
  }

  private match(path: string): CompiledRule | undefined {
    let best: CompiledRule | undefined;
    for (const rule of this.rules) {
      if (!rule.regex.test(path)) continue;
      if (!best || higher(rule, best)) best = rule;
    }
    return best;
  }
}

/** Whether a rule's pattern can match a path under a mount's segments (`+` and a final `*` included). */
function reachesUnder(pattern: string, mount: readonly string[]): boolean {
  const segments = pattern.split('/');
  for (let i = 0; i < mount.length; i++) {
    const seg = segments[i];
    if (seg === undefined) return false;
    if (i === segments.length - 1 && seg.endsWith('*')) return mount[i].startsWith(seg.slice(0, -1));
    if (seg !== '+' && seg !== mount[i]) return false;
  }
  // `secret` alone names no path under `secret/`.
  return segments.length > mount.length;
}

function compile(pattern: string, caps: Set<Capability>, parameters?: ParameterRules): CompiledRule {
  const glob = pattern.endsWith('*');
  const body = glob ? pattern.slice(0, -1) : pattern;
  const source = body
    .split('/')
    .map((seg) => (seg === '+' ? '[^/]*' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  // checkPattern allows "+" only as a whole segment, so its first index is the first segment wildcard.
  const plusAt = pattern.indexOf('+');
  return {
    pattern,
    regex: new RegExp(`^${source}${glob ? '.*' : ''}$`, 's'),
    caps,
    ...(parameters ? { parameters } : {}),
    firstWildcard: Math.min(plusAt < 0 ? Infinity : plusAt, glob ? pattern.length - 1 : Infinity),
    glob,
    plusCount: pattern.split('/').filter((s) => s === '+').length,
  };
}

/** Vault's rule priority: true when a is more specific than b. */
function higher(a: CompiledRule, b: CompiledRule): boolean {
  if (a.firstWildcard !== b.firstWildcard) return a.firstWildcard > b.firstWildcard;
  if (a.glob !== b.glob) return !a.glob;
  if (a.plusCount !== b.plusCount) return a.plusCount < b.plusCount;
  if (a.pattern.length !== b.pattern.length) return a.pattern.length > b.pattern.length;
  return a.pattern > b.pattern;
}

/**
 * Rules parsed again from the text: policies stored before parameter constraints were enforced
 * kept only paths and capabilities. Text that no longer parses keeps its stored rules.
 */
function withParameters(p: StoredPolicy): StoredPolicy {
  try {
    return { ...p, rules: parsePolicy(p.text) };
  } catch {
    return p;
  }
}

const DEFAULT_POLICY: StoredPolicy = { name: 'default', text: DEFAULT_POLICY_TEXT, rules: parsePolicy(DEFAULT_POLICY_TEXT) };
const WRAPPING_POLICY: StoredPolicy = {
  name: RESPONSE_WRAPPING_POLICY,
  text: RESPONSE_WRAPPING_POLICY_TEXT,
  rules: parsePolicy(RESPONSE_WRAPPING_POLICY_TEXT),
};
const ACL_CACHE_SIZE = 1000;

/**
 * Policies in storage (sealed), `default` built in until it is written, `root` always. The ACL of
 * a set of policies is compiled once per version of the secrets configuration (see stamp.ts): a
 * request reads the change stamp, not the policy rows, so a change by another server applies at once.
 */
export class PolicyStore {
  private readonly acls = new Map<string, Acl>();
  /** The stamp last read: when it changes, the ACLs compiled under earlier ones are dropped. */
  private stamp?: string;

  constructor(private readonly barrier: Barrier) {}

  async get(db: Db, name: string): Promise<StoredPolicy | undefined> {
    if (name === 'root') return { name: 'root', text: '', rules: [] };
    if (name === RESPONSE_WRAPPING_POLICY) return WRAPPING_POLICY;
    const row = await db.get<{ sealed: string }>('SELECT sealed FROM secrets_policies WHERE name = ?', [name]);
    if (row) return this.barrier.openJson<StoredPolicy>(db, row.sealed, `policy:${name}`);
    return name === 'default' ? DEFAULT_POLICY : undefined;
  }

  async put(db: Db, name: string, text: string): Promise<void> {
    const policy: StoredPolicy = { name, text, rules: parsePolicy(text) };
    const sealed = await this.barrier.sealJson(db, policy, `policy:${name}`);
    await db.run('INSERT INTO secrets_policies (name, sealed) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET sealed = excluded.sealed', [
      name,
      sealed,
    ]);
    await bumpConfigStamp(db);
  }

  async delete(db: Db, name: string): Promise<void> {
    await db.run('DELETE FROM secrets_policies WHERE name = ?', [name]);
    await bumpConfigStamp(db);
  }

  async names(db: Db): Promise<string[]> {
    const rows = await db.all<{ name: string }>('SELECT name FROM secrets_policies ORDER BY name');
    const names = new Set(rows.map((r) => r.name));
    names.add('default');
    names.add('root');
    return [...names].sort();
  }

  /** The ACL of a set of policy names (unknown names grant nothing). */
  async acl(db: Db, names: readonly string[]): Promise<Acl> {
    if (names.includes('root')) return new Acl([], true);
    // A wrapping token's ACL is the built-in policy alone, without a read of the table.
    if (names.length === 1 && names[0] === RESPONSE_WRAPPING_POLICY) return new Acl([WRAPPING_POLICY]);
    const stamp = await configStamp(db);
    if (stamp !== this.stamp) {
      this.acls.clear();
      this.stamp = stamp;
    }
    // The stamp is part of the key: a request that read an older stamp (another connection's
    // transaction on PostgreSQL) stores its ACL where no newer request looks.
    const key = `${stamp}\n${names.join('\n')}`;
    let acl = this.acls.get(key);
    if (!acl) {
      const policies: StoredPolicy[] = [];
      for (const name of names) {
        const row = await db.get<{ sealed: string }>('SELECT sealed FROM secrets_policies WHERE name = ?', [name]);
        if (row) policies.push(withParameters(await this.barrier.openJson<StoredPolicy>(db, row.sealed, `policy:${name}`)));
        else if (name === 'default') policies.push(DEFAULT_POLICY);
      }
      acl = new Acl(policies);
      if (this.acls.size >= ACL_CACHE_SIZE) this.acls.delete(this.acls.keys().next().value!);
      this.acls.set(key, acl);
    }
    return acl;
  }
}
