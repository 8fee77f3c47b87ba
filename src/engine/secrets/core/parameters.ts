import type { HclValue } from '../../hcl';

/**
 * A policy rule's parameter constraints (`allowed_parameters`, `denied_parameters`,
 * `required_parameters`), checked on create and update requests against the request body as
 * Vault's ACL does: keys are case-insensitive; an empty value list means any value; string values
 * may be globs (`foo*`, `*bar`, `*mid*`); a list (or comma-separated string) value is allowed when
 * every element is, and denied when any element is.
 */
export interface ParameterRules {
  readonly allowed?: Readonly<Record<string, readonly HclValue[]>>;
  readonly denied?: Readonly<Record<string, readonly HclValue[]>>;
  readonly required?: readonly string[];
}

/** Own keys only: a parameter named `constructor` is not a prototype's. */
const own = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** Parses the three keys of a policy path block; throws a message naming the path and key. */
export function parseParameterRules(path: string, body: Record<string, HclValue>): ParameterRules | undefined {
  const valueMap = (key: 'allowed_parameters' | 'denied_parameters') => {
    const v = body[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'object' || v === null || Array.isArray(v)) {
      throw new Error(`policy path "${path}": ${key} must be a map of parameter names to lists of values`);
    }
    const out: Record<string, HclValue[]> = {};
    for (const [name, values] of Object.entries(v)) {
      if (!Array.isArray(values)) throw new Error(`policy path "${path}": ${key}."${name}" must be a list of values ([] for any)`);
      const k = name.toLowerCase();
      out[k] = [...(own(out, k) ? out[k] : []), ...values];
    }
    return out;
  };
  const allowed = valueMap('allowed_parameters');
  const denied = valueMap('denied_parameters');
  const req = body.required_parameters;
  if (req !== undefined && (!Array.isArray(req) || req.some((r) => typeof r !== 'string'))) {
    throw new Error(`policy path "${path}": required_parameters must be a list of parameter names`);
  }
  const required = (req as string[] | undefined)?.map((r) => r.toLowerCase());
  if (!allowed && !denied && !required) return undefined;
  return { ...(allowed ? { allowed } : {}), ...(denied ? { denied } : {}), ...(required ? { required } : {}) };
}

/** Vault's merge of two policies' rules for one path: values append, an empty list (any value) wins. */
export function mergeParameterRules(a: ParameterRules | undefined, b: ParameterRules | undefined): ParameterRules | undefined {
  if (!a) return b;
  if (!b) return a;
  const maps = (x?: Readonly<Record<string, readonly HclValue[]>>, y?: Readonly<Record<string, readonly HclValue[]>>) => {
    if (!x) return y;
    if (!y) return x;
    const out: Record<string, readonly HclValue[]> = { ...x };
    for (const [k, v] of Object.entries(y)) out[k] = own(out, k) ? (out[k].length === 0 || v.length === 0 ? [] : [...out[k], ...v]) : v;
    return out;
  };
  const allowed = maps(a.allowed, b.allowed);
  const denied = maps(a.denied, b.denied);
  const required = a.required || b.required ? [...new Set([...(a.required ?? []), ...(b.required ?? [])])] : undefined;
  return { ...(allowed ? { allowed } : {}), ...(denied ? { denied } : {}), ...(required ? { required } : {}) };
}

/** Vault's strutil.GlobbedStringsMatch: a leading and/or trailing `*`. */
function globbed(item: string, val: string): boolean {
  if (item.length < 2) return val === item;
  const pre = item.startsWith('*');
  const suf = item.endsWith('*');
  if (pre && suf) return val.includes(item.slice(1, -1));
  if (pre) return val.endsWith(item.slice(1));
  if (suf) return val.startsWith(item.slice(0, -1));
  return val === item;
}

function inList(v: unknown, list: readonly HclValue[]): boolean {
  return list.some((el) => {
    if (el === null || v === null || v === undefined) return el === (v ?? null);
    if (typeof el === 'string') return typeof v === 'string' && globbed(el, v);
    return JSON.stringify(el) === JSON.stringify(v);
  });
}

/** The elements of a list value, or of a comma-separated string (a list field sent as one string). */
function elements(v: unknown): unknown[] | undefined {
  if (Array.isArray(v)) return v;
  if (typeof v === 'string') return v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  return undefined;
}

function allowedValue(v: unknown, list: readonly HclValue[]): boolean {
  if (list.length === 0 || inList(v, list)) return true;
  const each = elements(v);
  return each !== undefined && each.every((e) => inList(e, list));
}

function deniedValue(v: unknown, list: readonly HclValue[]): boolean {
  if (list.length === 0 || inList(v, list)) return true;
  return elements(v)?.some((e) => inList(e, list)) === true;
}

/** Policy names are case-insensitive: compare them lowercased, so case cannot dodge a constraint. */
function normalized(key: string, v: unknown): unknown {
  if (key !== 'policies' && key !== 'token_policies') return v;
  if (typeof v === 'string') return v.toLowerCase();
  return Array.isArray(v) ? v.map((e) => (typeof e === 'string' ? e.toLowerCase() : e)) : v;
}

/** Whether a request body passes a rule's parameter constraints (Vault's ACL.AllowOperation). */
export function parametersAllowed(rules: ParameterRules, body: unknown): boolean {
  const data = new Map<string, unknown>();
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    for (const [k, v] of Object.entries(body)) data.set(k.toLowerCase(), normalized(k.toLowerCase(), v));
  }
  if (rules.required?.some((r) => !data.has(r))) return false;
  if (data.size === 0) return true;
  if (rules.denied) {
    if (own(rules.denied, '*')) return false;
    for (const [k, v] of data) if (own(rules.denied, k) && deniedValue(v, rules.denied[k])) return false;
  }
  const allowed = rules.allowed;
  if (!allowed || Object.keys(allowed).length === 0) return true;
  const allowAll = own(allowed, '*');
  if (allowAll && Object.keys(allowed).length === 1) return true;
  for (const [k, v] of data) {
    const list = own(allowed, k) ? allowed[k] : undefined;
    if (list === undefined && !allowAll) return false;
    if (list !== undefined && !allowedValue(v, list)) return false;
  }
  return true;
}
