/**
 * The public ACL rule language, in HCL and in JSON, for the resources the catalog uses. Both forms
 * become the same generic object first (`key_prefix "a/" { policy = "read" }` and
 * `{"key_prefix": {"a/": {"policy": "read"}}}` are one thing), which `interpretRules` then checks.
 *
 * The HCL subset is parsed by ../../hcl (its strict dialect).
 */
import { parseHcl } from '../../hcl';
import { parseJsonText } from '../../http/json-body';

export type Access = 'read' | 'write' | 'deny' | 'list';

/** Resources whose rule is a single value (`acl = "write"`). */
export const FLAT_RESOURCES = ['acl', 'operator', 'keyring', 'mesh', 'peering'] as const;
export type FlatResource = (typeof FLAT_RESOURCES)[number];

/** Resources whose rules name a segment, exactly (`key "a"`) or by prefix (`key_prefix "a/"`). */
export const SEGMENTED_RESOURCES = ['agent', 'event', 'key', 'node', 'query', 'service', 'session', 'namespace'] as const;
export type SegmentedResource = (typeof SEGMENTED_RESOURCES)[number];

export interface SegmentRule {
  readonly resource: SegmentedResource;
  readonly segment: string;
  readonly prefix: boolean;
  readonly access: Access;
}

/** Rules of one scope: the policy's own namespace, or one `namespace`/`namespace_prefix` block. */
export interface RuleSet {
  readonly flat: Partial<Record<FlatResource, Access>>;
  readonly segments: readonly SegmentRule[];
}

export interface ParsedRules extends RuleSet {
  /** `namespace "x" { ... }` (prefix false) and `namespace_prefix "x" { ... }` blocks. */
  readonly namespaces: readonly { readonly name: string; readonly prefix: boolean; readonly rules: RuleSet }[];
}

export class RulesError extends Error {}

/** Parses rules written in HCL or JSON; throws RulesError with a message a user can act on. */
export function parseRules(source: string): ParsedRules {
  const text = source.trim();
  if (text === '') return { flat: {}, segments: [], namespaces: [] };
  let generic: Record<string, unknown>;
  if (text.startsWith('{')) {
    try {
      generic = parseJsonText(text, (reason) => new RulesError(`Failed to parse ACL rules: invalid JSON: ${reason}`)) as Record<string, unknown>;
    } catch (err) {
      if (err instanceof RulesError) throw err;
      throw new RulesError(`Failed to parse ACL rules: invalid JSON: ${(err as Error).message}`);
    }
    if (!isObject(generic)) throw new RulesError('Failed to parse ACL rules: JSON rules must be an object');
  } else {
    generic = parseHcl(text, {
      dialect: 'strict',
      document: 'the rules',
      error: (line, message) => new RulesError(`Failed to parse ACL rules: line ${line}: ${message}`),
    });
  }
  return interpretRules(generic);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// The generic object to rules

const ACCESS_VALUES: Record<string, readonly Access[]> = {
  key: ['read', 'write', 'deny', 'list'],
};
const DEFAULT_ACCESS: readonly Access[] = ['read', 'write', 'deny'];
/** Attributes that segment rules may carry besides `policy` (accepted, not enforced here). */
const EXTRA_ATTRIBUTES: Record<string, readonly string[]> = { service: ['intentions'] };

function interpretRules(generic: Record<string, unknown>): ParsedRules {
  const namespaces: { name: string; prefix: boolean; rules: RuleSet }[] = [];
  const own = interpretScope(generic, true, namespaces);
  return { ...own, namespaces };
}

function interpretScope(
  generic: Record<string, unknown>,
  top: boolean,
  namespaces: { name: string; prefix: boolean; rules: RuleSet }[],
): RuleSet & { policy?: Access } {
  const flat: Partial<Record<FlatResource, Access>> = {};
  const segments: SegmentRule[] = [];
  let policy: Access | undefined;
  for (const [key, value] of Object.entries(generic)) {
    if ((FLAT_RESOURCES as readonly string[]).includes(key)) {
      flat[key as FlatResource] = accessOf(key, value, DEFAULT_ACCESS);
      continue;
    }
    if (!top && key === 'policy') {
      policy = accessOf('namespace', value, DEFAULT_ACCESS);
      continue;
    }
    const prefix = key.endsWith('_prefix');
    const resource = prefix ? key.slice(0, -'_prefix'.length) : key;
    if (resource === 'namespace') {
      if (!top) throw new RulesError(`Failed to parse ACL rules: "${key}" blocks cannot be nested in a namespace block`);
      for (const [name, body] of entries(key, value)) {
        const scope = interpretScope(body, false, namespaces);
        namespaces.push({ name, prefix, rules: { flat: scope.flat, segments: scope.segments } });
        if (scope.policy) segments.push({ resource: 'namespace', segment: name, prefix, access: scope.policy });
      }
      continue;
    }
    if (!(SEGMENTED_RESOURCES as readonly string[]).includes(resource)) {
      throw new RulesError(`Failed to parse ACL rules: unknown resource "${key}"`);
    }
    for (const [segment, body] of entries(key, value)) {
      const allowed = ['policy', ...(EXTRA_ATTRIBUTES[resource] ?? [])];
      for (const attr of Object.keys(body)) {
        if (!allowed.includes(attr)) throw new RulesError(`Failed to parse ACL rules: ${key} "${segment}": unknown attribute "${attr}"`);
      }
      if (body.policy === undefined) throw new RulesError(`Failed to parse ACL rules: ${key} "${segment}": missing policy`);
      const access = accessOf(key, body.policy, ACCESS_VALUES[resource] ?? DEFAULT_ACCESS);
      segments.push({ resource: resource as SegmentedResource, segment, prefix, access });
    }
  }
  return { flat, segments, policy };
}

/** `key "a" {...}` as [["a", {...}], ...]; JSON may also give a list of such objects. */
function entries(key: string, value: unknown): [string, Record<string, unknown>][] {
  const objects = Array.isArray(value) ? value : [value];
  const out: [string, Record<string, unknown>][] = [];
  for (const object of objects) {
    if (!isObject(object)) throw new RulesError(`Failed to parse ACL rules: "${key}" must be a block with a name, e.g. ${key} "name" { policy = "read" }`);
    for (const [name, body] of Object.entries(object)) {
      if (!isObject(body)) throw new RulesError(`Failed to parse ACL rules: ${key} "${name}" must be a block, e.g. ${key} "${name}" { policy = "read" }`);
      out.push([name, body]);
    }
  }
  return out;
}

function accessOf(key: string, value: unknown, allowed: readonly Access[]): Access {
  if (typeof value !== 'string' || !allowed.includes(value as Access)) {
    throw new RulesError(`Invalid ${key} policy: ${JSON.stringify(value)}; use one of ${allowed.map((a) => `"${a}"`).join(', ')}`);
  }
  return value as Access;
}
