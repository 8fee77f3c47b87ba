import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TerraformStack } from 'cdktf';
import { Hangar, PkiConfigUrls, PkiIntermediateCa, PkiKeyType, PkiRole, PkiRootCa, PkiSecretBackend } from '../../src';
import { SecretsClient } from '../../src/client/secrets';
import { RunningServer } from '../helpers/cli';
import { startDevSecrets } from '../helpers/secrets-e2e';
import { tempDir } from '../helpers/storage';
import { terraformEnv, TerraformWorkspace } from '../helpers/terraform';

const tf = terraformEnv();
const describeWithTerraform = tf ? describe : describe.skip;
if (!tf) process.stderr.write('terraform/tofu or the null provider are not available: pki construct e2e tests skipped\n');

/**
 * The PKI constructs deployed by Terraform against a running server (HTTP mode): a root whose key is
 * exported to a file, an intermediate on a second mount signed by it, a role and URLs; a certificate
 * issued with curl and verified by openssl; the role changed in place; nothing secret in the
 * configuration or the state; destroy.
 */
describeWithTerraform('pki constructs deployed by Terraform', () => {
  jest.setTimeout(300_000);
  let server: RunningServer;
  let client: SecretsClient;
  let rootToken: string;

  beforeAll(async () => {
    ({ server, client, rootToken } = await startDevSecrets());
  }, 120_000);
  afterAll(() => server?.stop(), 60_000);

  test('create, issue, update in place, destroy', async () => {
    const dir = tempDir('hangar-pki-e2e-');
    const keyFile = join(dir, 'root-key.pem');
    const ws = new TerraformWorkspace(tf!, { DEPLOY_TOKEN: rootToken });
    const declare = (maxTtl: string) =>
      ws.synth((stack: TerraformStack) => {
        new Hangar(stack, 'Hangar', { secretsUrl: server.urls.secrets, tokenEnvVar: 'DEPLOY_TOKEN' });
        const rootMount = new PkiSecretBackend(stack, 'RootMount', { path: 'corp/pki', maxLeaseTtl: '87600h' });
        const root = new PkiRootCa(stack, 'Root', { backend: rootMount, commonName: 'Corp Root', keyType: PkiKeyType.EC, ttl: '87600h', privateKeyFile: keyFile });
        const intMount = new PkiSecretBackend(stack, 'IntMount', { path: 'corp/pki_int', maxLeaseTtl: '43800h' });
        new PkiIntermediateCa(stack, 'Int', { backend: intMount, issuer: root, commonName: 'Corp Intermediate', ttl: '43800h' });
        new PkiRole(stack, 'Web', { backend: intMount, name: 'web', allowedDomains: ['corp.test'], allowSubdomains: true, keyType: PkiKeyType.EC, maxTtl });
        new PkiConfigUrls(stack, 'Urls', { backend: intMount, issuingCertificates: [`${server.urls.secrets}/v1/corp/pki_int/ca`] });
      });

    declare('72h');
    ws.deploy();
    const rootKey = readFileSync(keyFile, 'utf8');
    expect(rootKey).toContain('BEGIN EC PRIVATE KEY');
    expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);

    // A certificate with curl; openssl verifies it through the intermediate to the root.
    const issued = JSON.parse(execFileSync('curl', ['-sf', '-H', `X-Vault-Token: ${rootToken}`, '-d', '{"common_name":"www.corp.test","ttl":"1h"}',
      `${server.urls.secrets}/v1/corp/pki_int/issue/web`], { encoding: 'utf8' })).data;
    const root = (await client.read('corp/pki/cert/ca'))!.data!.certificate as string;
    const files = { root: join(dir, 'root.pem'), chain: join(dir, 'int.pem'), leaf: join(dir, 'leaf.pem') };
    writeFileSync(files.root, `${root}\n`);
    writeFileSync(files.chain, `${issued.issuing_ca}\n`);
    writeFileSync(files.leaf, `${issued.certificate}\n`);
    expect(execFileSync('openssl', ['verify', '-CAfile', files.root, '-untrusted', files.chain, files.leaf], { encoding: 'utf8' })).toContain(': OK');

    // Update in place: the role's max TTL; the CAs stay.
    const caBefore = (await client.read('corp/pki_int/cert/ca'))!.data!.certificate;
    declare('24h');
    expect(ws.run('plan', '-input=false')).not.toMatch(/Web_Identity_\w+ must be replaced/);
    ws.deploy();
    expect((await client.read('corp/pki_int/roles/web'))?.data?.max_ttl).toBe(86400);
    expect((await client.read('corp/pki_int/cert/ca'))!.data!.certificate).toBe(caBefore);

    const stored = ws.everythingStored();
    expect(stored).not.toContain(rootToken);
    expect(stored).not.toContain(rootKey.split('\n')[1]);

    ws.destroy();
    expect(await client.getMount('corp/pki')).toBeUndefined();
    expect(await client.getMount('corp/pki_int')).toBeUndefined();
    expect(existsSync(keyFile)).toBe(true);
  });
});
