import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { Alphabet, ALPHABETS } from './alphabets';
import { FpeCodec, fpeCodec } from './fpe';
import { getObject, resolve } from './objects';
import { Role } from './roles';
import { sqlGet, sqlPut, Store } from './stores';
import { applyTemplate, formatValue, Template, TEMPLATES, templateSpans } from './templates';
import {
  convergentToken,
  expirationsOf,
  getInternal,
  indexExpirations,
  INTERNAL_STORE,
  newToken,
  openToken,
  parseMetadata,
  putInternal,
  sealToken,
  TokenRecord,
  tokenHash,
  valueHash,
} from './tokenization';
import { openingKey, sealingKey } from './tokenization-keys';
import { Transformation } from './transformations';
import { HangarError } from '../../../http/errors';
import { duration } from '../../core/durations';
import { badInput } from '../../core/request';
import { MountStore } from '../../core/store';
import { EngineRoute, MountEntry, SecretsRequest } from '../../core/types';
import { globMatch } from '../jwt/claims';

export type Op = 'encode' | 'decode' | 'validate' | 'lookup';

const Item = z.object({
  value: z.string().max(65536).nullish(),
  transformation: z.string().max(256).nullish(),
  tweak: z.string().max(64).nullish(),
  ttl: duration().nullish(),
  metadata: z.string().max(8192).nullish(),
  reference: z.string().max(1024).nullish(),
  decode_format: z.string().max(256).nullish(),
  /** Tokenization: an RFC3339 expiry instead of `ttl` on encode; on lookup also `any` (and a range). */
  expiration: z.string().max(64).nullish(),
  min_expiration: z.string().max(64).nullish(),
  max_expiration: z.string().max(64).nullish(),
});
export type Item = z.infer<typeof Item>;
const Body = Item.extend({ batch_input: z.array(Item).max(10_000, 'at most 10000 items').nullish() });
type Body = z.infer<typeof Body>;

/** A transformation with what encoding needs resolved (template, alphabet, stores). */
export interface Resolved {
  readonly name: string;
  readonly t: Transformation;
  readonly template?: Template;
  readonly alphabet?: string;
  readonly stores: ReadonlyArray<[string, Store | undefined]>;
  /** Whether the request's role is in its allowed_roles (globs matched once per request, not per item). */
  readonly allowed: boolean;
}

/** Everything a request's items refer to, read in one transaction before any crypto runs. */
export interface Loaded {
  readonly role: string;
  readonly transformations: readonly string[];
  readonly resolved: ReadonlyMap<string, Resolved>;
}

async function load(store: MountStore, roleName: string, items: readonly Item[]): Promise<Loaded> {
  const role = await getObject<Role>(store, 'role', roleName);
  if (!role) throw badInput(`role "${roleName}" does not exist`);
  const names = new Set(items.map((i) => i.transformation).filter((n): n is string => !!n));
  if (role.transformations.length === 1) names.add(role.transformations[0]);
  const resolved = new Map<string, Resolved>();
  for (const name of names) {
    if (!role.transformations.includes(name)) continue;
    const t = await getObject<Transformation>(store, 'transformation', name);
    if (!t) continue;
    let template: Template | undefined;
    let alphabet: string | undefined;
    if (t.type !== 'tokenization') {
      template = TEMPLATES[t.template] ?? (await getObject<Template>(store, 'template', t.template));
      if (template?.alphabet) alphabet = (ALPHABETS[template.alphabet] ?? (await getObject<Alphabet>(store, 'alphabet', template.alphabet)))?.alphabet;
    }
    const stores: Array<[string, Store | undefined]> = [];
    if (t.type === 'tokenization') {
      // A store named before it was made fails here, when values are tokenized (as Vault).
      for (const s of t.stores) stores.push([s, s === INTERNAL_STORE ? undefined : await resolve<Store>(store, 'store', s, `transformation "${name}": stores`)]);
    }
    resolved.set(name, { name, t, template, alphabet, stores, allowed: t.allowed_roles.some((g) => globMatch(g, roleName)) });
  }
  return { role: roleName, transformations: role.transformations, resolved };
}

/** The transformation an item uses: named, or the role's only one; in the role and allowing it. */
function pick(loaded: Loaded, item: Item): Resolved {
  const name = item.transformation || (loaded.transformations.length === 1 ? loaded.transformations[0] : undefined);
  if (!name) throw badInput(`transformation is required: role "${loaded.role}" has ${loaded.transformations.length} transformations`);
  if (!loaded.transformations.includes(name)) throw badInput(`transformation "${name}" is not in role "${loaded.role}"`);
  const r = loaded.resolved.get(name);
  if (!r) throw badInput(`transformation "${name}" does not exist`);
  if (!r.allowed) throw badInput(`role "${loaded.role}" is not in the allowed_roles of transformation "${name}"`);
  return r;
}

/** The transformation's template, looked up when values are transformed (it may be made after the transformation). */
function templateOf(r: Resolved): Template {
  if (!r.template) throw badInput(`transformation "${r.name}": template "${r.t.template}" does not exist`);
  return r.template;
}

/** The transformation's FF3-1 codec, once its template and alphabet are known to exist. */
function codecOf(r: Resolved): FpeCodec {
  const template = templateOf(r);
  if (!template.alphabet) throw badInput(`transformation "${r.name}": template "${r.t.template}" has no alphabet, which FPE needs`);
  if (!r.alphabet) throw badInput(`transformation "${r.name}": alphabet "${template.alphabet}" of template "${r.t.template}" does not exist`);
  return fpeCodec(r.t.key, r.alphabet);
}

/** The format of an FPE result: the template's `encode_format` on encode, the `decode_formats` entry an item names on decode. */
function formatOf(r: Resolved, item: Item, op: Op): string | undefined {
  if (op === 'encode') return r.template?.encode_format || undefined;
  if (!item.decode_format) return undefined;
  const format = r.template?.decode_formats?.[item.decode_format];
  if (format === undefined) throw badInput(`decode_format: "${item.decode_format}" is not a decode format of template "${r.t.template}"`);
  return format;
}

/** Decoded `internal` tweaks, by their base64 (every value of such a transformation uses its one tweak). */
const internalTweaks = new Map<string, Buffer>();

function tweakOf(r: Resolved, item: Item, op: Op): { tweak: Buffer; generated?: string } {
  const source = r.t.tweak_source;
  if (source === 'internal') {
    let tweak = internalTweaks.get(r.t.tweak);
    if (!tweak) {
      if (internalTweaks.size > 1000) internalTweaks.clear();
      tweak = Buffer.from(r.t.tweak, 'base64');
      internalTweaks.set(r.t.tweak, tweak);
    }
    return { tweak };
  }
  if (source === 'generated' && op === 'encode') {
    const tweak = randomBytes(7);
    return { tweak, generated: tweak.toString('base64') };
  }
  if (!item.tweak) throw badInput(`tweak is required: transformation "${r.name}" has tweak_source ${source} (7 bytes, base64)`);
  const tweak = Buffer.from(item.tweak, 'base64');
  if (tweak.length !== 7 || tweak.toString('base64').replace(/=+$/, '') !== item.tweak.replace(/=+$/, '')) {
    throw badInput('tweak: must be exactly 7 bytes, base64-encoded');
  }
  return { tweak };
}

function fpeResult(r: Resolved, item: Item, op: Op, raw: string, generated: string | undefined): Record<string, unknown> {
  const format = formatOf(r, item, op);
  const out = format === undefined ? raw : formatValue(r.template!, raw, format);
  return op !== 'encode' ? { decoded_value: out } : generated ? { encoded_value: out, tweak: generated } : { encoded_value: out };
}

/** One FPE value on its own: the codec's single-value path. */
function fpeValue(r: Resolved, item: Item, value: string, op: Op): Record<string, unknown> {
  const codec = codecOf(r);
  const { tweak, generated } = tweakOf(r, item, op);
  return fpeResult(r, item, op, codec.run(r.template!, r.t.template, value, tweak, op === 'encode'), generated);
}

/** An FPE item of a batch, checked and read, until its cipher run, which it shares with the batch's other items. */
interface FpeJob {
  readonly codec: FpeCodec;
  readonly forward: boolean;
  readonly x: Uint16Array;
  readonly tweak: Buffer;
  finish(digits: readonly number[]): Record<string, unknown>;
}

function fpeJob(r: Resolved, item: Item, value: string, op: Op): FpeJob {
  const codec = codecOf(r);
  const { tweak, generated } = tweakOf(r, item, op);
  const spans = templateSpans(r.template!, value);
  return {
    codec,
    forward: op === 'encode',
    x: codec.numerals(value, spans, r.t.template),
    tweak,
    finish: (digits) => fpeResult(r, item, op, codec.write(value, spans, digits), generated),
  };
}

/** Runs FPE jobs with one FF3-1 call per codec and direction: a batch's values share each round's AES call. */
function runFpe(jobs: readonly FpeJob[]): Array<Record<string, unknown>> {
  const results = new Array<Record<string, unknown>>(jobs.length);
  const groups = new Map<FpeCodec, Map<boolean, number[]>>();
  jobs.forEach((job, i) => {
    const byDirection = groups.get(job.codec) ?? groups.set(job.codec, new Map()).get(job.codec)!;
    const at = byDirection.get(job.forward) ?? byDirection.set(job.forward, []).get(job.forward)!;
    at.push(i);
  });
  for (const [{ cipher }, byDirection] of groups) {
    for (const [forward, at] of byDirection) {
      const xs = at.map((i) => jobs[i].x);
      const tweaks = at.map((i) => jobs[i].tweak);
      const out = forward ? cipher.encryptAll(xs, tweaks) : cipher.decryptAll(xs, tweaks);
      at.forEach((i, k) => (results[i] = jobs[i].finish(out[k])));
    }
  }
  return results;
}

/** The request's token lookups and writes against the transformation's stores. */
class Tokens {
  private readonly internal: Array<[string, TokenRecord]> = [];
  private readonly external = new Map<string, { store: Store; transformation: string; records: TokenRecord[] }>();
  /** Convergent encodes: the expirations to add to the lookup index, per transformation and value hash. */
  private readonly index = new Map<string, number[]>();

  constructor(
    private readonly mount: MountEntry,
    private readonly tx: <T>(fn: (store: MountStore) => Promise<T>) => Promise<T>,
  ) {}

  /** Queues a new token's record for every store of the transformation. */
  add(r: Resolved, record: TokenRecord): void {
    for (const [name, store] of r.stores) {
      if (!store) {this.internal.push([r.name, record]);} else {
        const key = `${name}\0${r.name}`;
        const entry = this.external.get(key) ?? { store, transformation: r.name, records: [] };
        entry.records.push(record);
        this.external.set(key, entry);
      }
    }
  }

  /** Records a convergent token's expiration in the lookup index (Hangar's own storage, whatever the stores). */
  indexed(transformation: string, hash: string, expireAt: number): void {
    const key = `${transformation}\0${hash}`;
    this.index.set(key, [...(this.index.get(key) ?? []), expireAt]);
  }

  /** The first store that knows the token answers. */
  async find(r: Resolved, hash: string): Promise<TokenRecord | undefined> {
    for (const [name, store] of r.stores) {
      const found = store ? await sqlGet(this.mount, name, store, r.name, hash) : await this.tx((s) => getInternal(s, r.name, hash));
      if (found) return found;
    }
    return undefined;
  }

  /** The lookup index's expirations of a convergent value (Hangar's own storage). */
  expirations(transformation: string, hash: string): Promise<number[]> {
    return this.tx((s) => expirationsOf(s, transformation, hash));
  }

  async flush(now: number): Promise<void> {
    if (this.internal.length || this.index.size) {
      await this.tx(async (s) => {
        for (const [t, rec] of this.internal) await putInternal(s, t, rec);
        for (const [key, exps] of this.index) {
          const [t, hash] = key.split('\0');
          await indexExpirations(s, t, hash, exps, now);
        }
      });
    }
    for (const [key, { store, transformation, records }] of this.external) {
      // A convergent token encoded twice in a batch is written once, with its last metadata.
      const unique = [...new Map(records.map((r) => [r.hash, r])).values()];
      await sqlPut(this.mount, key.split('\0')[0], store, transformation, unique);
    }
  }
}

/** An RFC3339 time as epoch ms (whole seconds), or a 400 naming the field. */
function timeOf(field: string, text: string): number {
  const ms = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(text) ? Date.parse(text) : NaN;
  if (Number.isNaN(ms)) throw badInput(`${field}: "${text}" is not an RFC3339 time such as 2030-01-31T12:00:00Z`);
  return Math.floor(ms / 1000) * 1000;
}

/** A token's expiry on encode (epoch ms, 0 none): `expiration`, or `ttl`, capped to `max_ttl`. */
function expiryOf(r: Resolved, item: Item, now: number): number {
  const max = r.t.max_ttl;
  if (item.expiration) {
    if (item.ttl) throw badInput('expiration and ttl: give one of them');
    const at = timeOf('expiration', item.expiration);
    if (at <= now) throw badInput(`expiration: ${item.expiration} has passed`);
    if (max > 0 && at > now + max * 1000) throw badInput(`expiration: ${item.expiration} is beyond the transformation's max_ttl (${max}s)`);
    return at;
  }
  const requested = item.ttl ?? 0;
  const ttl = max > 0 ? (requested > 0 ? Math.min(requested, max) : max) : requested;
  if (ttl <= 0) return 0;
  // A convergent token's expiry is part of its identity: whole seconds, as given in RFC3339.
  return r.t.convergent ? Math.floor((now + ttl * 1000) / 1000) * 1000 : now + ttl * 1000;
}

/**
 * The expirations a lookup asks for: none (`expiration` absent), one (RFC3339), every known one
 * (`any`), or the known ones in `min_expiration`..`max_expiration` (inclusive).
 */
async function lookupExpirations(r: Resolved, item: Item, value: string, tokens: Tokens): Promise<number[]> {
  const { expiration, min_expiration: min, max_expiration: max } = item;
  if (expiration && (min || max)) throw badInput('expiration: cannot be given with min_expiration and max_expiration');
  if (!!min !== !!max) throw badInput('min_expiration and max_expiration: give both');
  if (!expiration && !min) return [0];
  if (expiration && expiration !== 'any') return [timeOf('expiration', expiration)];
  const known = await tokens.expirations(r.name, valueHash(r.t.key, r.name, value));
  if (expiration === 'any') return known;
  const [lo, hi] = [timeOf('min_expiration', min!), timeOf('max_expiration', max!)];
  return known.filter((e) => e !== 0 && e >= lo && e <= hi);
}

async function tokenization(r: Resolved, item: Item, value: string, op: Op, now: number, tokens: Tokens): Promise<Record<string, unknown>> {
  if (op === 'encode') {
    const expireAt = expiryOf(r, item, now);
    const token = r.t.convergent ? convergentToken(r.t.key, r.name, value, expireAt) : newToken();
    const payload = { value, ...(item.metadata ? { metadata: parseMetadata(item.metadata) } : {}) };
    const [key, version] = sealingKey(r.t);
    tokens.add(r, sealToken(key, r.name, tokenHash(r.t.key, r.name, token), payload, expireAt, version));
    if (r.t.convergent) tokens.indexed(r.name, valueHash(r.t.key, r.name, value), expireAt);
    return { encoded_value: token };
  }
  if (op === 'lookup') {
    if (!r.t.convergent) throw badInput(`token lookup needs a convergent transformation; "${r.name}" is not convergent`);
    const found: string[] = [];
    for (const expireAt of await lookupExpirations(r, item, value, tokens)) {
      const token = convergentToken(r.t.key, r.name, value, expireAt);
      const record = await tokens.find(r, tokenHash(r.t.key, r.name, token));
      if (record && (record.expireAt === 0 || record.expireAt > now)) found.push(token);
    }
    return { tokens: found };
  }
  const record = await tokens.find(r, tokenHash(r.t.key, r.name, value));
  const live = record && (record.expireAt === 0 || record.expireAt > now) ? record : undefined;
  if (op === 'validate') return { valid: live !== undefined };
  if (!live) throw badInput('value is not a valid token (unknown or expired)');
  return { decoded_value: openToken(openingKey(r.t, live.version ?? 1), r.name, live).value };
}

/**
 * One item's result: what encode, decode and validate do per value once the request's objects are
 * loaded. FPE in a batch gives the job instead (run with the batch's other FPE items), and
 * tokenization a promise (it reads its stores); `tokens` is needed only by tokenization.
 */
export function transformItem(
  op: Op,
  loaded: Loaded,
  item: Item,
  now: number,
  tokens: Tokens | undefined,
  alone: boolean,
): Record<string, unknown> | FpeJob | Promise<Record<string, unknown>> {
  const value = item.value;
  if (value === undefined || value === null || value === '') throw badInput('value is required');
  const r = pick(loaded, item);
  if ((op === 'validate' || op === 'lookup') && r.t.type !== 'tokenization') throw badInput(`${op} is only for tokenization transformations; "${r.name}" is ${r.t.type}`);
  switch (r.t.type) {
    case 'fpe':
      return alone ? fpeValue(r, item, value, op) : fpeJob(r, item, value, op);
    case 'masking':
      if (op === 'decode') throw badInput(`transformation "${r.name}" masks: masked values cannot be decoded`);
      return { encoded_value: applyTemplate(templateOf(r), value, (chars) => chars.map(() => r.t.masking_character)) };
    default:
      if (!tokens) throw new Error('tokenization needs the request\'s token stores');
      return tokenization(r, item, value, op, now, tokens);
  }
}

const isJob = (r: Record<string, unknown> | FpeJob): r is FpeJob => typeof (r as FpeJob).finish === 'function';

/**
 * encode/decode/validate: every referenced object is read in one transaction, the values are
 * transformed, then new tokens are written (the internal store in one transaction, each SQL
 * store in one statement). A batch answers one result per item, in order; an item's error is
 * that item's `error`, unless every item failed.
 */
function operation(op: Op, path: string = op): EngineRoute {
  return {
    pattern: `${path}/:role_name`,
    body: Body,
    ownTransactions: ['create', 'update'],
    write: async (req: SecretsRequest<Body>) => {
      const ctx = req.core.context(req.mount);
      const batch = req.body.batch_input;
      const items = batch ?? [req.body];
      if (batch && batch.length === 0) throw badInput('batch_input: must not be empty');
      const loaded = await ctx.tx((store) => load(store, req.params.role_name, items));
      const tokens = new Tokens(req.mount, (fn) => ctx.tx((store) => fn(store)));
      if (!batch) {
        const data = (await transformItem(op, loaded, req.body, req.now, tokens, true)) as Record<string, unknown>;
        await tokens.flush(req.now);
        return { data };
      }
      const results: Array<Record<string, unknown>> = [];
      const jobs: FpeJob[] = [];
      const jobAt: number[] = [];
      for (const item of batch) {
        try {
          const done = await transformItem(op, loaded, item, req.now, tokens, false);
          if (isJob(done)) {
            jobs.push(done);
            jobAt.push(results.length);
          }
          results.push(isJob(done) ? {} : done);
        } catch (e) {
          if (!(e instanceof HangarError)) throw e;
          results.push({ error: e.messages.join('; ') });
        }
      }
      runFpe(jobs).forEach((result, k) => (results[jobAt[k]] = result));
      batch.forEach((item, i) => {
        // The public service keys decode batch results `encoded_value` too; both are given.
        if (op === 'decode' && 'decoded_value' in results[i]) results[i].encoded_value = results[i].decoded_value;
        if (item.reference) results[i].reference = item.reference;
      });
      if (results.every((r) => 'error' in r)) throw badInput(...results.map((r, i) => `batch_input.${i}: ${String(r.error)}`));
      await tokens.flush(req.now);
      return { data: { batch_results: results } };
    },
  };
}

// `tokens/:role_name`: the public service's token lookup (POST), for convergent transformations.
export const operationRoutes: EngineRoute[] = [operation('encode'), operation('decode'), operation('validate'), operation('lookup', 'tokens')];
