import { Client } from 'pg';
import { startSecrets, SecretsTestServer } from './helpers';
import { storedText } from '../../helpers/raw-db';
import { STORAGE_KINDS } from '../../helpers/storage';

const TWEAK = Buffer.from('tweak07').toString('base64');

/** A fresh server; the transform engine is mounted at transform/ (the spec's default mounts). */
const transformServer = (kind: 'sqlite' | 'postgres') => startSecrets(kind);

/** Writes and expects 204 (or shows the response). */
async function ok(s: SecretsTestServer, path: string, body: unknown): Promise<void> {
  const res = await s.v('POST', `transform/${path}`, body);
  if (res.status !== 204) throw new Error(`${path}: ${res.status} ${res.text}`);
}

describe.each(STORAGE_KINDS)('transform engine (%s)', (kind) => {
  let s: SecretsTestServer;
  const encode = (role: string, body: unknown) => s.v('POST', `transform/encode/${role}`, body);
  const decode = (role: string, body: unknown) => s.v('POST', `transform/decode/${role}`, body);

  beforeAll(async () => {
    s = await transformServer(kind);
  });
  afterAll(() => s.close());

  test('alphabets and templates: built-ins, the reserved prefix, RE2 refusals, LIST with filter, reads', async () => {
    expect((await s.v('GET', 'transform/alphabet/builtin/numeric')).body.data).toEqual({ alphabet: '0123456789' });
    expect((await s.v('GET', 'transform/template/builtin/creditcardnumber')).body.data).toMatchObject({ type: 'regex', alphabet: 'builtin/numeric' });
    const bad: Array<[string, unknown, RegExp]> = [
      ['alphabet/builtin/mine', { alphabet: 'ab' }, /the "builtin\/" prefix is reserved/],
      ['alphabet/a1', {}, /alphabet is required/],
      ['alphabet/a1', { alphabet: 'a' }, /at least 2 characters/],
      ['alphabet/a1', { alphabet: 'abca' }, /"a" appears more than once/],
      ['alphabet/a1', { alphabet: 7 }, /^alphabet: must be a string/],
      ['template/t1', { pattern: '(\\d+)' }, /type is required/],
      ['template/t1', { type: 'glob', pattern: '(\\d+)' }, /type: "glob" is not supported/],
      ['template/t1', { type: 'regex', pattern: '(\\d)\\1' }, /pattern: .*invalid escape sequence/],
      ['template/t1', { type: 'regex', pattern: '(?=\\d)(\\d)' }, /pattern: .*unsupported Perl syntax/],
      ['template/t1', { type: 'regex', pattern: '\\d+' }, /at least one capture group/],
      ['template/t1', { type: 'regex', pattern: '((\\d)\\d)' }, /nested capture groups/],
      ['template/t1', { type: 'regex', pattern: '(\\d+)', alphabet: 'nope' }, /alphabet: alphabet "nope" does not exist/],
    ];
    for (const [path, body, message] of bad) {
      const res = await s.v('POST', `transform/${path}`, body);
      expect([path, res.status]).toEqual([path, 400]);
      expect(res.body.errors[0]).toMatch(message);
    }
    await ok(s, 'alphabet/hex', { alphabet: '0123456789abcdef' });
    await ok(s, 'alphabet/vowels', { alphabet: 'aeiou' });
    await ok(s, 'template/hex-id', { type: 'regex', pattern: 'id:([0-9a-f]+)', alphabet: 'hex' });
    expect((await s.v('GET', 'transform/template/hex-id')).body.data).toEqual({ type: 'regex', pattern: 'id:([0-9a-f]+)', alphabet: 'hex', encode_format: '', decode_formats: {} });
    expect((await s.v('LIST', 'transform/alphabet')).body.data.keys).toEqual(['hex', 'vowels']);
    expect((await s.v('GET', 'transform/alphabet?list=true&filter=v*')).body.data.keys).toEqual(['vowels']);
    expect((await s.v('GET', 'transform/alphabet/none')).status).toBe(404);
    // An alphabet a template uses cannot go; an unused one can.
    const guarded = await s.v('DELETE', 'transform/alphabet/hex');
    expect(guarded.status).toBe(400);
    expect(guarded.body.errors[0]).toMatch(/alphabet "hex" cannot be deleted: it is used by template "hex-id"/);
    expect((await s.v('DELETE', 'transform/alphabet/vowels')).status).toBe(204);
  });

  test('transformations: typed and generic endpoints, read shapes, immutable type, no key shown, guards', async () => {
    await ok(s, 'transformations/fpe/ccn', { template: 'builtin/creditcardnumber', tweak_source: 'internal', allowed_roles: ['payments'] });
    await ok(s, 'transformation/masking/ccn-mask', { template: 'builtin/creditcardnumber', masking_character: '#@', allowed_roles: 'payments' });
    await ok(s, 'transformation/ssn', { type: 'fpe', template: 'builtin/socialsecuritynumber', tweak_source: 'supplied', allowed_roles: ['payments'], masking_character: null });
    await ok(s, 'transformations/tokenization/tok', { max_ttl: '1h', allowed_roles: ['payments', 'vault*'] });
    const fpe = await s.v('GET', 'transform/transformation/ccn');
    expect(fpe.body.data).toEqual({ type: 'fpe', allowed_roles: ['payments'], templates: ['builtin/creditcardnumber'], tweak_source: 'internal', deletion_allowed: false });
    expect((await s.v('GET', 'transform/transformation/ccn-mask')).body.data).toMatchObject({ type: 'masking', masking_character: '#' });
    expect((await s.v('GET', 'transform/transformation/tok')).body.data).toEqual({
      type: 'tokenization',
      allowed_roles: ['payments', 'vault*'],
      templates: [],
      mapping_mode: 'default',
      max_ttl: 3600,
      stores: ['builtin/internal'],
      convergent: false,
      deletion_allowed: false,
    });
    expect((await s.v('LIST', 'transform/transformation')).body.data.keys).toEqual(['ccn', 'ccn-mask', 'ssn', 'tok']);
    const bad: Array<[string, unknown, RegExp]> = [
      ['transformation/x', { template: 'builtin/creditcardnumber' }, /type is required/],
      ['transformation/x', { type: 'hash' }, /type: "hash" is not supported/],
      ['transformations/rot13/x', {}, /unsupported transformation type "rot13"/],
      ['transformations/fpe/x', {}, /template is required for fpe/],
      ['transformations/fpe/x', { template: 'builtin/any', tweak_source: 'random' }, /tweak_source: must be supplied, generated or internal/],
      ['transformations/tokenization/x', { mapping_mode: 'convergent' }, /mapping_mode: must be default or exportable/],
      ['transformations/tokenization/x', { max_ttl: 'soon' }, /max_ttl: "soon" is not a duration/],
      ['transformations/masking/ccn', { template: 'builtin/creditcardnumber' }, /type cannot be changed \(transformation "ccn" is fpe, not masking\)/],
      ['transformation/ccn', { type: 'tokenization' }, /type cannot be changed/],
    ];
    for (const [path, body, message] of bad) {
      const res = await s.v('POST', `transform/${path}`, body);
      expect([path, res.status, res.body.errors?.[0]]).toEqual([path, 400, expect.stringMatching(message)]);
    }
    // A partial update keeps the rest (and the key: encodings stay decodable).
    await ok(s, 'role/payments', { transformations: ['ccn', 'ccn-mask', 'ssn', 'tok'] });
    const before = (await encode('payments', { value: '4111-1111-1111-1111', transformation: 'ccn' })).body.data.encoded_value;
    await ok(s, 'transformations/fpe/ccn', { allowed_roles: ['payments', 'other'] });
    expect((await s.v('GET', 'transform/transformation/ccn')).body.data.tweak_source).toBe('internal');
    expect((await encode('payments', { value: '4111-1111-1111-1111', transformation: 'ccn' })).body.data.encoded_value).toBe(before);
    // Guards: a template a transformation uses, a transformation a role uses.
    await ok(s, 'template/t-guard', { type: 'regex', pattern: '(\\d+)', alphabet: 'builtin/numeric' });
    await ok(s, 'transformations/fpe/guarded', { template: 't-guard' });
    expect((await s.v('DELETE', 'transform/template/t-guard')).body.errors[0]).toMatch(/template "t-guard" cannot be deleted: it is used by transformation "guarded"/);
    const used = await s.v('DELETE', 'transform/transformation/ccn');
    expect([used.status, used.body.errors[0]]).toEqual([400, 'transformation "ccn" cannot be deleted: it is used by role "payments"']);
    expect((await s.v('DELETE', 'transform/transformation/guarded')).status).toBe(204);
    expect((await s.v('DELETE', 'transform/template/t-guard')).status).toBe(204);
    expect((await s.v('DELETE', 'transform/template/builtin/any')).body.errors[0]).toMatch(/reserved/);
  });

  test('FPE round trips over every built-in alphabet and template, with each tweak source', async () => {
    const samples: Record<string, string> = {
      'builtin/numeric': '0123456789',
      'builtin/alphalower': 'hangarsecrets',
      'builtin/alphaupper': 'HANGARSECRETS',
      'builtin/alphanumericlower': 'hangar2026x',
      'builtin/alphanumericupper': 'HANGAR2026X',
      'builtin/alphanumeric': 'Hangar2026Xy',
    };
    const names: string[] = [];
    for (const [i, alphabet] of Object.keys(samples).entries()) {
      await ok(s, `template/all-${i}`, { type: 'regex', pattern: '^(.*)$', alphabet });
      await ok(s, `transformations/fpe/all-${i}`, { template: `all-${i}`, tweak_source: 'internal', allowed_roles: ['rt'] });
      names.push(`all-${i}`);
    }
    await ok(s, 'transformations/fpe/rt-ccn', { template: 'builtin/creditcardnumber', tweak_source: 'generated', allowed_roles: ['rt'] });
    await ok(s, 'transformations/fpe/rt-ssn', { template: 'builtin/socialsecuritynumber', allowed_roles: ['rt'] });
    await ok(s, 'role/rt', { transformations: [...names, 'rt-ccn', 'rt-ssn'] });
    for (const [i, value] of Object.values(samples).entries()) {
      const enc = await encode('rt', { value, transformation: `all-${i}` });
      expect(enc.status).toBe(200);
      const encoded = enc.body.data.encoded_value as string;
      expect(encoded).toHaveLength(value.length);
      expect(encoded).not.toBe(value);
      const alphabet = (await s.v('GET', `transform/alphabet/${Object.keys(samples)[i]}`)).body.data.alphabet as string;
      expect([...encoded].every((c) => alphabet.includes(c))).toBe(true);
      expect((await decode('rt', { value: encoded, transformation: `all-${i}` })).body.data.decoded_value).toBe(value);
    }
    // generated: the tweak comes back and decoding needs it; separators are kept.
    const ccn = await encode('rt', { value: '4111-1111-1111-1111', transformation: 'rt-ccn' });
    expect(ccn.body.data.encoded_value).toMatch(/^\d{4}-\d{4}-\d{4}-\d{4}$/);
    expect(Buffer.from(ccn.body.data.tweak, 'base64')).toHaveLength(7);
    expect((await decode('rt', { value: ccn.body.data.encoded_value, transformation: 'rt-ccn', tweak: ccn.body.data.tweak })).body.data.decoded_value).toBe('4111-1111-1111-1111');
    expect((await decode('rt', { value: ccn.body.data.encoded_value, transformation: 'rt-ccn' })).body.errors[0]).toMatch(/tweak is required/);
    // supplied: exactly 7 bytes.
    const ssn = await encode('rt', { value: '123-45-6789', transformation: 'rt-ssn', tweak: TWEAK });
    expect(ssn.body.data.encoded_value).toMatch(/^\d{3}-\d{2}-\d{4}$/);
    expect((await decode('rt', { value: ssn.body.data.encoded_value, transformation: 'rt-ssn', tweak: TWEAK })).body.data.decoded_value).toBe('123-45-6789');
    const errors: Array<[unknown, RegExp]> = [
      [{ value: '123-45-6789', transformation: 'rt-ssn' }, /tweak is required: transformation "rt-ssn" has tweak_source supplied/],
      [{ value: '123-45-6789', transformation: 'rt-ssn', tweak: Buffer.from('8 bytes!').toString('base64') }, /tweak: must be exactly 7 bytes/],
      [{ value: 'abc', transformation: 'rt-ssn', tweak: TWEAK }, /value does not match the template pattern/],
      [{ value: '12345', transformation: 'all-0' }, /needs 6 to 56 characters to transform, not 5/],
      [{ value: '12345x', transformation: 'all-0' }, /the character "x" is not in the alphabet/],
      [{ value: '4111111111111111' }, /transformation is required: role "rt" has 8 transformations/],
      [{ value: '4111111111111111', transformation: 'ccn' }, /transformation "ccn" is not in role "rt"/],
      [{ transformation: 'all-0' }, /value is required/],
    ];
    for (const [body, message] of errors) {
      const res = await encode('rt', body);
      expect([res.status, res.body.errors?.[0]]).toEqual([400, expect.stringMatching(message)]);
    }
  });

  test('masking, the one-transformation shortcut, allowed_roles, batches with per-item errors', async () => {
    await ok(s, 'transformations/masking/mask', { template: 'builtin/creditcardnumber', masking_character: 'X', allowed_roles: ['m'] });
    await ok(s, 'role/m', { transformations: 'mask' });
    const masked = await encode('m', { value: '4111 2222 3333 4444' });
    expect(masked.body.data).toEqual({ encoded_value: 'XXXX XXXX XXXX XXXX' });
    expect((await decode('m', { value: 'XXXX XXXX XXXX XXXX' })).body.errors[0]).toMatch(/masked values cannot be decoded/);
    expect((await s.v('POST', 'transform/validate/m', { value: 'x' })).body.errors[0]).toMatch(/validate is only for tokenization/);
    // A role that the transformation does not allow.
    await ok(s, 'role/intruder', { transformations: ['mask'] });
    expect((await encode('intruder', { value: '4111 2222 3333 4444' })).body.errors[0]).toBe('role "intruder" is not in the allowed_roles of transformation "mask"');
    expect((await encode('nobody', { value: '1' })).body.errors[0]).toBe('role "nobody" does not exist');
    // A batch: one result per item, in order; errors stay with their item.
    await ok(s, 'transformations/tokenization/mtok', { allowed_roles: ['mb'] });
    await ok(s, 'role/mb', { transformations: ['mask', 'mtok'] });
    await ok(s, 'transformations/masking/mask', { allowed_roles: ['m', 'mb'] });
    const batch = await encode('mb', {
      value: 'ignored',
      batch_input: [
        { value: '4111-2222-3333-4444', transformation: 'mask', reference: 'r1' },
        { value: 'secret-1', transformation: 'mtok' },
        { value: 'no digits', transformation: 'mask' },
        { value: 'secret-2' },
      ],
    });
    expect(batch.status).toBe(200);
    const results = batch.body.data.batch_results;
    expect(results).toHaveLength(4);
    expect(results[0]).toEqual({ encoded_value: 'XXXX-XXXX-XXXX-XXXX', reference: 'r1' });
    expect(results[1].encoded_value).toMatch(/^[1-9A-HJ-NP-Za-km-z]{40,}$/);
    expect(results[2]).toEqual({ error: 'value does not match the template pattern' });
    expect(results[3]).toEqual({ error: 'transformation is required: role "mb" has 2 transformations' });
    const back = await decode('mb', { batch_input: [{ value: results[1].encoded_value, transformation: 'mtok' }, { value: 'nope', transformation: 'mtok' }] });
    expect(back.body.data.batch_results).toEqual([
      { decoded_value: 'secret-1', encoded_value: 'secret-1' },
      { error: 'value is not a valid token (unknown or expired)' },
    ]);
    const allBad = await encode('mb', { batch_input: [{ value: 'x', transformation: 'mask' }] });
    expect([allBad.status, allBad.body.errors]).toEqual([400, ['batch_input.0: value does not match the template pattern']]);
    expect((await encode('mb', { batch_input: [{ value: 1 }] })).body.errors[0]).toMatch(/^batch_input\.0\.value: must be a string/);
  });

  test('FPE batches: items of several transformations share each round and answer as single requests do', async () => {
    await ok(s, 'template/b-digits', { type: 'regex', pattern: '^(\\d+)$', alphabet: 'builtin/numeric' });
    await ok(s, 'template/b-alnum', { type: 'regex', pattern: '^(.*)$', alphabet: 'builtin/alphanumeric' });
    await ok(s, 'transformations/fpe/b-ccn', { template: 'builtin/creditcardnumber', tweak_source: 'internal', allowed_roles: ['b'] });
    await ok(s, 'transformations/fpe/b-ssn', { template: 'builtin/socialsecuritynumber', tweak_source: 'generated', allowed_roles: ['b'] });
    await ok(s, 'transformations/fpe/b-digits', { template: 'b-digits', tweak_source: 'internal', allowed_roles: ['b'] });
    await ok(s, 'transformations/fpe/b-alnum', { template: 'b-alnum', tweak_source: 'internal', allowed_roles: ['b'] });
    await ok(s, 'role/b', { transformations: ['b-ccn', 'b-ssn', 'b-digits', 'b-alnum'] });
    // 26 digits and 20 alphanumerics take the other arithmetic paths than the card number.
    const items = [
      { value: '4111-1111-1111-1111', transformation: 'b-ccn', reference: 'first' },
      { value: '123-45-6789', transformation: 'b-ssn' },
      { value: '12345678901234567890123456', transformation: 'b-digits' },
      { value: 'not a card', transformation: 'b-ccn' },
      { value: 'Hangar2026FormatPres', transformation: 'b-alnum' },
      { value: '5500 0000 0000 0004', transformation: 'b-ccn' },
    ];
    const enc = await encode('b', { batch_input: items });
    expect(enc.status).toBe(200);
    const results = enc.body.data.batch_results;
    expect(results.map((r: Record<string, unknown>) => Object.keys(r).sort())).toEqual([
      ['encoded_value', 'reference'], ['encoded_value', 'tweak'], ['encoded_value'], ['error'], ['encoded_value'], ['encoded_value'],
    ]);
    expect(results[3].error).toBe('value does not match the template pattern');
    for (const i of [0, 2, 4, 5]) {
      const { reference: _r, ...single } = items[i];
      expect((await encode('b', single)).body.data.encoded_value).toBe(results[i].encoded_value);
    }
    expect(results[5].encoded_value).toMatch(/^\d{4} \d{4} \d{4} \d{4}$/);
    const back = await decode('b', {
      batch_input: items.map((item, i) => ({
        value: results[i].encoded_value ?? item.value,
        transformation: item.transformation,
        tweak: results[i].tweak,
      })),
    });
    expect(back.body.data.batch_results.map((r: Record<string, unknown>) => r.decoded_value ?? r.error)).toEqual([
      '4111-1111-1111-1111', '123-45-6789', '12345678901234567890123456', 'value does not match the template pattern', 'Hangar2026FormatPres', '5500 0000 0000 0004',
    ]);
  });

  test('tokenization on the internal store: ttl and max_ttl by the engine clock, metadata, validate, sealed', async () => {
    await ok(s, 'transformations/tokenization/cards', { max_ttl: '2h', allowed_roles: ['tok'] });
    await ok(s, 'transformations/tokenization/forever', { allowed_roles: ['tok'] });
    await ok(s, 'role/tok', { transformations: ['cards', 'forever'] });
    const plaintext = 'tokenize-me-5555-4444';
    const short = (await encode('tok', { value: plaintext, transformation: 'cards', ttl: '10m', metadata: 'owner=alice,env=ci' })).body.data.encoded_value;
    const capped = (await encode('tok', { value: plaintext, transformation: 'cards', ttl: '100h' })).body.data.encoded_value;
    const lasting = (await encode('tok', { value: plaintext, transformation: 'forever' })).body.data.encoded_value;
    expect(short).not.toBe(capped);
    const validate = async (value: string, transformation: string) => (await s.v('POST', 'transform/validate/tok', { value, transformation })).body.data.valid;
    expect((await decode('tok', { value: short, transformation: 'cards' })).body.data.decoded_value).toBe(plaintext);
    expect(await validate(short, 'cards')).toBe(true);
    expect(await validate(short, 'forever')).toBe(false);
    expect((await s.v('POST', 'transform/encode/tok', { value: 'x', transformation: 'cards', metadata: 'novalue' })).body.errors[0]).toMatch(/metadata: "novalue" is not key=value/);
    s.clock.advance(11 * 60_000);
    expect(await validate(short, 'cards')).toBe(false);
    expect((await decode('tok', { value: short, transformation: 'cards' })).body.errors[0]).toMatch(/not a valid token/);
    expect(await validate(capped, 'cards')).toBe(true);
    s.clock.advance(2 * 3600_000);
    expect(await validate(capped, 'cards')).toBe(false);
    expect((await decode('tok', { value: lasting, transformation: 'forever' })).body.data.decoded_value).toBe(plaintext);
    // Neither the plaintext nor a token reaches the database in the clear.
    const text = await storedText(s.engine.storage, s.dataDir);
    expect(text).not.toContain(plaintext);
    expect(text).not.toContain(lasting);
    expect(text).not.toContain('alice');
  });

  test('convergent tokenization: a value and expiration always give one token; lookup by value; the choice is fixed', async () => {
    // A store may be named before it is made (Vault checks when values are tokenized).
    await ok(s, 'transformations/tokenization/store-later', { stores: ['not-yet'], allowed_roles: ['store-later'] });
    await ok(s, 'role/store-later', { transformations: ['store-later'] });
    expect((await s.v('GET', 'transform/transformations/tokenization/store-later')).body.data.stores).toEqual(['not-yet']);
    const missing = await encode('store-later', { value: 'x' });
    expect([missing.status, missing.body.errors[0]]).toEqual([400, 'transformation "store-later": stores: store "not-yet" does not exist']);
    await ok(s, 'transformations/tokenization/conv', { convergent: true, allowed_roles: ['conv'] });
    await ok(s, 'transformations/tokenization/random', { allowed_roles: ['conv'] });
    await ok(s, 'role/conv', { transformations: ['conv', 'random'] });
    expect((await s.v('GET', 'transform/transformations/tokenization/conv')).body.data.convergent).toBe(true);
    expect((await s.v('GET', 'transform/transformations/tokenization/random')).body.data.convergent).toBe(false);
    const fixed = await s.v('POST', 'transform/transformations/tokenization/conv', { convergent: false });
    expect([fixed.status, fixed.body.errors[0]]).toEqual([400, expect.stringMatching(/^convergent cannot be changed after the transformation is created/)]);
    await ok(s, 'transformations/tokenization/conv', { convergent: true, allowed_roles: ['conv', 'other'] });
    expect((await s.v('GET', 'transform/transformations/tokenization/conv')).body.data.convergent).toBe(true);

    const plaintext = 'convergent-plain-4000-1234';
    const enc = async (body: Record<string, unknown>, transformation = 'conv') => {
      const res = await encode('conv', { value: plaintext, transformation, ...body });
      return res.status === 200 ? res.body.data.encoded_value : `${res.status} ${res.body.errors[0]}`;
    };
    const lookup = async (body: Record<string, unknown>, transformation = 'conv') => {
      const res = await s.v('POST', 'transform/tokens/conv', { value: plaintext, transformation, ...body });
      return res.status === 200 ? res.body.data.tokens : `${res.status} ${res.body.errors[0]}`;
    };
    const t0 = await enc({ metadata: 'a=1' });
    expect(await enc({})).toBe(t0);
    expect(await enc({}, 'random')).not.toBe(await enc({}, 'random'));
    expect((await decode('conv', { value: t0, transformation: 'conv' })).body.data.decoded_value).toBe(plaintext);
    // The expiration is part of the token's identity.
    const at = Math.floor(s.clock.now() / 1000) * 1000 + 3_600_000;
    const expiration = new Date(at).toISOString().replace('.000Z', 'Z');
    const te = await enc({ expiration });
    expect(te).not.toBe(t0);
    expect(await enc({ expiration: new Date(at).toISOString().replace('Z', '+00:00') })).toBe(te);
    expect(await enc({ ttl: (at - s.clock.now()) / 1000 })).toBe(te);
    expect(await enc({ expiration, ttl: 60 })).toBe('400 expiration and ttl: give one of them');
    expect(await enc({ expiration: 'tomorrow' })).toMatch(/^400 expiration: "tomorrow" is not an RFC3339 time/);
    expect(await enc({ expiration: '2001-01-01T00:00:00Z' })).toBe('400 expiration: 2001-01-01T00:00:00Z has passed');
    const batch = await encode('conv', { batch_input: [{ value: plaintext, transformation: 'conv' }, { value: plaintext, transformation: 'conv', metadata: 'b=2' }] });
    expect(batch.body.data.batch_results.map((r: { encoded_value: string }) => r.encoded_value)).toEqual([t0, t0]);

    // Lookup: the token of a value, only for a convergent transformation.
    expect(await lookup({})).toEqual([t0]);
    expect(await lookup({ expiration })).toEqual([te]);
    expect(await lookup({ expiration: 'any' })).toEqual([t0, te]);
    expect(await lookup({ min_expiration: new Date(at - 60_000).toISOString(), max_expiration: new Date(at + 60_000).toISOString() })).toEqual([te]);
    expect(await lookup({ value: 'never-encoded' })).toEqual([]);
    expect(await lookup({ min_expiration: expiration })).toBe('400 min_expiration and max_expiration: give both');
    expect(await lookup({ expiration, max_expiration: expiration, min_expiration: expiration })).toMatch(/^400 expiration: cannot be given with/);
    expect(await lookup({}, 'random')).toBe('400 token lookup needs a convergent transformation; "random" is not convergent');
    s.clock.advance(3_601_000);
    expect(await lookup({ expiration: 'any' })).toEqual([t0]);
    expect((await s.v('POST', 'transform/validate/conv', { value: te, transformation: 'conv' })).body.data.valid).toBe(false);
    expect((await s.v('POST', 'transform/validate/conv', { value: t0, transformation: 'conv' })).body.data.valid).toBe(true);
    const text = await storedText(s.engine.storage, s.dataDir);
    expect(text).not.toContain(plaintext);
    expect(text).not.toContain(t0);
  });

  test('templates named before they exist are looked up when values are encoded; encode_format and decode_formats', async () => {
    await ok(s, 'transformations/fpe/later', { template: 'later-t', tweak_source: 'internal', allowed_roles: ['later'] });
    await ok(s, 'transformations/masking/later-mask', { template: 'later-m', allowed_roles: ['later'] });
    await ok(s, 'role/later', { transformations: ['later', 'later-mask'] });
    expect((await s.v('GET', 'transform/transformation/later')).body.data.templates).toEqual(['later-t']);
    expect((await encode('later', { value: '1234', transformation: 'later' })).body.errors[0]).toBe('transformation "later": template "later-t" does not exist');
    expect((await encode('later', { value: '1234', transformation: 'later-mask' })).body.errors[0]).toBe('transformation "later-mask": template "later-m" does not exist');
    await ok(s, 'template/later-m', { type: 'regex', pattern: '(\\d+)' });
    expect((await encode('later', { value: 'pin 1234', transformation: 'later-mask' })).body.data.encoded_value).toBe('pin ****');
    await ok(s, 'alphabet/later-a', { alphabet: '0123456789' });
    await ok(s, 'template/later-t', { type: 'regex', pattern: '(\\d{4})[- ]?(\\d{4})', alphabet: 'later-a' });
    await ok(s, 'template/later-t', { encode_format: '$1-$2', decode_formats: { last: '$2', both: '${1}/${2}' } });
    expect((await s.v('GET', 'transform/template/later-t')).body.data).toEqual({
      type: 'regex', pattern: '(\\d{4})[- ]?(\\d{4})', alphabet: 'later-a', encode_format: '$1-$2', decode_formats: { last: '$2', both: '${1}/${2}' },
    });
    const encoded = (await encode('later', { value: '1234 5678', transformation: 'later' })).body.data.encoded_value as string;
    expect(encoded).toMatch(/^\d{4}-\d{4}$/);
    expect((await decode('later', { value: encoded, transformation: 'later' })).body.data.decoded_value).toBe('1234-5678');
    expect((await decode('later', { value: encoded, transformation: 'later', decode_format: 'last' })).body.data.decoded_value).toBe('5678');
    expect((await decode('later', { value: encoded, transformation: 'later', decode_format: 'both' })).body.data.decoded_value).toBe('1234/5678');
    expect((await decode('later', { value: encoded, transformation: 'later', decode_format: 'nope' })).body.errors[0]).toMatch(/^decode_format: "nope" is not a decode format/);
  });

  test('tokenization keys: read, config, rotate; older tokens decode until min_decryption_version; auto rotation', async () => {
    await ok(s, 'transformations/tokenization/rot', { allowed_roles: ['rot'] });
    await ok(s, 'role/rot', { transformations: ['rot'] });
    const key = async () => (await s.v('GET', 'transform/tokenization/keys/rot')).body.data;
    expect(await key()).toEqual({ name: 'rot', type: 'aes256-gcm96', latest_version: 1, min_available_version: 0, min_decryption_version: 1, auto_rotate_period: 0 });
    expect((await s.v('LIST', 'transform/tokenization/keys')).body.data.keys).toContain('rot');
    const v1 = (await encode('rot', { value: 'first' })).body.data.encoded_value;
    await ok(s, 'tokenization/keys/rot/rotate', {});
    expect((await key()).latest_version).toBe(2);
    const v2 = (await encode('rot', { value: 'second' })).body.data.encoded_value;
    expect((await decode('rot', { value: v1 })).body.data.decoded_value).toBe('first');
    expect((await decode('rot', { value: v2 })).body.data.decoded_value).toBe('second');
    await ok(s, 'tokenization/keys/rot/config', { min_decryption_version: 2, auto_rotate_period: '2h' });
    expect(await key()).toMatchObject({ min_decryption_version: 2, auto_rotate_period: 7200 });
    expect((await decode('rot', { value: v1 })).body.errors[0]).toMatch(/below the min_decryption_version/);
    expect((await decode('rot', { value: v2 })).body.data.decoded_value).toBe('second');
    for (const [path, body, message] of [
      ['tokenization/keys/rot/config', { min_decryption_version: 5 }, /cannot be above the latest version 2/],
      ['tokenization/keys/rot/config', { auto_rotate_period: '10m' }, /^auto_rotate_period: must be 0/],
      ['tokenization/keys/ccn/config', { min_decryption_version: 1 }, /only tokenization transformations have keys/],
    ] as const) {
      const res = await s.v('POST', `transform/${path}`, body);
      expect([path, res.status, res.body.errors?.[0]]).toEqual([path, 400, expect.stringMatching(message)]);
    }
    expect((await s.v('GET', 'transform/tokenization/keys/none')).status).toBe(404);
    // auto_rotate_period: the background job adds a version once the period has passed.
    await s.engine.scheduler.runOnce();
    expect((await key()).latest_version).toBe(2);
    s.clock.advance(2 * 3600_000);
    await s.engine.scheduler.runOnce();
    expect((await key()).latest_version).toBe(3);
    expect((await decode('rot', { value: v2 })).body.data.decoded_value).toBe('second');
    // trim: versions below min_available_version are gone for good.
    expect((await s.v('POST', 'transform/tokenization/keys/rot/trim', { min_available_version: 3 })).body.errors[0]).toMatch(/must not be above min_decryption_version/);
    await ok(s, 'tokenization/keys/rot/trim', { min_available_version: 2 });
    expect((await key()).min_available_version).toBe(2);
    await ok(s, 'tokenization/keys/rot/config', { min_decryption_version: 1 });
    expect((await decode('rot', { value: v1 })).body.errors[0]).toMatch(/key version 1 was trimmed/);
  });

  test('hostile input: wrong types, oversized values, unknown operations answer the error envelope', async () => {
    const cases: Array<[string, string, unknown, number, RegExp]> = [
      ['POST', 'transform/encode/rt', { batch_input: 'x' }, 400, /^batch_input: must be an array/],
      ['POST', 'transform/encode/rt', { value: 'x'.repeat(70_000) }, 400, /^value: /],
      ['POST', 'transform/encode/rt', { value: '1', ttl: -5 }, 400, /^ttl: must be at least 0/],
      ['POST', 'transform/role/r1', { transformations: 7 }, 400, /^transformations: /],
      ['POST', 'transform/role/bad name!', {}, 400, /role name "bad name!" is invalid/],
      ['POST', 'transform/store/s1/schema', { username: 'u', password: 'p' }, 400, /name: store "s1" does not exist/],
      ['GET', 'transform/encode/rt', undefined, 405, /unsupported operation/],
    ];
    for (const [method, path, body, status, message] of cases) {
      const res = await s.v(method, path, body);
      expect([path, res.status, res.body.errors?.[0]]).toEqual([path, status, expect.stringMatching(message)]);
    }
    expect((await s.v('GET', 'transform/role?list=true&filter=[(')).status).toBe(404);
  });

  test('permissions: encode needs update on its path; reads need read', async () => {
    await ok(s, 'transformations/masking/pm', { template: 'builtin/socialsecuritynumber', allowed_roles: ['pr'] });
    await ok(s, 'role/pr', { transformations: ['pm'] });
    const reader = await s.tokenWith('path "transform/role/*" { capabilities = ["read"] }');
    expect((await s.v('GET', 'transform/role/pr', undefined, reader)).body.data).toEqual({ transformations: ['pm'] });
    expect((await s.v('POST', 'transform/encode/pr', { value: '123-45-6789' }, reader)).status).toBe(403);
    expect((await s.v('POST', 'transform/role/pr', { transformations: [] }, reader)).status).toBe(403);
    const encoder = await s.tokenWith('path "transform/encode/pr" { capabilities = ["update"] }');
    expect((await s.v('POST', 'transform/encode/pr', { value: '123-45-6789' }, encoder)).body.data.encoded_value).toBe('***-**-****');
    expect((await s.v('POST', 'transform/encode/rt', { value: '1' }, encoder)).status).toBe(403);
  });
});

const PG = process.env.HANGAR_TEST_POSTGRES_URL;

/** The SQL tokenization store on the jest cluster: a schema user and a SELECT/INSERT/UPDATE-only runtime user. */
(PG ? describe : describe.skip)('transform engine: SQL tokenization store', () => {
  let s: SecretsTestServer;
  let admin: Client;
  const db = `tokens_${Date.now().toString(36)}`;
  const url = (user: string, password: string, database = db) => {
    const u = new URL(PG!);
    u.username = user;
    u.password = password;
    u.pathname = `/${database}`;
    return u.toString();
  };
  const template = () => {
    const u = new URL(PG!);
    return `postgresql://{{username}}:{{password}}@${u.host}/${db}`;
  };

  beforeAll(async () => {
    s = await transformServer('sqlite');
    admin = new Client({ connectionString: PG });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${db}`);
    await admin.query('DROP ROLE IF EXISTS tok_runtime');
    await admin.query('DROP ROLE IF EXISTS tok_ddl');
    await admin.query('CREATE ROLE tok_runtime LOGIN PASSWORD \'run time/pw\'');
    await admin.query('CREATE ROLE tok_ddl LOGIN PASSWORD \'ddl-pw\'');
    await admin.query(`GRANT CREATE, CONNECT ON DATABASE ${db} TO tok_ddl`);
  });
  afterAll(async () => {
    await s.close();
    await admin.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin.query('DROP ROLE IF EXISTS tok_runtime');
    await admin.query('DROP ROLE IF EXISTS tok_ddl');
    await admin.end();
  });

  test('store CRUD, schema operation, tokens round-trip with no plaintext in the rows', async () => {
    const bad: Array<[unknown, RegExp]> = [
      [{ connection_string: template(), username: 'u', password: 'p' }, /type is required/],
      [{ type: 'sql', driver: 'mysql', connection_string: template(), username: 'u', password: 'p' }, /driver: "mysql" is not supported/],
      [{ type: 'sql', username: 'u', password: 'p' }, /connection_string is required/],
      [{ type: 'sql', connection_string: template(), password: 'p' }, /username is required/],
      [{ type: 'sql', connection_string: template(), username: 'u', password: 'p', schema: 'a;drop' }, /schema: "a;drop" is not a plain SQL identifier/],
      [{ type: 'sql', connection_string: template(), username: 'u', password: 'p', max_open_connections: 'many' }, /max_open_connections: must be an integer/],
    ];
    for (const [body, message] of bad) {
      const res = await s.v('POST', 'transform/store/pg', body);
      expect([res.status, res.body.errors?.[0]]).toEqual([400, expect.stringMatching(message)]);
    }
    await ok(s, 'store/pg', { type: 'sql', driver: 'postgres', connection_string: template(), username: 'tok_runtime', password: 'run time/pw', schema: 'tokens', max_open_connections: 2, max_connection_lifetime: '1h' });
    const read = await s.v('GET', 'transform/store/pg');
    expect(read.body.data).toMatchObject({ type: 'sql', connection_string: template(), supported_transformations: ['tokenization'], schema: 'tokens', max_open_connections: 2, max_idle_connections: 4, max_connection_lifetime: 3600 });
    expect(read.text).not.toContain('run time/pw');
    expect((await s.v('LIST', 'transform/store')).body.data.keys).toEqual(['pg']);
    await ok(s, 'transformations/tokenization/sqltok', { stores: ['pg'], allowed_roles: ['sql'] });
    await ok(s, 'role/sql', { transformations: ['sqltok'] });
    // Before the schema exists the store says what to do.
    expect((await s.v('POST', 'transform/encode/sql', { value: 'x' })).body.errors[0]).toMatch(/store "pg": .*does not exist \(run the store's schema operation first\)/);
    expect((await s.v('POST', 'transform/store/pg/schema', { username: 'tok_ddl' })).body.errors[0]).toMatch(/password is required/);
    expect((await s.v('POST', 'transform/store/pg/schema', { username: 'nobody', password: 'x' })).body.errors[0]).toMatch(/store "pg": .*"nobody"/);
    await ok(s, 'store/pg/schema', { username: 'tok_ddl', password: 'ddl-pw', transformation_type: 'tokenization' });
    await ok(s, 'store/pg/schema', { username: 'tok_ddl', password: 'ddl-pw' });
    const plaintext = 'sql-secret-4111111111111111';
    const batch = await s.v('POST', 'transform/encode/sql', { batch_input: [{ value: plaintext, metadata: 'who=bob' }, { value: `${plaintext}-2`, ttl: 60 }] });
    const [t1, t2] = batch.body.data.batch_results.map((r: { encoded_value: string }) => r.encoded_value);
    expect((await s.v('POST', 'transform/decode/sql', { value: t1 })).body.data.decoded_value).toBe(plaintext);
    expect((await s.v('POST', 'transform/validate/sql', { value: t2 })).body.data.valid).toBe(true);
    s.clock.advance(61_000);
    expect((await s.v('POST', 'transform/validate/sql', { value: t2 })).body.data.valid).toBe(false);
    // The runtime user holds only SELECT, INSERT, UPDATE; the rows hold no plaintext, token or metadata.
    const check = new Client({ connectionString: url('tok_runtime', 'run time/pw') });
    await check.connect();
    const rows = (await check.query('SELECT t::text AS row FROM tokens.tokenization_state t')).rows.map((r) => r.row).join('\n');
    expect(rows.split('\n')).toHaveLength(2);
    for (const secret of [plaintext, t1, t2, 'bob']) expect(rows).not.toContain(secret);
    await expect(check.query('DELETE FROM tokens.tokenization_state')).rejects.toThrow(/permission denied/);
    await check.end();
    // Guards: a store a transformation uses stays.
    expect((await s.v('DELETE', 'transform/store/pg')).body.errors[0]).toBe('store "pg" cannot be deleted: it is used by transformation "sqltok"');
    // A convergent transformation on the store: one row per value and expiration, replaced when encoded again.
    await ok(s, 'transformations/tokenization/sqlconv', { stores: ['pg'], allowed_roles: ['sql'], convergent: true });
    await ok(s, 'role/sql', { transformations: ['sqltok', 'sqlconv'] });
    const item = { value: plaintext, transformation: 'sqlconv' };
    const conv = (await s.v('POST', 'transform/encode/sql', item)).body.data.encoded_value;
    const again = await s.v('POST', 'transform/encode/sql', { batch_input: [item, { ...item, metadata: 'who=carol' }] });
    expect(again.body.data.batch_results.map((r: { encoded_value: string }) => r.encoded_value)).toEqual([conv, conv]);
    expect((await s.v('POST', 'transform/decode/sql', { value: conv, transformation: 'sqlconv' })).body.data.decoded_value).toBe(plaintext);
    expect((await s.v('POST', 'transform/tokens/sql', item)).body.data.tokens).toEqual([conv]);
    const rowsOf = new Client({ connectionString: url('tok_runtime', 'run time/pw') });
    await rowsOf.connect();
    expect((await rowsOf.query('SELECT count(*)::int AS n FROM tokens.tokenization_state WHERE transformation = $1', ['sqlconv'])).rows[0].n).toBe(1);
    await rowsOf.end();
  });
});
