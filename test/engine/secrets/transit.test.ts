import { execFileSync } from 'node:child_process';
import { createCipheriv, createDecipheriv, createHash, createHmac, createPublicKey, hkdfSync, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSecrets, SecretsTestServer } from './helpers';
import { isStandardBase64, isVersionedBase64 } from '../../../src/engine/secrets/engines/transit/input';
import { storedText } from '../../helpers/raw-db';
import { STORAGE_KINDS } from '../../helpers/storage';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const payload = (ct: string) => Buffer.from(ct.split(':')[2], 'base64');

describe.each(STORAGE_KINDS)('transit engine (%s)', (kind) => {
  let s: SecretsTestServer;
  const t = async (path: string, body?: unknown, status = 200, method = 'POST') => {
    const res = await s.v(method, `transit/${path}`, body);
    if (res.status !== status) throw new Error(`${path}: ${res.status} ${res.text}`);
    return res.body?.data;
  };

  beforeAll(async () => {
    s = await startSecrets(kind);
    await s.v('POST', 'sys/mounts/transit', { type: 'transit' });
  });
  afterAll(() => s.close());

  test('symmetric keys: encrypt/decrypt, batch, rotate, min versions, rewrap, datakey, derived, upsert, sealed', async () => {
    for (const type of ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305']) {
      const key = await t(`keys/${type}`, { type });
      expect(key).toMatchObject({ type, latest_version: 1, supports_encryption: true, supports_signing: false, deletion_allowed: false });
      const { ciphertext } = await t(`encrypt/${type}`, { plaintext: b64('secret-plaintext-x') });
      expect(ciphertext).toMatch(/^vault:v1:/);
      expect(Buffer.from((await t(`decrypt/${type}`, { ciphertext })).plaintext, 'base64').toString()).toBe('secret-plaintext-x');
    }
    // Upsert: encrypt creates an aes256-gcm96 key.
    const up = await t('encrypt/auto', { plaintext: b64('a') });
    expect(up.key_version).toBe(1);
    expect((await t('keys/auto', undefined, 200, 'GET')).type).toBe('aes256-gcm96');

    const batch = await t('encrypt/auto', { batch_input: [{ plaintext: b64('one'), reference: 'r1' }, { plaintext: b64('two') }] });
    expect(batch.batch_results).toEqual([expect.objectContaining({ reference: 'r1', key_version: 1 }), expect.objectContaining({ key_version: 1 })]);
    const bad = await s.v('POST', 'transit/decrypt/auto', { batch_input: [{ ciphertext: batch.batch_results[0].ciphertext }, { ciphertext: 'vault:v1:AAAA' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.data.batch_results[0].plaintext).toBe(b64('one'));
    expect(bad.body.data.batch_results[1].error).toMatch(/message authentication failed/);

    const old = (await t('encrypt/auto', { plaintext: b64('old') })).ciphertext;
    expect((await t('keys/auto/rotate')).latest_version).toBe(2);
    const rewrapped = (await t('rewrap/auto', { ciphertext: old })).ciphertext;
    expect(rewrapped).toMatch(/^vault:v2:/);
    await t('keys/auto/config', { min_decryption_version: 2 });
    const tooOld = await s.v('POST', 'transit/decrypt/auto', { ciphertext: old });
    expect([tooOld.status, tooOld.body.errors[0]]).toEqual([400, expect.stringMatching(/disallowed by policy/)]);
    expect((await t('decrypt/auto', { ciphertext: rewrapped })).plaintext).toBe(b64('old'));

    const plain = await t('datakey/plaintext/auto', { bits: 512 });
    expect(Buffer.from(plain.plaintext, 'base64')).toHaveLength(64);
    expect((await t('decrypt/auto', { ciphertext: plain.ciphertext })).plaintext).toBe(plain.plaintext);
    expect(await t('datakey/wrapped/auto', {})).not.toHaveProperty('plaintext');

    await t('keys/derived', { type: 'aes256-gcm96', derived: true });
    const ctx = b64('tenant-1');
    const d = (await t('encrypt/derived', { plaintext: b64('p'), context: ctx })).ciphertext;
    expect((await t('decrypt/derived', { ciphertext: d, context: ctx })).plaintext).toBe(b64('p'));
    expect((await s.v('POST', 'transit/decrypt/derived', { ciphertext: d, context: b64('tenant-2') })).status).toBe(400);
    expect((await s.v('POST', 'transit/encrypt/derived', { plaintext: b64('p') })).body.errors[0]).toMatch(/^context: missing/);
    // Vault's ciphertext layout: nonce | data | tag.
    expect(payload(d)).toHaveLength(12 + 1 + 16);

    // associated_data is authenticated, not stored: decryption needs the same.
    const aad = b64('order-17');
    const withAad = (await t('encrypt/derived', { plaintext: b64('q'), context: ctx, associated_data: aad })).ciphertext;
    expect((await t('decrypt/derived', { ciphertext: withAad, context: ctx, associated_data: aad })).plaintext).toBe(b64('q'));
    for (const other of [undefined, b64('order-18')]) {
      expect((await s.v('POST', 'transit/decrypt/derived', { ciphertext: withAad, context: ctx, associated_data: other })).body.errors).toEqual(['ciphertext: cipher: message authentication failed']);
    }

    const errors: Array<[string, unknown, RegExp]> = [
      ['keys/x1', { type: 'des' }, /^type: must be one of/],
      ['keys/x1', { type: 'ed25519', derived: true }, /^derived: key derivation is only supported/],
      ['encrypt/auto', { plaintext: 'not base64!' }, /^plaintext: must be base64/],
      ['encrypt/auto', {}, /^plaintext is required/],
      ['decrypt/auto', { ciphertext: 'v1:abc' }, /^ciphertext: must look like vault:v<version>:<base64>/],
      ['datakey/secret/auto', {}, /must be plaintext or wrapped/],
      ['datakey/plaintext/auto', { bits: 100 }, /^bits: must be 128, 256 or 512/],
      ['keys/auto/config', { min_decryption_version: 9 }, /cannot be above the latest version/],
    ];
    for (const [path, body, message] of errors) {
      const res = await s.v('POST', `transit/${path}`, body);
      expect([path, res.status, res.body.errors[0]]).toEqual([path, 400, expect.stringMatching(message)]);
    }
    expect((await s.v('POST', 'transit/decrypt/none', { ciphertext: old })).status).toBe(404);
    const del = await s.v('DELETE', 'transit/keys/auto');
    expect([del.status, del.body.errors[0]]).toEqual([400, expect.stringMatching(/deletion is not allowed/)]);
    await t('keys/auto/config', { deletion_allowed: true });
    expect((await s.v('DELETE', 'transit/keys/auto')).status).toBe(204);
    expect((await s.v('LIST', 'transit/keys')).body.data.keys).toEqual(['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'derived']);
    expect(await storedText(s.engine.storage, s.dataDir)).not.toContain('secret-plaintext-x');
  });

  test('signatures verify with node:crypto and OpenSSL; hmac, hash, random; permissions', async () => {
    const input = b64('message to sign');
    const dir = mkdtempSync(join(tmpdir(), 'transit-'));
    try {
      for (const type of ['ed25519', 'ecdsa-p256', 'ecdsa-p384', 'rsa-2048']) {
        const key = await t(`keys/${type}`, { type });
        const pub = key.keys['1'].public_key as string;
        const pubKey = type === 'ed25519' ? createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(pub, 'base64').toString('base64url') }, format: 'jwk' }) : createPublicKey(pub);
        const { signature } = await t(`sign/${type}/sha2-384`, { input });
        expect(signature).toMatch(/^vault:v1:/);
        const raw = payload(signature);
        const hash = type === 'ed25519' ? null : 'sha384';
        const opts = type.startsWith('rsa') ? { key: pubKey, padding: 6, saltLength: -2 } : pubKey;
        expect(verify(hash, Buffer.from('message to sign'), opts, raw)).toBe(true);
        expect((await t(`verify/${type}/sha2-384`, { input, signature })).valid).toBe(true);
        expect((await t(`verify/${type}/sha2-384`, { input: b64('other'), signature })).valid).toBe(false);
        if (type !== 'ed25519') {
          const pem = pubKey.export({ type: 'spki', format: 'pem' }).toString();
          writeFileSync(join(dir, 'pub.pem'), pem);
          writeFileSync(join(dir, 'msg'), 'message to sign');
          writeFileSync(join(dir, 'sig'), raw);
          const extra = type.startsWith('rsa') ? ['-sigopt', 'rsa_padding_mode:pss', '-sigopt', 'rsa_pss_saltlen:-2'] : [];
          const out = execFileSync('openssl', ['dgst', '-sha384', ...extra, '-verify', join(dir, 'pub.pem'), '-signature', join(dir, 'sig'), join(dir, 'msg')]).toString();
          expect(out).toMatch(/Verified OK/);
        }
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const jws = (await t('sign/ecdsa-p256', { input, marshaling_algorithm: 'jws' })).signature;
    expect(payload(jws.replace(/-/g, '+').replace(/_/g, '/'))).toHaveLength(64);
    expect((await t('verify/ecdsa-p256', { input, signature: jws, marshaling_algorithm: 'jws' })).valid).toBe(true);
    const pkcs = (await t('sign/rsa-2048', { input, signature_algorithm: 'pkcs1v15' })).signature;
    expect((await t('verify/rsa-2048', { input, signature: pkcs, signature_algorithm: 'pkcs1v15' })).valid).toBe(true);

    await t('keys/mac', { type: 'hmac', key_size: 64 });
    const { hmac } = await t('hmac/mac/sha2-512', { input });
    expect(hmac).toMatch(/^vault:v1:/);
    expect(payload(hmac)).toHaveLength(64);
    expect((await t('verify/mac/sha2-512', { input, hmac })).valid).toBe(true);
    expect((await t('verify/mac', { input, hmac })).valid).toBe(false);
    expect((await s.v('POST', 'transit/sign/mac', { input })).body.errors[0]).toMatch(/does not support signing/);
    expect((await s.v('POST', 'transit/encrypt/mac', { plaintext: input })).body.errors[0]).toMatch(/does not support encryption/);

    expect((await t('hash/sha2-256', { input: b64('abc') })).sum).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(Buffer.from((await t('random/16', {})).random_bytes, 'base64')).toHaveLength(16);
    expect((await t('random/8/hex', {})).random_bytes).toMatch(/^[0-9a-f]{16}$/);

    const user = await s.tokenWith('path "transit/encrypt/ed25519" { capabilities = ["update"] }\npath "transit/encrypt/new" { capabilities = ["update"] }');
    expect((await s.v('POST', 'transit/decrypt/rsa-2048', { ciphertext: 'vault:v1:AA==' }, user)).status).toBe(403);
    // Upserting a key needs `create`, not only `update`.
    expect((await s.v('POST', 'transit/encrypt/new', { plaintext: input }, user)).status).toBe(403);
    const rsa = (await t('encrypt/rsa-2048', { plaintext: input })).ciphertext;
    expect((await t('decrypt/rsa-2048', { ciphertext: rsa })).plaintext).toBe(input);
  });

  test('prehashed: the digest of a message signs as the message does (node:crypto, OpenSSL), batch, errors', async () => {
    const msg = Buffer.from('prehashed message');
    const digest = (h: string) => createHash(h).update(msg).digest().toString('base64');
    const input = msg.toString('base64');
    const dir = mkdtempSync(join(tmpdir(), 'transit-ph-'));
    const cases = [
      { type: 'rsa-2048', hash: 'sha256', alg: 'sha2-256', extra: { signature_algorithm: 'pss' } },
      { type: 'rsa-3072', hash: 'sha512', alg: 'sha2-512', extra: {} }, // PSS by default
      { type: 'rsa-2048', hash: 'sha384', alg: 'sha2-384', extra: { signature_algorithm: 'pkcs1v15' } },
    ];
    try {
      for (const { type, hash, alg, extra } of cases) {
        const name = `ph-${type}`;
        const pem = (await t(`keys/${name}`, { type })).keys['1'].public_key as string;
        const opts = { ...extra, hash_algorithm: alg };
        const { signature } = await t(`sign/${name}`, { ...opts, input: digest(hash), prehashed: true });
        // The same signature verifies on the message itself: Hangar, node:crypto, OpenSSL.
        expect((await t(`verify/${name}`, { ...opts, input, signature })).valid).toBe(true);
        expect((await t(`verify/${name}`, { ...opts, input: digest(hash), signature, prehashed: true })).valid).toBe(true);
        expect((await t(`verify/${name}`, { ...opts, input: createHash(hash).update('x').digest('base64'), signature, prehashed: 'true' })).valid).toBe(false);
        const raw = Buffer.from(signature.split(':')[2], 'base64');
        const pss = (opts as { signature_algorithm?: string }).signature_algorithm !== 'pkcs1v15'; // PSS is the default
        expect(verify(hash, msg, { key: pem, padding: pss ? 6 : 1, saltLength: -2 }, raw)).toBe(true);
        // A message signature verifies as prehashed, too.
        const plain = (await t(`sign/${name}`, { ...opts, input })).signature;
        expect((await t(`verify/${name}`, { ...opts, input: digest(hash), signature: plain, prehashed: true })).valid).toBe(true);
        writeFileSync(join(dir, 'pub.pem'), pem);
        writeFileSync(join(dir, 'msg'), msg);
        writeFileSync(join(dir, 'sig'), raw);
        const sigopt = pss ? ['-sigopt', 'rsa_padding_mode:pss', '-sigopt', 'rsa_pss_saltlen:-2'] : [];
        const out = execFileSync('openssl', ['dgst', `-${hash}`, ...sigopt, '-verify', join(dir, 'pub.pem'), '-signature', join(dir, 'sig'), join(dir, 'msg')]).toString();
        expect(out).toMatch(/Verified OK/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // batch: each item checked on its own; a wrong-size digest fails in its place (Vault: still a 200 for sign and verify).
    const batch = await s.v('POST', 'transit/sign/ph-rsa-2048', {
      prehashed: true,
      signature_algorithm: 'pkcs1v15',
      batch_input: [{ input: digest('sha256'), reference: 'a' }, { input: digest('sha384'), reference: 'b' }],
    });
    expect(batch.status).toBe(200);
    const [ok, bad] = batch.body.data.batch_results;
    expect(ok.reference).toBe('a');
    expect(bad).toEqual({ error: expect.stringMatching(/input: .*sha2-256 digest of 32 bytes \(got 48\)/), reference: 'b' });
    const checked = await t('verify/ph-rsa-2048', {
      prehashed: true,
      signature_algorithm: 'pkcs1v15',
      batch_input: [{ input: digest('sha256'), signature: ok.signature }, { input: digest('sha512'), signature: ok.signature, reference: 'c' }],
    });
    expect(checked.batch_results[0]).toEqual({ valid: true });
    expect(checked.batch_results[1].error).toMatch(/got 64/);
    // single: a wrong-size digest is a 400 naming the field; EC and ed25519 keys refuse prehashed
    // (node:crypto cannot sign a digest with them), for sign and verify alike.
    const short = await s.v('POST', 'transit/sign/ph-rsa-2048', { input: b64('short'), prehashed: true });
    expect(short.status).toBe(400);
    expect(short.body.errors[0]).toMatch(/^input: .*32 bytes \(got 5\)/);
    await t('keys/ph-ec', { type: 'ecdsa-p256' });
    await t('keys/ph-ed', { type: 'ed25519' });
    for (const [name, pattern] of [['ph-ec', /^prehashed: ecdsa-p256 keys sign the message itself/], ['ph-ed', /^prehashed: .*ed25519/]] as const) {
      for (const op of ['sign', 'verify']) {
        const refused = await s.v('POST', `transit/${op}/${name}`, { input: digest('sha256'), prehashed: true, signature: 'vault:v1:AAAA' });
        expect(refused.status).toBe(400);
        expect(refused.body.errors[0]).toMatch(pattern);
      }
    }
  });

  test('keys kept in memory: unique nonces, rotation, config, restore and derived keys apply at once', async () => {
    await t('keys/mem', { exportable: true });
    // More plaintexts than one draw of random bytes has nonces for: every nonce differs, all decrypt.
    const many = await t('encrypt/mem', { batch_input: Array.from({ length: 1000 }, (_, i) => ({ plaintext: b64(`p${i}`) })) });
    const ciphertexts: string[] = many.batch_results.map((r: { ciphertext: string }) => r.ciphertext);
    expect(new Set(ciphertexts.map((c) => payload(c).subarray(0, 12).toString('hex'))).size).toBe(1000);
    const back = await t('decrypt/mem', { batch_input: ciphertexts.map((ciphertext) => ({ ciphertext })) });
    expect(back.batch_results.map((r: { plaintext: string }) => Buffer.from(r.plaintext, 'base64').toString())).toEqual(ciphertexts.map((_, i) => `p${i}`));

    // Rotation: the next request encrypts and MACs with version 2; version 1 still opens until the config says otherwise.
    const v1 = (await t('encrypt/mem', { plaintext: b64('one') })).ciphertext;
    const mac1 = (await t('hmac/mem', { input: b64('m') })).hmac;
    await t('keys/mem/rotate');
    const v2 = (await t('encrypt/mem', { plaintext: b64('two') })).ciphertext;
    expect([v2, (await t('hmac/mem', { input: b64('m') })).hmac]).toEqual([expect.stringMatching(/^vault:v2:/), expect.stringMatching(/^vault:v2:/)]);
    expect((await t('verify/mem', { input: b64('m'), hmac: mac1 })).valid).toBe(true);
    expect((await t('rewrap/mem', { batch_input: [{ ciphertext: v1, reference: 'r' }] })).batch_results).toEqual([
      { ciphertext: expect.stringMatching(/^vault:v2:/), key_version: 2, reference: 'r' },
    ]);
    expect((await t('decrypt/mem', { ciphertext: v1 })).plaintext).toBe(b64('one'));
    await t('keys/mem/config', { min_decryption_version: 2 });
    expect((await s.v('POST', 'transit/decrypt/mem', { ciphertext: v1 })).body.errors[0]).toMatch(/disallowed by policy/);
    // A refused change leaves the key as it was.
    expect((await s.v('POST', 'transit/keys/mem/config', { min_decryption_version: 1, min_encryption_version: 9 })).status).toBe(400);
    expect((await t('keys/mem', undefined, 200, 'GET')).min_decryption_version).toBe(2);

    // Restoring another key over it: the restored key serves the next request.
    await t('keys/other', { exportable: true, allow_plaintext_backup: true });
    const fromOther = (await t('encrypt/other', { plaintext: b64('o') })).ciphertext;
    await t('restore/mem', { backup: (await t('backup/other', undefined, 200, 'GET')).backup, force: true }, 204);
    expect((await t('decrypt/mem', { ciphertext: fromOther })).plaintext).toBe(b64('o'));
    expect((await s.v('POST', 'transit/decrypt/mem', { ciphertext: v2 })).body.errors[0]).toMatch(/invalid key version 2/);

    // Derived keys, one per context (HKDF-SHA256, the context as info, as Vault), repeated contexts in a batch.
    await t('keys/tenants', { derived: true, exportable: true });
    const contexts = ['a', 'b', 'a', 'c', 'b'].map(b64);
    const enc = (await t('encrypt/tenants', { batch_input: contexts.map((context, i) => ({ plaintext: b64(`t${i}`), context })) })).batch_results;
    const dec = await t('decrypt/tenants', { batch_input: enc.map((r: { ciphertext: string }, i: number) => ({ ciphertext: r.ciphertext, context: contexts[i] })) });
    expect(dec.batch_results.map((r: { plaintext: string }) => r.plaintext)).toEqual(contexts.map((_, i) => b64(`t${i}`)));
    const wrong = await s.v('POST', 'transit/decrypt/tenants', { batch_input: [{ ciphertext: enc[0].ciphertext, context: b64('b') }] });
    expect(wrong.body.data.batch_results[0].error).toMatch(/message authentication failed/);
    const base = Buffer.from((await t('export/encryption-key/tenants/1', undefined, 200, 'GET')).keys['1'], 'base64');
    const raw = payload(enc[1].ciphertext);
    const derived = Buffer.from(hkdfSync('sha256', base, Buffer.alloc(0), Buffer.from('b'), 32));
    const decipher = createDecipheriv('aes-256-gcm', derived, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    expect(Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString()).toBe('t1');
    // A new version derives other keys for the same context; both versions open.
    await t('keys/tenants/rotate');
    const again = (await t('encrypt/tenants', { plaintext: b64('t0'), context: contexts[0] })).ciphertext;
    expect(again).toMatch(/^vault:v2:/);
    for (const ciphertext of [again, enc[0].ciphertext]) expect((await t('decrypt/tenants', { ciphertext, context: contexts[0] })).plaintext).toBe(b64('t0'));
  });

  test('batches as Vault codes them: encrypt and decrypt 400 or partial_failure_response_code, the others 200; items fail in their place', async () => {
    await t('keys/batch', {});
    const good = b64('good');
    // A plaintext that is not base64 fails in its place, the other items are encrypted.
    const enc = await s.v('POST', 'transit/encrypt/batch', { batch_input: [{ plaintext: good, reference: 'a' }, { plaintext: 'not base64!', reference: 'b' }] });
    expect(enc.status).toBe(400);
    expect(enc.body.data.batch_results).toEqual([
      { ciphertext: expect.stringMatching(/^vault:v1:/), key_version: 1, reference: 'a' },
      { error: 'plaintext: must be base64', reference: 'b' },
    ]);
    const ct = enc.body.data.batch_results[0].ciphertext;
    // partial_failure_response_code replaces the 400 when some items succeeded, never when all failed.
    const partial = await s.v('POST', 'transit/decrypt/batch', { partial_failure_response_code: 207, batch_input: [{ ciphertext: ct }, { ciphertext: 'vault:v1:AAAA' }] });
    expect([partial.status, partial.body.data.batch_results[0]]).toEqual([207, { plaintext: good }]);
    const allBad = await s.v('POST', 'transit/decrypt/batch', { partial_failure_response_code: 207, batch_input: [{ ciphertext: 'vault:v1:AAAA' }] });
    expect(allBad.status).toBe(400);
    const outOfRange = await s.v('POST', 'transit/encrypt/batch', { partial_failure_response_code: 999, batch_input: [{ plaintext: good }, { plaintext: '%' }] });
    expect([outOfRange.status, outOfRange.body.warnings]).toEqual([400, [expect.stringMatching(/invalid HTTP response code override/)]]);
    expect((await t('encrypt/batch', { partial_failure_response_code: 207, batch_input: [{ plaintext: good }] })).batch_results).toHaveLength(1);
    // rewrap, sign, verify and hmac answer 200 with the errors in place.
    const rewrap = await t('rewrap/batch', { batch_input: [{ ciphertext: ct }, { ciphertext: 'garbage' }, {}] });
    expect(rewrap.batch_results.map((r: { error?: string }) => r.error)).toEqual([undefined, expect.stringMatching(/^ciphertext: must look like/), 'ciphertext is required']);
    const mac = await t('hmac/batch', { batch_input: [{ input: good }, { input: '*' }, {}] });
    expect(mac.batch_results.map((r: { error?: string }) => r.error)).toEqual([undefined, 'input: must be base64', 'input is required']);
    await t('keys/batch-sig', { type: 'ecdsa-p256' });
    const signed = await t('sign/batch-sig', { batch_input: [{ input: good }, { input: '!' }] });
    expect(signed.batch_results[1]).toEqual({ error: 'input: must be base64' });
    const checked = await t('verify/batch-sig', { batch_input: [{ input: good, signature: signed.batch_results[0].signature }, { input: good, signature: 'nope' }] });
    expect(checked.batch_results).toEqual([{ valid: true }, { error: expect.stringMatching(/^signature: must look like/) }]);
    // What fails the whole request, as Vault: mixed contexts, mixed signature and hmac, an empty batch.
    const refused: Array<[string, unknown, RegExp]> = [
      ['encrypt/batch', { batch_input: [{ plaintext: good, context: b64('c') }, { plaintext: good }] }, /^context: should be set either in all the request blocks or in none/],
      ['rewrap/batch', { batch_input: [{ ciphertext: ct }, { ciphertext: ct, context: b64('c') }] }, /^context: should be set either/],
      ['verify/batch-sig', { batch_input: [{ input: good, signature: 'x' }, { input: good, hmac: 'y' }] }, /must all provide either 'signature', 'hmac' or 'cmac'/],
      ['verify/batch-sig', { batch_input: [{ input: good, signature: 'x' }, { input: good }] }, /some elements of batch_input are missing 'signature'/],
      ['verify/batch-sig', { input: good }, /^missing 'signature', 'hmac' or 'cmac'/],
      ['encrypt/batch', { batch_input: [] }, /missing batch input to process/],
      ['encrypt/batch', { plaintext: good, nonce: b64('123456789012') }, /^nonce: provided nonce not allowed for this key/],
    ];
    for (const [path, body, message] of refused) {
      const res = await s.v('POST', `transit/${path}`, body);
      expect([path, res.status, res.body.errors?.[0]]).toEqual([path, 400, expect.stringMatching(message)]);
    }
  });

  test('convergent encryption: the same plaintext and context encrypt alike (Vault\'s version 3 derivation); cache-config; hmac key_size', async () => {
    await t('keys/conv', { derived: true, convergent_encryption: true, exportable: true });
    const read = await t('keys/conv', undefined, 200, 'GET');
    expect(read).toMatchObject({ derived: true, convergent_encryption: true, convergent_encryption_version: -1, kdf: 'hkdf_sha256' });
    const ctx = b64('tenant');
    const one = (await t('encrypt/conv', { plaintext: b64('same'), context: ctx })).ciphertext;
    const two = (await t('encrypt/conv', { batch_input: [{ plaintext: b64('same'), context: ctx }, { plaintext: b64('other'), context: ctx }] })).batch_results;
    expect(two[0].ciphertext).toBe(one);
    expect(two[1].ciphertext).not.toBe(one);
    expect((await t('encrypt/conv', { plaintext: b64('same'), context: b64('elsewhere') })).ciphertext).not.toBe(one);
    expect((await t('decrypt/conv', { ciphertext: one, context: ctx })).plaintext).toBe(b64('same'));
    // The derivation, recomputed with node:crypto from the exported key: HKDF-SHA256 (context as info)
    // gives the AES key and 32 bytes of HMAC key; the nonce is HMAC-SHA256(plaintext) cut to 12 bytes.
    const base = Buffer.from((await t('export/encryption-key/conv/1', undefined, 200, 'GET')).keys['1'], 'base64');
    const both = Buffer.from(hkdfSync('sha256', base, Buffer.alloc(0), Buffer.from('tenant'), 64));
    const nonce = createHmac('sha256', both.subarray(32)).update('same').digest().subarray(0, 12);
    const cipher = createCipheriv('aes-256-gcm', both.subarray(0, 32), nonce);
    const expected = Buffer.concat([nonce, cipher.update('same'), cipher.final(), cipher.getAuthTag()]);
    expect(payload(one)).toEqual(expected);
    // Upsert: a context makes a derived key, convergent_encryption a convergent one.
    await t('encrypt/conv-up', { plaintext: b64('x'), context: ctx, convergent_encryption: true });
    expect(await t('keys/conv-up', undefined, 200, 'GET')).toMatchObject({ derived: true, convergent_encryption: true });
    expect((await t('keys/plain', {})).convergent_encryption).toBeUndefined();
    expect((await t('keys/der', { derived: true })).convergent_encryption).toBe(false);
    for (const [path, body, message] of [
      ['keys/conv-bad', { convergent_encryption: true }, /^convergent_encryption: convergent encryption requires derivation/],
      ['encrypt/conv-bad', { plaintext: b64('x'), convergent_encryption: true }, /^convergent_encryption: convergent encryption requires derivation to be enabled, so context is required/],
    ] as const) {
      const res = await s.v('POST', `transit/${path}`, body);
      expect([res.status, res.body.errors[0]]).toEqual([400, expect.stringMatching(message)]);
    }

    expect(await t('cache-config', undefined, 200, 'GET')).toEqual({ size: 0 });
    expect(await t('cache-config', { size: 500 })).toEqual({ size: 500 });
    expect(await t('cache-config', undefined, 200, 'GET')).toEqual({ size: 500 });
    const small = await s.v('POST', 'transit/cache-config', { size: 5 });
    expect([small.status, small.body.errors[0]]).toEqual([400, 'size: must be 0 or a value greater or equal to 10']);

    // hmac keys show their size (Terraform reads it), 32 bytes unless asked; Vault takes 32 to 512.
    const mac = await t('keys/mac-default', { type: 'hmac' });
    expect([mac.key_size, mac.keys]).toEqual([32, undefined]);
    // Asymmetric versions: Vault's names (Go's curve names for ECDSA) and an empty certificate chain.
    for (const [type, name] of [['ecdsa-p384', 'P-384'], ['ed25519', 'ed25519'], ['rsa-2048', 'rsa-2048']]) {
      expect((await t(`keys/names-${type}`, { type })).keys['1']).toMatchObject({ name, certificate_chain: '', public_key: expect.any(String) });
    }
    expect((await t('keys/mac-big', { type: 'hmac', key_size: 128 })).key_size).toBe(128);
    expect((await t('keys/mac-big/rotate')).key_size).toBe(128);
    expect((await s.v('POST', 'transit/keys/mac-small', { type: 'hmac', key_size: 16 })).status).toBe(400);
    expect(await t('keys/plain', undefined, 200, 'GET')).not.toHaveProperty('key_size');
    // 0 is "not given", as Vault reads it (its Terraform provider sends key_size 0 for every key type).
    expect((await t('keys/aes-size-zero', { type: 'aes256-gcm96', key_size: 0 })).type).toBe('aes256-gcm96');
    expect((await t('keys/mac-size-zero', { type: 'hmac', key_size: '0' })).key_size).toBe(32);
  });

  test('export, backup and restore, trim', async () => {
    await t('keys/exp', { type: 'aes256-gcm96' });
    const notExportable = await s.v('GET', 'transit/export/encryption-key/exp');
    expect([notExportable.status, notExportable.body.errors[0]]).toEqual([400, expect.stringMatching(/not exportable/)]);
    await t('keys/exp/config', { exportable: true, allow_plaintext_backup: true });
    const { ciphertext } = await t('encrypt/exp', { plaintext: b64('exported') });
    const key = Buffer.from((await t('export/encryption-key/exp/latest', undefined, 200, 'GET')).keys['1'], 'base64');
    // The exported key decrypts the ciphertext with node:crypto alone: Vault's layout, nonce | data | tag.
    const raw = payload(ciphertext);
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(raw.length - 16));
    expect(Buffer.concat([decipher.update(raw.subarray(12, raw.length - 16)), decipher.final()]).toString()).toBe('exported');
    expect((await s.v('POST', 'transit/keys/exp/config', { exportable: false })).status).toBe(400);

    await t('keys/edk', { type: 'ed25519', exportable: true });
    const pub = (await t('export/public-key/edk', undefined, 200, 'GET')).keys['1'];
    const signing = Buffer.from((await t('export/signing-key/edk', undefined, 200, 'GET')).keys['1'], 'base64');
    expect(signing.subarray(32).toString('base64')).toBe(pub);

    const { backup } = await t('backup/exp', undefined, 200, 'GET');
    await t('restore/copy', { backup }, 204);
    expect((await t('decrypt/copy', { ciphertext })).plaintext).toBe(b64('exported'));
    expect((await s.v('POST', 'transit/restore/copy', { backup })).body.errors[0]).toMatch(/already exists: set force/);
    expect((await s.v('POST', 'transit/restore', { backup: b64('{}') })).body.errors[0]).toMatch(/not a transit key backup/);

    await t('keys/copy/rotate');
    await t('keys/copy/rotate');
    const early = await s.v('POST', 'transit/keys/copy/trim', { min_available_version: 2 });
    expect([early.status, early.body.errors[0]]).toEqual([400, expect.stringMatching(/min_available_version: must not be above min_decryption_version/)]);
    await t('keys/copy/config', { min_decryption_version: 2 });
    const trimmed = await t('keys/copy/trim', { min_available_version: 2 });
    expect([Object.keys(trimmed.keys), trimmed.min_available_version]).toEqual([['2', '3'], 2]);

    // auto_rotate_period: the background job makes a new version once the period passed.
    await t('keys/auto-rot', { auto_rotate_period: '1h' });
    expect((await s.v('POST', 'transit/keys/x2', { auto_rotate_period: '10m' })).body.errors[0]).toMatch(/^auto_rotate_period: must be 0/);
    await s.engine.scheduler.runOnce();
    expect((await t('keys/auto-rot', undefined, 200, 'GET')).latest_version).toBe(1);
    s.clock.advance(3600_000);
    await s.engine.scheduler.runOnce();
    expect((await t('keys/auto-rot', undefined, 200, 'GET')).latest_version).toBe(2);
  });
});

describe('transit input', () => {
  test('base64 is told from its decoding as the regular expression tells it', () => {
    const pattern = (text: string) => text.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(text);
    const check = (text: string) => expect([text, isStandardBase64(text, Buffer.from(text, 'base64'))]).toEqual([text, pattern(text)]);
    // Every character in every place of short strings with and without padding (non-base64 ones are
    // skipped or truncated by the decoder, base64url's are read as base64).
    const odd = [0, 9, 10, 13, 32, 0x2d, 0x5f, 0x2e, 0x3d, 0x7f, 0x80, 0xe9, 0xff, 0x100, 0x141, 0x3d3, 0xd800, 0xdc00, 0xfeff, 0xff0b];
    const chars = [...Array.from({ length: 128 }, (_, i) => i), ...odd].map((c) => String.fromCharCode(c));
    for (const text of ['QUFB', 'QUE=', 'QQ==', 'QUFBQUFB', 'QUFBQQ==']) {
      for (let i = 0; i < text.length; i++) for (const c of chars) check(text.slice(0, i) + c + text.slice(i + 1));
    }
    for (const text of ['', '=', '==', '===', 'Q===', 'QQ=A', 'QUFB\n', ' QUFB', 'QUFB====', 'QUFB😀AA', 'QU-B', 'QU_B', 'QUFBQQ']) check(text);
  });

  test("a ciphertext's base64 is told from its decoding as the regular expression tells it", () => {
    const pattern = (text: string) => /^[A-Za-z0-9+/_-]*={0,2}$/.test(text);
    const decode = (text: string) => Buffer.from(text, text.includes('-') || text.includes('_') ? 'base64url' : 'base64');
    const check = (text: string) => expect([text, isVersionedBase64(text, decode(text))]).toEqual([text, pattern(text)]);
    const odd = [0, 9, 10, 13, 32, 0x2d, 0x5f, 0x2e, 0x3d, 0x7f, 0x80, 0xe9, 0xff, 0x100, 0x141, 0x3d3, 0xd800, 0xdc00, 0xfeff, 0xff0b];
    const chars = [...Array.from({ length: 128 }, (_, i) => i), ...odd].map((c) => String.fromCharCode(c));
    // Unpadded lengths of every remainder, base64url, padding in and out of place.
    for (const text of ['QUFB', 'QUE=', 'QQ==', 'QUFBQ', 'QUFBQQ', 'QUFBQUE', 'QU-_QQ', 'QUFBQUFB', 'QUFBQQ==']) {
      for (let i = 0; i < text.length; i++) for (const c of chars) check(text.slice(0, i) + c + text.slice(i + 1));
      for (const c of chars) check(text + c);
    }
    for (const text of ['', '=', '==', '===', 'Q', 'Q=', 'Q===', 'QQ=A', 'QUFB\n', ' QUFB', 'QUFB====', 'QUFB😀AA', 'QU-B', 'QU_B', 'QU+-']) check(text);
  });
});
