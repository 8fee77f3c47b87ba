import { TerraformStack } from 'cdktf';
import {
  SecretsMount,
  TokenizationMappingMode,
  TransformAlphabet,
  TransformationType,
  TransformRole,
  TransformStore,
  TransformTemplate,
  TransformTransformation,
  TweakSource,
} from '../../src';
import { decodePayload } from '../../src/reconcile/payload';
import { byPath, Synth, synth } from '../helpers/synth';

function payloads(s: Synth) {
  return Object.values(s.resource.null_resource)
    .filter((r) => r.triggers?.identity !== undefined)
    .map((r) => decodePayload(r.triggers.payload));
}

const stack = (st: TerraformStack) => {
  const mount = new SecretsMount(st, 'Engine', { path: 'payments/transform', type: 'transform' });
  new TransformAlphabet(st, 'Hex', { mount, name: 'hex', alphabet: '0123456789abcdef' });
  new TransformTemplate(st, 'HexId', { mount, name: 'hex-id', pattern: 'id-([0-9a-f]+)', alphabet: 'hex' });
  new TransformStore(st, 'Tokens', {
    mount,
    name: 'pg',
    connectionString: 'postgresql://{{username}}:{{password}}@db.internal:5432/tokens',
    username: 'tokens_rt',
    passwordEnv: 'TOKENS_PASSWORD',
    schemaUsername: 'tokens_ddl',
    schemaPasswordEnv: 'TOKENS_DDL_PASSWORD',
    maxConnectionLifetime: '1h',
  });
  new TransformTransformation(st, 'Fpe', { mount, name: 'hex-fpe', type: TransformationType.FPE, template: 'hex-id', tweakSource: TweakSource.INTERNAL, allowedRoles: ['app'] });
  new TransformTransformation(st, 'Mask', { mount, name: 'ccn-mask', type: TransformationType.MASKING, template: 'builtin/creditcardnumber', maskingCharacter: '#', allowedRoles: ['app'] });
  new TransformTransformation(st, 'Tok', { mount, name: 'tok', type: TransformationType.TOKENIZATION, maxTtl: '24h', stores: ['pg'], mappingMode: TokenizationMappingMode.EXPORTABLE, allowedRoles: ['app'] });
  new TransformRole(st, 'App', { mount, name: 'app', transformations: ['hex-fpe', 'ccn-mask', 'tok'] });
};

describe('transform constructs', () => {
  test('each object renders its kind, key and API-shaped desired state', () => {
    const all = payloads(synth(stack));
    const of = (kind: string) => all.filter((p) => p.kind === `secrets.transform-${kind}`);
    expect(of('alphabet')).toMatchObject([{ key: 'payments/transform/hex', desired: { alphabet: '0123456789abcdef' } }]);
    expect(of('template')).toMatchObject([{ key: 'payments/transform/hex-id', desired: { type: 'regex', pattern: 'id-([0-9a-f]+)', alphabet: 'hex' } }]);
    expect(of('store')).toMatchObject([{ key: 'payments/transform/pg', desired: { username: 'tokens_rt', passwordEnv: 'TOKENS_PASSWORD', schema: 'public', maxOpenConnections: 4, maxIdleConnections: 4, maxConnectionLifetime: 3600, schemaUsername: 'tokens_ddl' } }]);
    expect(of('transformation').map((p) => p.desired)).toEqual([
      { type: 'fpe', template: 'hex-id', tweakSource: 'internal', maskingCharacter: '', allowedRoles: ['app'], mappingMode: '', maxTtl: 0, stores: [] },
      { type: 'masking', template: 'builtin/creditcardnumber', tweakSource: '', maskingCharacter: '#', allowedRoles: ['app'], mappingMode: '', maxTtl: 0, stores: [] },
      { type: 'tokenization', template: '', tweakSource: '', maskingCharacter: '', allowedRoles: ['app'], mappingMode: 'exportable', maxTtl: 86400, stores: ['pg'] },
    ]);
    expect(of('role')).toMatchObject([{ key: 'payments/transform/app', desired: { transformations: ['hex-fpe', 'ccn-mask', 'tok'] } }]);
  });

  test('references by name order the deployment (built-ins need none)', () => {
    const s = synth(stack);
    const deps = (path: string) => JSON.stringify(byPath(s, `${path}/Resource/Identity`).depends_on ?? []);
    expect(deps('HexId')).toMatch(/Hex_.*Config/);
    expect(deps('HexId')).toMatch(/Engine_.*Config/);
    expect(deps('Fpe')).toMatch(/HexId_.*Config/);
    expect(deps('Tok')).toMatch(/Tokens_.*Config/);
    expect(deps('App')).toMatch(/Fpe_.*Config/);
    expect(deps('App')).toMatch(/Mask_.*Config/);
    expect(deps('Mask')).not.toMatch(/HexId/);
  });

  test('no password in the configuration: only the names of environment variables', () => {
    process.env.TOKENS_PASSWORD = 'very-secret-token-store-password';
    try {
      const s = synth(stack);
      const raw = JSON.stringify(s) + payloads(s).map((p) => JSON.stringify(p)).join('\n');
      expect(raw).toContain('TOKENS_PASSWORD');
      expect(raw).not.toContain('very-secret-token-store-password');
    } finally {
      delete process.env.TOKENS_PASSWORD;
    }
  });

  test('validation at construction names the bad value and the fix', () => {
    const cases: Array<[(st: TerraformStack) => void, RegExp]> = [
      [(st) => new TransformAlphabet(st, 'A', { name: 'a', alphabet: 'x' }), /alphabet has 1 characters; give 2 to 65536/],
      [(st) => new TransformAlphabet(st, 'A', { name: 'a', alphabet: 'abca' }), /"a" appears more than once/],
      [(st) => new TransformAlphabet(st, 'A', { name: 'builtin/x', alphabet: 'ab' }), /name "builtin\/x" is invalid/],
      [(st) => new TransformTemplate(st, 'T', { name: 't', pattern: '\\d+' }), /has no capture group/],
      [(st) => new TransformTransformation(st, 'X', { name: 'x', type: TransformationType.FPE }), /template is required for fpe/],
      [(st) => new TransformTransformation(st, 'X', { name: 'x', type: TransformationType.TOKENIZATION, template: 'builtin/any' }), /template applies to fpe and masking transformations only, not tokenization/],
      [(st) => new TransformTransformation(st, 'X', { name: 'x', type: TransformationType.MASKING, template: 't', tweakSource: TweakSource.INTERNAL }), /tweakSource applies to fpe/],
      [(st) => new TransformTransformation(st, 'X', { name: 'x', type: TransformationType.MASKING, template: 't', maskingCharacter: '##' }), /maskingCharacter "##" must be exactly one character/],
      [(st) => new TransformTransformation(st, 'X', { name: 'x', type: TransformationType.TOKENIZATION, maxTtl: 'soon' }), /maxTtl "soon" is not a duration/],
      [(st) => new TransformTransformation(st, 'X', { name: 'x', type: 'hash' as TransformationType }), /type "hash" is invalid/],
      [(st) => new TransformRole(st, 'R', { name: 'r', transformations: ['a', 'a'] }), /transformation "a" is listed twice/],
      [(st) => new TransformRole(st, 'R', { name: 'r', transformations: [], mount: new SecretsMount(st, 'M', { path: 'pki', type: 'pki' }) }), /"pki" mount/],
      [(st) => new TransformStore(st, 'S', { name: 's', connectionString: 'mysql://x', username: 'u', passwordEnv: 'P' }), /must be a postgresql:\/\/ URL/],
      [(st) => new TransformStore(st, 'S', { name: 's', connectionString: 'postgresql://h/d', username: 'u', passwordEnv: 'the pw' }), /not an environment variable name/],
      [(st) => new TransformStore(st, 'S', { name: 's', connectionString: 'postgresql://h/d', username: 'u', passwordEnv: 'P', schemaUsername: 'ddl' }), /schemaUsername and schemaPasswordEnv together/],
      [(st) => new TransformStore(st, 'S', { name: 's', connectionString: 'postgresql://h/d', username: 'u', passwordEnv: 'P', maxOpenConnections: 0 }), /maxOpenConnections 0 is invalid/],
    ];
    for (const [build, message] of cases) expect(() => synth(build)).toThrow(message);
  });
});
