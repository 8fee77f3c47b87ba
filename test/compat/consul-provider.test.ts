import { join } from 'node:path';
import { startServerNode } from '../../src/engine/catalog/servers';
import { COMPAT_DIR } from '../helpers/compat';
import { providerCases } from '../helpers/provider-cases';
import { tfProviderDir } from '../helpers/public-tools';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';
import { terraformEnv } from '../helpers/terraform';

/**
 * The public catalog's Terraform provider, unchanged, applies the configurations of its own
 * documentation (test/compat/consul-provider/*.tf, see its README) against Hangar: apply, an empty
 * second plan, imports, destroy.
 */
const providerDir = tfProviderDir('consul');
const tf = providerDir ? terraformEnv() : undefined;
if (!providerDir) console.log('consul provider cases skipped: run scripts/build-terraform-provider consul (see docs/compatibility.md)');

(providerDir && tf ? describe : describe.skip)('the consul Terraform provider against Hangar', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer('sqlite');
    // The server's own node, `consul` service and serfHealth check, as `hangar server` registers them.
    await startServerNode(server.engine);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  providerCases({
    provider: 'consul',
    providerDir: providerDir!,
    terraform: tf!,
    casesDir: join(COMPAT_DIR, 'consul-provider'),
    // The provider takes the address without its scheme (CONSUL_HTTP_SSL chooses https).
    env: () => ({ CONSUL_HTTP_ADDR: new URL(server.urls.catalog).host, CONSUL_HTTP_TOKEN: ROOT_TOKEN }),
  });
});
