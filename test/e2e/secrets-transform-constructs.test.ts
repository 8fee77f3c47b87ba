import { randomBytes } from 'node:crypto';
import { TerraformStack } from 'cdktf';
import { Client } from 'pg';
import { Hangar, TransformAlphabet, TransformationType, TransformRole, TransformStore, TransformTemplate, TransformTransformation, TweakSource } from '../../src';
import { openTransport } from '../../src/client/open';
import { SecretsClient } from '../../src/client/secrets';
import { RunningServer, startServerProcess } from '../helpers/cli';
import { terraformEnv, TerraformWorkspace } from '../helpers/terraform';

const tf = terraformEnv();
const PG = process.env.HANGAR_TEST_POSTGRES_URL;
const describeWithTerraform = tf && PG ? describe : describe.skip;
if (!tf) process.stderr.write('terraform/tofu and the null provider are not available: transform construct e2e tests skipped\n');

interface Shape {
  readonly allowedRoles: string[];
  readonly withMaskRole: boolean;
}

/**
 * The transform constructs deployed by Terraform against a running server (its `--dev` mount
 * `transform/`): an alphabet, a template, FPE, masking and tokenization transformations (the latter
 * on a SQL store whose schema the deploy creates), roles; update in place keeps the FPE key, a
 * removed role is deleted, destroy removes everything; no password in the state.
 */
describeWithTerraform('transform constructs deployed by Terraform', () => {
  jest.setTimeout(300_000);
  let server: RunningServer;
  let client: SecretsClient;
  let admin: Client;
  const rootToken = `root-${randomBytes(8).toString('hex')}`;
  const storePassword = 'store-pw-never-in-state-8812';
  const db = `tf_tokens_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    server = await startServerProcess(['--dev', '--dev-root-token', rootToken]);
    client = new SecretsClient(await openTransport({ endpoints: { secrets: server.urls.secrets } }), rootToken);
    admin = new Client({ connectionString: PG });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${db}`);
  });
  afterAll(async () => {
    await server?.stop();
    await admin?.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await admin?.end();
  });

  test('create, update in place, remove, destroy', async () => {
    const pg = new URL(PG!);
    const ws = new TerraformWorkspace(tf!, { DEPLOY_TOKEN: rootToken, STORE_PW: storePassword, STORE_DDL_PW: storePassword });
    const declare = (shape: Shape) =>
      ws.synth((stack: TerraformStack) => {
        new Hangar(stack, 'Hangar', { secretsUrl: server.urls.secrets, tokenEnvVar: 'DEPLOY_TOKEN' });
        new TransformAlphabet(stack, 'Hex', { name: 'hex', alphabet: '0123456789abcdef' });
        new TransformTemplate(stack, 'HexId', { name: 'hex-id', pattern: 'id-([0-9a-f]+)', alphabet: 'hex' });
        new TransformStore(stack, 'Tokens', {
          name: 'pg',
          connectionString: `postgresql://{{username}}:{{password}}@${pg.host}/${db}`,
          username: decodeURIComponent(pg.username),
          passwordEnv: 'STORE_PW',
          schemaUsername: decodeURIComponent(pg.username),
          schemaPasswordEnv: 'STORE_DDL_PW',
        });
        new TransformTransformation(stack, 'Fpe', { name: 'hex-fpe', type: TransformationType.FPE, template: 'hex-id', tweakSource: TweakSource.INTERNAL, allowedRoles: shape.allowedRoles });
        new TransformTransformation(stack, 'Mask', { name: 'ccn-mask', type: TransformationType.MASKING, template: 'builtin/creditcardnumber', allowedRoles: ['app', 'masker'] });
        new TransformTransformation(stack, 'Tok', { name: 'tok', type: TransformationType.TOKENIZATION, stores: ['pg'], maxTtl: '1h', allowedRoles: ['app'] });
        new TransformRole(stack, 'App', { name: 'app', transformations: ['hex-fpe', 'ccn-mask', 'tok'] });
        if (shape.withMaskRole) new TransformRole(stack, 'Masker', { name: 'masker', transformations: ['ccn-mask'] });
      });

    declare({ allowedRoles: ['app'], withMaskRole: true });
    ws.deploy();
    const encoded = (await client.write('transform/encode/app', { value: 'id-00ff00', transformation: 'hex-fpe' }))?.data?.encoded_value as string;
    expect(encoded).toMatch(/^id-[0-9a-f]{6}$/);
    expect((await client.write('transform/encode/masker', { value: '4111-1111-1111-1111' }))?.data?.encoded_value).toBe('****-****-****-****');
    const token = (await client.write('transform/encode/app', { value: 'card-4111', transformation: 'tok' }))?.data?.encoded_value as string;
    expect((await client.write('transform/decode/app', { value: token, transformation: 'tok' }))?.data?.decoded_value).toBe('card-4111');
    expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);

    // Update in place: the FPE transformation keeps its key, so earlier encodings still decode.
    declare({ allowedRoles: ['app', 'batch-*'], withMaskRole: true });
    expect(ws.run('plan', '-input=false')).not.toMatch(/Fpe_Identity_\w+ must be replaced/);
    ws.deploy();
    expect((await client.read('transform/transformation/hex-fpe'))?.data?.allowed_roles).toEqual(['app', 'batch-*']);
    expect((await client.write('transform/decode/app', { value: encoded, transformation: 'hex-fpe' }))?.data?.decoded_value).toBe('id-00ff00');

    // Removal deletes the role only.
    declare({ allowedRoles: ['app', 'batch-*'], withMaskRole: false });
    ws.deploy();
    expect(await client.read('transform/role/masker')).toBeUndefined();
    expect(await client.read('transform/role/app')).toBeDefined();

    const stored = ws.everythingStored();
    expect(stored).not.toContain(storePassword);
    expect(stored).not.toContain(rootToken);

    ws.destroy();
    for (const path of ['role/app', 'transformation/hex-fpe', 'transformation/tok', 'store/pg', 'template/hex-id', 'alphabet/hex']) {
      expect([path, await client.read(`transform/${path}`)]).toEqual([path, undefined]);
    }
  });
});
