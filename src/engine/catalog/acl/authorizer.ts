import { Access, FlatResource, ParsedRules, RuleSet, SegmentedResource, SegmentRule } from './rules';

export type Need = 'read' | 'list' | 'write';
export type Resource = FlatResource | SegmentedResource;

/** Rules of one policy, with the namespace its top-level rules apply in (that of the token linking it). */
export interface PolicyRules {
  readonly ns: string;
  readonly rules: ParsedRules;
}

/** Resources that are not namespaced: their rules apply whatever the namespace of the request. */
const GLOBAL: ReadonlySet<Resource> = new Set<Resource>(['operator', 'keyring', 'mesh', 'peering', 'node', 'agent', 'namespace']);

/** When two rules cover the same thing, the stronger wins: deny, then write, then list, then read. */
const PRECEDENCE: Record<Access, number> = { deny: 4, write: 3, list: 2, read: 1 };

function stronger(a: Access | undefined, b: Access): Access {
  return a === undefined || PRECEDENCE[b] > PRECEDENCE[a] ? b : a;
}

/** Whether a rule's access grants the need: write grants all, list grants read and list. */
function grants(access: Access, need: Need): boolean {
  if (access === 'write') return true;
  if (access === 'list') return need !== 'write';
  if (access === 'read') return need === 'read';
  return false;
}

interface Scope {
  /** The namespace (or, with prefix, the namespace prefix) the scope's rules apply to. */
  readonly ns: string;
  readonly prefix: boolean;
  readonly rules: RuleSet;
}

/**
 * The merged rules of a set of policies. A decision looks for an exact rule on the segment first,
 * then the longest matching prefix rule; rules of the same rank merge with deny > write > list > read.
 * Undefined means no rule decides, and the next layer (namespace defaults, then the default policy) does.
 */
export class Grants {
  private readonly scopes: Scope[] = [];

  constructor(policies: readonly PolicyRules[]) {
    for (const p of policies) {
      this.scopes.push({ ns: p.ns, prefix: false, rules: p.rules });
      // Namespace blocks only mean something in policies of the default namespace.
      if (p.ns === 'default') for (const n of p.rules.namespaces) this.scopes.push({ ns: n.name, prefix: n.prefix, rules: n.rules });
    }
  }

  private applicable(ns: string, resource: Resource): RuleSet[] {
    const global = GLOBAL.has(resource);
    return this.scopes
      .filter((s) => (global ? s.ns === 'default' || s.ns === ns : s.prefix ? ns.startsWith(s.ns) : s.ns === ns))
      .map((s) => s.rules);
  }

  access(ns: string, resource: Resource, segment?: string): Access | undefined {
    const sets = this.applicable(ns, resource);
    if (segment === undefined) {
      let result: Access | undefined;
      for (const set of sets) {
        const a = set.flat[resource as FlatResource];
        if (a) result = stronger(result, a);
      }
      return result;
    }
    let exact: Access | undefined;
    let best: { length: number; access: Access } | undefined;
    for (const set of sets) {
      for (const rule of set.segments) {
        if (rule.resource !== resource) continue;
        if (!rule.prefix && rule.segment === segment) exact = stronger(exact, rule.access);
        if (rule.prefix && segment.startsWith(rule.segment)) {
          if (!best || rule.segment.length > best.length) best = { length: rule.segment.length, access: rule.access };
          else if (rule.segment.length === best.length) best = { length: best.length, access: stronger(best.access, rule.access) };
        }
      }
    }
    return exact ?? best?.access;
  }

  /** Segment rules of a resource at or under a prefix (for recursive writes). */
  rulesUnder(ns: string, resource: Resource, prefix: string): SegmentRule[] {
    return this.applicable(ns, resource).flatMap((s) =>
      s.segments.filter((r) => r.resource === resource && r.segment.startsWith(prefix) && r.segment !== prefix),
    );
  }
}

/**
 * What a token may do: its own rules (policies, roles, identities), then the default policies and
 * roles of its namespace, then the server's default policy. `allow` as default never grants ACL
 * management (as with the public service): only rules or a management token do.
 */
export class Authorizer {
  static management(): Authorizer {
    return new Authorizer([], 'allow', true);
  }

  constructor(
    private readonly layers: readonly Grants[],
    private readonly defaultPolicy: 'allow' | 'deny',
    readonly isManagement = false,
  ) {}

  allowed(resource: Resource, need: Need, segment?: string, ns = 'default'): boolean {
    if (this.isManagement) return true;
    for (const layer of this.layers) {
      const access = layer.access(ns, resource, segment);
      if (access) return grants(access, need);
    }
    return this.defaultPolicy === 'allow' && resource !== 'acl';
  }

  /** Write on a prefix and on everything under it: no rule below it takes write away. */
  allowedPrefixWrite(resource: Resource, prefix: string, ns = 'default'): boolean {
    if (this.isManagement) return true;
    if (!this.allowed(resource, 'write', prefix, ns)) return false;
    return this.layers.every((layer) => layer.rulesUnder(ns, resource, prefix).every((r) => r.access === 'write'));
  }
}
