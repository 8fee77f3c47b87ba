import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServerNode } from '../../src/engine/catalog/servers';
import { newKey } from '../engine/secrets/jwt-helpers';
import { COMPAT_DIR, runSuite } from '../helpers/compat';
import { publicServiceBinary } from '../helpers/public-tools';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';

/**
 * The public catalog's own CLI, unchanged, runs its everyday commands against Hangar
 * (test/compat/consul-cli/everyday.sh: members, info, catalog, services register/deregister, watch,
 * maint, kv with CAS/export/import, lock, ACL policies/roles/tokens/auth methods/binding rules,
 * namespaces).
 */
const consul = publicServiceBinary('consul');
if (!consul) console.log('consul CLI skipped: run scripts/build-public-services consul (see docs/compatibility.md)');

(consul ? describe : describe.skip)('the consul CLI against Hangar', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer('sqlite');
    // The server's own node, `consul` service and serfHealth check, as `hangar server` registers them.
    await startServerNode(server.engine);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  test('everyday commands', async () => {
    const key = await newKey('cli', 'ES256');
    const run = await runSuite('bash', [join(COMPAT_DIR, 'consul-cli', 'everyday.sh')], mkdtempSync(join(tmpdir(), 'consul-cli-')), {
      CONSUL_BIN: consul!,
      CONSUL_HTTP_ADDR: server.urls.catalog,
      CONSUL_HTTP_TOKEN: ROOT_TOKEN,
      JWT_PUBLIC_KEY: key.publicPem,
    });
    if (run.status !== 0) console.log(run.output);
    expect(run.output).toContain('consul CLI: every step passed');
    expect(run.status).toBe(0);
  }, 300_000);
});
