import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TerraformStack } from 'cdktf';
import { KvMount, KvSecret, KvVersion, SecretsMount, TokenRole, TokenRoleTokenType, TransitKey, TransitKeyType } from '../../src';
import { kvValueHash } from '../../src/reconcile/kv-value';
import { decodePayload } from '../../src/reconcile/payload';
import { byPath, Synth, synth } from '../helpers/synth';

function payloads(s: Synth) {
  return Object.values(s.resource.null_resource)
    .filter((r) => r.triggers?.identity !== undefined)
    .map((r) => decodePayload(r.triggers.payload));
}

const dir = mkdtempSync(join(tmpdir(), 'kv-constructs-'));
const file = join(dir, 'db.json');
writeFileSync(file, '{"password": "file-held-secret-value"}');

const stack = (st: TerraformStack) => {
  const kv = new KvMount(st, 'Kv', { path: 'team/kv', maxVersions: 5, casRequired: false, deleteVersionAfter: '30d', description: 'team secrets' });
  new KvSecret(st, 'Api', { mount: kv, path: 'app/api', valueEnv: 'APP_API_SECRET' });
  new KvSecret(st, 'Db', { mount: kv, path: '/app/db/', valueFile: file });
  const transit = new SecretsMount(st, 'Transit', { path: 'transit', type: 'transit' });
  new TransitKey(st, 'Key', { mount: transit, name: 'orders', type: TransitKeyType.ED25519, exportable: true, autoRotatePeriod: '30d' });
  new TokenRole(st, 'Role', { name: 'ci', allowedPolicies: ['Deploy', 'read'], orphan: true, tokenPeriod: '1h', pathSuffix: 'pipelines' });
};

describe('kv, transit key and token role constructs', () => {
  beforeEach(() => (process.env.APP_API_SECRET = '{"token": "env-held-secret-value"}'));
  afterEach(() => delete process.env.APP_API_SECRET);

  test('each renders its kind with the desired state; values only as their hash', () => {
    const all = payloads(synth(stack));
    const of = (kind: string) => all.filter((p) => p.kind === kind);
    expect(of('secrets.kv-mount')).toEqual([
      expect.objectContaining({ key: 'team/kv', desired: { version: 2, description: 'team secrets', defaultLeaseTtl: 0, maxLeaseTtl: 0, maxVersions: 5, casRequired: false, deleteVersionAfter: 2592000 } }),
    ]);
    expect(of('secrets.kv-secret').map((p) => [p.key, p.desired])).toEqual([
      ['team/kv:app/api', { valueEnv: 'APP_API_SECRET', valueHash: kvValueHash({ token: 'env-held-secret-value' }) }],
      ['team/kv:app/db', { valueFile: file, valueHash: kvValueHash({ password: 'file-held-secret-value' }) }],
    ]);
    expect(of('secrets.transit-key')[0]).toMatchObject({
      key: 'transit/orders',
      desired: { type: 'ed25519', derived: false, exportable: true, deletionAllowed: false, minDecryptionVersion: 1, minEncryptionVersion: 0, autoRotatePeriod: 2592000 },
    });
    expect(of('secrets.token-role')[0]).toMatchObject({
      key: 'ci',
      desired: { allowedPolicies: ['deploy', 'read'], orphan: true, renewable: true, tokenPeriod: 3600, pathSuffix: 'pipelines', tokenType: 'default-service' },
    });
    const s = synth(stack);
    expect(JSON.stringify(byPath(s, 'Db/Resource/Identity').depends_on)).toMatch(/Kv_.*Config/);
    expect(JSON.stringify(byPath(s, 'Key/Resource/Identity').depends_on)).toMatch(/Transit_.*Config/);
    const raw = JSON.stringify(s);
    expect(raw).not.toContain('env-held-secret-value');
    expect(raw).not.toContain('file-held-secret-value');
  });

  test('a value unreadable at synthesis is read at deploy time: no hash', () => {
    delete process.env.APP_API_SECRET;
    expect(payloads(synth(stack)).find((p) => p.key === 'team/kv:app/api')?.desired).toEqual({ valueEnv: 'APP_API_SECRET' });
  });

  test('validation at construction names the bad value and the fix', () => {
    const kv = (st: TerraformStack) => new KvMount(st, 'K', { path: 'kv' });
    const cases: Array<[(st: TerraformStack) => void, RegExp]> = [
      [(st) => new KvMount(st, 'K', { path: 'kv', version: KvVersion.V1, maxVersions: 3 }), /need version 2/],
      [(st) => new KvMount(st, 'K', { path: 'kv', maxVersions: -1 }), /maxVersions -1 is invalid/],
      [(st) => new KvMount(st, 'K', { path: 'bad path' }), /KvMount path "bad path" is invalid/],
      [(st) => new KvSecret(st, 'S', { mount: kv(st), path: 'a/../b', valueEnv: 'X' }), /KvSecret path "a\/..\/b" is invalid/],
      [(st) => new KvSecret(st, 'S', { mount: kv(st), path: 'a' }), /give exactly one of valueEnv and valueFile/],
      [(st) => new KvSecret(st, 'S', { mount: kv(st), path: 'a', valueEnv: 'the value' }), /not an environment variable name/],
      [
        (st) => {
          process.env.APP_API_SECRET = 'not json';
          new KvSecret(st, 'S', { mount: kv(st), path: 'a', valueEnv: 'APP_API_SECRET' });
        },
        /does not hold JSON/,
      ],
      [(st) => new TransitKey(st, 'T', { name: 'k', type: TransitKeyType.ED25519, derived: true }), /derived keys need an aes or chacha20 type/],
      [(st) => new TransitKey(st, 'T', { name: 'k', autoRotatePeriod: '10m' }), /autoRotatePeriod "10m" is too short/],
      [(st) => new TransitKey(st, 'T', { name: 'k', mount: new SecretsMount(st, 'M', { path: 'pki', type: 'pki' }) }), /"pki" mount/],
      [(st) => new TokenRole(st, 'R', { name: 'bad name' }), /TokenRole name "bad name" is invalid/],
      [(st) => new TokenRole(st, 'R', { name: 'r', tokenType: TokenRoleTokenType.BATCH }), /batch tokens must be orphans/],
      [(st) => new TokenRole(st, 'R', { name: 'r', pathSuffix: '../x' }), /pathSuffix "..\/x" is invalid/],
    ];
    for (const [build, message] of cases) expect(() => synth(build)).toThrow(message);
  });
});
