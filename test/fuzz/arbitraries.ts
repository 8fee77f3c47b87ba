import fc from 'fast-check';
import { z } from 'zod';
import { MAX_JSON_DEPTH, MAX_JSON_WIDTH } from '../../src/engine/http/json-body';

/** A JSON Schema as zod's `toJSONSchema` writes it (the subset the generators read). */
interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly additionalProperties?: JsonSchema | boolean;
  readonly items?: JsonSchema;
  readonly prefixItems?: readonly JsonSchema[];
  readonly enum?: readonly unknown[];
  readonly const?: unknown;
  readonly anyOf?: readonly JsonSchema[];
  readonly oneOf?: readonly JsonSchema[];
  readonly allOf?: readonly JsonSchema[];
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly pattern?: string;
  readonly format?: string;
}

const LONG = 'x'.repeat(70_000);

/**
 * Strings a hostile client sends: path traversal (plain and encoded), SQL and glob metacharacters,
 * numbers the parsers trip on, control characters, lone UTF-16 surrogates, right-to-left marks,
 * template syntax, and strings longer than any limit.
 */
export const HOSTILE_STRINGS: readonly string[] = [
  '',
  ' ',
  '..',
  '../../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e%2f',
  '/absolute/path',
  'a/../../b',
  "' OR '1'='1' --",
  '"; DROP TABLE tokens; --',
  '%',
  '_',
  '*',
  '**/*',
  '?',
  '[a-z]',
  '\\',
  '-0',
  'NaN',
  'Infinity',
  '-1',
  '1e309',
  '9'.repeat(400),
  '0x1f',
  'null',
  'true',
  'a\u0000b',
  '\r\nX-Injected: 1',
  '\ud800',
  'x\udfffy',
  '\u202e\u0647',
  '🚀'.repeat(10),
  '{{.Name}}',
  '${jndi:ldap://127.0.0.1:1/a}',
  '<script>alert(1)</script>',
  'x'.repeat(1025),
  LONG,
];

/** Numbers past every boundary: -0, beyond 2^53 and 2^64, fractions where integers are due. */
export const HOSTILE_NUMBERS: readonly number[] = [0, -0, -1, 0.5, 2 ** 31, 2 ** 53 + 2, 2 ** 64, 1e308, -1e308, Number.MAX_SAFE_INTEGER];

function nested(depth: number, leaf: unknown, kind: 'array' | 'object'): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = kind === 'array' ? [v] : { a: v, n: null };
  return v;
}

/** Values at and past the limits of a request body: depth (nulls at every level, for the pass that drops them) and width. */
const LIMIT_VALUES: readonly unknown[] = [
  nested(300, 'deep', 'array'),
  nested(300, 'deep', 'object'),
  nested(MAX_JSON_DEPTH - 3, 'deep', 'object'),
  nested(MAX_JSON_DEPTH + 1, 'deep', 'object'),
  Array.from({ length: 5000 }, (_, i) => i),
  Array.from({ length: MAX_JSON_WIDTH + 1 }, (_, i) => `c${i}`),
  Object.fromEntries(Array.from({ length: MAX_JSON_WIDTH + 1 }, (_, i) => [`k${i}`, i])),
];

/** Any hostile JSON value: the wrong type for whatever field it replaces. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_NUMBERS) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(true, false, null, [], {}, [null], { '': '' }, { __proto__x: 1 }) },
  { weight: 1, arbitrary: fc.constantFrom(...LIMIT_VALUES) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

const typesOf = (s: JsonSchema): string[] => (s.type === undefined ? [] : Array.isArray(s.type) ? [...s.type] : [s.type as string]);

/** A value that a schema accepts (mostly: patterns and refinements zod checks in code are not all expressible). */
function validArb(s: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (s.enum) return fc.constantFrom(...s.enum);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives?.length) return fc.oneof(...alternatives.map((a) => schemaArb(a, depth)));
  if (s.allOf?.length) return schemaArb(s.allOf[0], depth);
  const types = typesOf(s);
  if (types.length > 1) return fc.oneof(...types.map((type) => validArb({ ...s, type }, depth)));
  switch (types[0]) {
    case 'object':
      return objectArb(s, depth);
    case 'array': {
      const item = s.items ?? {};
      const max = Math.min(s.maxItems ?? 4, 4);
      if (s.prefixItems) return fc.tuple(...s.prefixItems.map((p) => schemaArb(p, depth + 1)));
      return fc.array(schemaArb(item, depth + 1), { minLength: Math.min(s.minItems ?? 0, max), maxLength: max });
    }
    case 'string':
      return stringArb(s);
    case 'integer':
      return fc.integer({ min: Math.max(s.minimum ?? -1000, -(2 ** 31)), max: Math.min(s.maximum ?? 100_000, 2 ** 31) });
    case 'number':
      return fc.double({ min: s.minimum ?? -1e6, max: s.maximum ?? 1e6, noNaN: true });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function stringArb(s: JsonSchema): fc.Arbitrary<string> {
  // URLs point at a closed loopback port: a fuzzed provider or database address must fail fast, offline.
  if (s.format === 'uri' || s.format === 'url') return fc.constantFrom('http://127.0.0.1:1/', 'ldap://127.0.0.1:1', 'postgres://u:p@127.0.0.1:1/db');
  if (s.pattern) {
    try {
      return fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= 200);
    } catch {
      // a pattern JavaScript cannot compile: plain strings below
    }
  }
  const min = s.minLength ?? 0;
  const max = Math.max(min, Math.min(s.maxLength ?? 24, 64));
  return fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength: min, maxLength: max }) },
    { weight: 1, arbitrary: fc.string({ minLength: min, maxLength: max, unit: 'grapheme' }) },
    // One past the limit: the boundary a validator must hold.
    { weight: 1, arbitrary: fc.constant('y'.repeat((s.maxLength ?? 1024) + 1)) },
  );
}

function objectArb(s: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  const props = Object.entries(s.properties ?? {});
  const required = new Set(s.required ?? []);
  if (props.length === 0) return fc.dictionary(fc.string({ maxLength: 8 }), schemaArb(typeof s.additionalProperties === 'object' ? s.additionalProperties : {}, depth + 1), { maxKeys: 3 });
  const record = fc.record(Object.fromEntries(props.map(([k, v]) => [k, schemaArb(v, depth + 1)])), {
    requiredKeys: props.map(([k]) => k).filter((k) => required.has(k)),
  });
  // Sometimes a field the schema does not know, or a known one dropped although required.
  return fc.tuple(record, fc.option(fc.tuple(fc.constantFrom('unknown_field', '__proto__', 'constructor', ''), hostileValue), { freq: 6 })).map(([r, extra]) =>
    extra ? Object.defineProperty({ ...(r as object) }, extra[0], { value: extra[1], enumerable: true, writable: true, configurable: true }) : r,
  );
}

/** Mostly what the schema wants, sometimes a hostile value in its place, at every depth. */
function schemaArb(s: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  if (depth > 4) return hostileValue;
  return fc.oneof({ weight: 5, arbitrary: validArb(s, depth) }, { weight: 1, arbitrary: hostileValue });
}

/** The input schema of a route part as JSON Schema (zod 4: input side, transforms as "any"). */
export function jsonSchemaOf(schema: z.ZodType | undefined): JsonSchema {
  if (!schema) return {};
  return z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
}

/** Inputs for one zod schema: valid-looking values with hostile values mixed in at every depth. */
export function inputArb(schema: z.ZodType | undefined): fc.Arbitrary<unknown> {
  return schemaArb(jsonSchemaOf(schema), 0);
}

/** Field names and values of an object schema as query-string pairs (strings only, as a URL carries them). */
export function queryArb(schema: z.ZodType | undefined): fc.Arbitrary<Record<string, string>> {
  const props = Object.keys(jsonSchemaOf(schema).properties ?? {});
  const value = fc.oneof(
    { weight: 30, arbitrary: fc.string({ maxLength: 12 }) },
    { weight: 20, arbitrary: fc.constantFrom(...HOSTILE_STRINGS.filter((v) => v.length < 2000)) },
    { weight: 10, arbitrary: fc.constantFrom('1', '0', 'true', '') },
    // A URL longer than Node's 16 KiB for the request line and headers: its 431 (no body for HEAD).
    { weight: 1, arbitrary: fc.constant('u'.repeat(20_000)) },
  );
  if (props.length === 0) return fc.dictionary(fc.constantFrom('x', 'list', 'filter', 'ns'), value, { maxKeys: 2 });
  return fc.dictionary(fc.constantFrom(...props), value, { maxKeys: Math.min(props.length, 4) });
}

/**
 * A path segment: a plausible name, a hostile one, or a name that exists (built-in `default` and
 * `root`, and `fuzz`, which earlier writes of the run create), so that reads, updates and deletes
 * also reach their handlers past the 404.
 */
export const segmentArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('fuzz', 'default', 'root') },
  { weight: 3, arbitrary: fc.stringMatching(/^[a-z][a-z0-9-]{0,11}$/) },
  { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 16 }) },
  { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_STRINGS.filter((v) => v !== '' && v.length < 2000)) },
);

/**
 * A path segment in a URL. Encodable text is percent-encoded; a lone surrogate (which UTF-8 cannot
 * carry) goes as the bytes of its 3-byte form, which are invalid UTF-8; some values go raw, so that
 * `../` and `%2e%2e` reach the router as a client could send them.
 */
export function encodeSegment(value: string, raw: boolean): string {
  if (raw) return value.replace(/[^\x21-\x7e]/gu, (c) => encodeChar(c));
  return [...value].map((c) => (/^[A-Za-z0-9._~-]$/.test(c) ? c : encodeChar(c))).join('');
}

function encodeChar(c: string): string {
  try {
    return encodeURIComponent(c);
  } catch {
    const code = c.charCodeAt(0);
    return [0xe0 + Math.floor(code / 4096), 0x80 + (Math.floor(code / 64) % 64), 0x80 + (code % 64)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
  }
}

/** How the body travels: JSON of the generated value, or bytes no parser should accept. */
export type BodyShape = { kind: 'json'; value: unknown } | { kind: 'raw'; bytes: Buffer; contentType?: string };

/**
 * Every string of a value replaced by one hostile string: whichever field cannot take it is found at
 * once. A list longer than a schema's (a width test of LIMIT_VALUES) stays as it is: 10,001 copies of
 * a 70,000-character string would not fit in one JSON text.
 */
function everyString(value: unknown, s: string): unknown {
  if (typeof value === 'string') return s;
  if (Array.isArray(value)) return value.length > 64 ? value : value.map((v) => everyString(v, s));
  if (value && typeof value === 'object') {
    const entries = Object.entries(value);
    return entries.length > 64 ? value : Object.fromEntries(entries.map(([k, v]) => [k, everyString(v, s)]));
  }
  return value;
}

export function bodyArb(schema: z.ZodType | undefined): fc.Arbitrary<BodyShape> {
  return fc.oneof(
    { weight: 6, arbitrary: inputArb(schema).map((value): BodyShape => ({ kind: 'json', value })) },
    {
      weight: 2,
      arbitrary: fc.tuple(validArb(jsonSchemaOf(schema), 0), fc.constantFrom(...HOSTILE_STRINGS)).map(([v, h]): BodyShape => ({ kind: 'json', value: everyString(v, h) })),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom<BodyShape>(
        { kind: 'raw', bytes: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc3, 0x28, 0x22, 0x7d]) }, // {"a":"<invalid UTF-8>"}
        { kind: 'raw', bytes: Buffer.from('{"a":') },
        { kind: 'raw', bytes: Buffer.from('{"a":1,"a":2}') },
        { kind: 'raw', bytes: Buffer.from('[1,2,3]') },
        { kind: 'raw', bytes: Buffer.from('"just a string"') },
        { kind: 'raw', bytes: Buffer.from('a=1&b=%ff'), contentType: 'application/x-www-form-urlencoded' },
        { kind: 'raw', bytes: Buffer.from('<xml/>'), contentType: 'application/xml' },
        { kind: 'raw', bytes: Buffer.from('{"a":1}'), contentType: 'application/json; charset=latin1' },
        { kind: 'raw', bytes: Buffer.from('{"a":1}'), contentType: 'multipart/form-data; boundary=x' },
        { kind: 'raw', bytes: Buffer.alloc(1024 * 1024 + 10, 0x20) },
        // Depth and width past the limits, where only the bytes can be checked (400,000 levels fit in 1 MiB).
        { kind: 'raw', bytes: Buffer.from(`${'['.repeat(400_000)}${']'.repeat(400_000)}`) },
        { kind: 'raw', bytes: Buffer.from(`${'{"a":'.repeat(4_000)}null${'}'.repeat(4_000)}`) },
        { kind: 'raw', bytes: Buffer.from(`{"a":${'{"a":'.repeat(4_000)}null${'}'.repeat(4_000)}}`), contentType: 'application/x-www-form-urlencoded' },
        { kind: 'raw', bytes: Buffer.from(`[${Array(40_000).fill('0').join(',')}]`) },
        // Encodings: a byte-order mark, UTF-16, an overlong "/", a surrogate in CESU-8, a charset that is not UTF-8.
        { kind: 'raw', bytes: Buffer.from('\ufeff{"a":1}') },
        { kind: 'raw', bytes: Buffer.from('{"a":"b"}', 'utf16le'), contentType: 'application/json; charset=utf-16' },
        { kind: 'raw', bytes: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc0, 0xaf, 0x22, 0x7d]) },
        { kind: 'raw', bytes: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]) },
      ),
    },
  );
}

/** Request headers a hostile client adds: token look-alikes, namespaces, ranges, odd encodings. */
export const headerArb: fc.Arbitrary<Record<string, string>> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<Record<string, string>>(
      { 'x-vault-namespace': '../admin' },
      { 'x-vault-wrap-ttl': '-1' },
      { 'x-consul-namespace': '*' },
      { 'x-catalog-namespace': "' OR 1=1" },
      { range: 'bytes=999999999999999999-' },
      { range: 'bytes=-0' },
      { 'if-none-match': '*' },
      { 'accept-encoding': 'gzip;q=NaN' },
      { 'x-forwarded-for': '::ffff:999.1.1.1' },
      { 'x-http-method-override': 'DELETE' },
      { 'x-filler': 'h'.repeat(20_000) },
      { 'content-encoding': 'gzip' },
      { authorization: 'Bearer' },
      { authorization: 'Basic Og==' },
    ),
  },
);
