import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExampleOptions, ExampleStack } from '../../examples/typescript/main';
import { openTransport } from '../../src/client/open';
import { RegistryBox, RegistryClient } from '../../src/client/registry';
import { hangar, RunningServer, startServerProcess } from '../helpers/cli';
import { tempDir } from '../helpers/storage';
import { terraformEnv, TerraformWorkspace } from '../helpers/terraform';
import { freePort } from '../setup/postgres';

const tf = terraformEnv();
const describeWithTerraform = tf ? describe : describe.skip;
if (!tf) process.stderr.write('terraform/tofu and the null provider are not available: Box construct e2e tests skipped\n');

/** Deploys examples/typescript with one description changed and the db box declared or not. */
function declare(ws: TerraformWorkspace, connection: Connection, opts: { web: string; db: boolean }) {
  ws.synthStack((app) => new ExampleStack(app, 'stack', { ...connection, webDescription: opts.web, withDb: opts.db }));
}

/** Runs the custom-resource life cycle and checks the registry after each step. */
type Connection = Pick<ExampleOptions, 'registryUrl' | 'dataDir' | 'tokenEnvVar'>;

async function lifeCycle(ws: TerraformWorkspace, props: Connection, read: (tag: string) => Promise<RegistryBox | undefined>) {
  declare(ws, props, { web: 'one', db: true });
  ws.deploy();
  const first = await read('acme/web');
  expect(first).toMatchObject({ short_description: 'one', private: false, description_markdown: '# web\n\nA box with nginx, built nightly.' });
  expect(await read('acme/db')).toMatchObject({ short_description: 'PostgreSQL 15', private: true });

  // A retried apply converges without changes.
  expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);

  // Update in place: the same box (same creation time), a new description; the identity is kept.
  declare(ws, props, { web: 'two', db: true });
  const plan = ws.run('plan', '-input=false');
  expect(plan).toMatch(/Web_Config_\w+ must be replaced/);
  expect(plan).not.toMatch(/Web_Identity_\w+ must be replaced/);
  ws.deploy();
  const second = await read('acme/web');
  expect(second).toMatchObject({ short_description: 'two', created_at: first!.created_at });

  // Removal from the stack deletes the box; the other one stays.
  declare(ws, props, { web: 'two', db: false });
  ws.deploy();
  expect(await read('acme/db')).toBeUndefined();
  expect(await read('acme/web')).toMatchObject({ short_description: 'two' });

  // Destroy deletes everything.
  ws.destroy();
  expect(await read('acme/web')).toBeUndefined();
}

describeWithTerraform('Box construct deployed by Terraform', () => {
  jest.setTimeout(300_000);

  test('embedded mode: the custom resources run the engine on a data directory, which hangar server then serves', async () => {
    const data = tempDir();
    expect(hangar(['registry', 'create-user', 'alice', '--password', 'password123', '--data', data]).code).toBe(0);
    expect(hangar(['registry', 'create-org', 'acme', '--owner', 'alice', '--data', data]).code).toBe(0);
    const read = async (tag: string) => {
      const transport = await openTransport({ dataDir: data });
      try {
        return await new RegistryClient(transport).getBox(...(tag.split('/') as [string, string]));
      } finally {
        await transport.close();
      }
    };
    const ws = new TerraformWorkspace(tf!);
    await lifeCycle(ws, { dataDir: data }, read);

    // Deploy again with no server running, then serve the data directory.
    declare(ws, { dataDir: data }, { web: 'served', db: true });
    ws.deploy();
    let server: RunningServer | undefined;
    try {
      server = await startServerProcess(['--data', data]);
      const res = await fetch(`${server.urls.registry}/api/v1/box/acme/web`);
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ tag: 'acme/web', short_description: 'served' });
      const privateBox = await fetch(`${server.urls.registry}/api/v1/box/acme/db`);
      expect(privateBox.status).toBe(404);
    } finally {
      await server?.stop();
    }
  });

  test('a deploy that fails half-way (server down) converges on the next one, with nothing duplicated', async () => {
    const data = tempDir();
    const port = await freePort();
    const args = ['--data', data, '--registry-addr', `127.0.0.1:${port}`];
    let server = await startServerProcess(args);
    const rootToken = readFileSync(join(data, 'root-token'), 'utf8').trim();
    try {
      const admin = { HANGAR_TOKEN: rootToken };
      expect(hangar(['registry', 'create-user', 'alice', '--password', 'password123', '--address', server.urls.registry], admin).code).toBe(0);
      expect(hangar(['registry', 'create-org', 'acme', '--owner', 'alice', '--address', server.urls.registry], admin).code).toBe(0);
      const ws = new TerraformWorkspace(tf!, admin);
      const props = { registryUrl: server.urls.registry };
      declare(ws, props, { web: 'one', db: false });
      ws.deploy();
      const client = new RegistryClient(await openTransport({ endpoints: { registry: server.urls.registry } }), rootToken);
      const before = await client.getBox('acme', 'web');

      declare(ws, props, { web: 'two', db: true });
      await server.stop();
      expect(() => ws.deploy()).toThrow(/cannot connect|ECONNREFUSED/);

      server = await startServerProcess(args);
      ws.deploy();
      expect(await client.getBox('acme', 'web')).toMatchObject({ short_description: 'two', created_at: before!.created_at });
      expect(await client.getBox('acme', 'db')).toMatchObject({ short_description: 'PostgreSQL 15' });
      expect(ws.deploy()).toMatch(/0 added, 0 changed, 0 destroyed/);
      ws.destroy();
      expect(await client.getBox('acme', 'web')).toBeUndefined();
    } finally {
      await server.stop();
    }
  });

  test('HTTP mode: the custom resources call a running server with the token from the environment, which never reaches the state', async () => {
    const rootToken = `root-${Math.random().toString(36).slice(2)}-secret`;
    const server = await startServerProcess(['--dev', '--dev-root-token', rootToken]);
    try {
      const admin = { HANGAR_TOKEN: rootToken };
      expect(hangar(['registry', 'create-user', 'alice', '--password', 'password123', '--address', server.urls.registry], admin).code).toBe(0);
      expect(hangar(['registry', 'create-org', 'acme', '--owner', 'alice', '--address', server.urls.registry], admin).code).toBe(0);
      const client = new RegistryClient(await openTransport({ endpoints: { registry: server.urls.registry } }), rootToken);
      const read = (tag: string) => client.getBox(...(tag.split('/') as [string, string]));

      const ws = new TerraformWorkspace(tf!, { DEPLOY_TOKEN: rootToken });
      const props = { registryUrl: server.urls.registry, tokenEnvVar: 'DEPLOY_TOKEN' };
      await lifeCycle(ws, props, read);

      declare(ws, props, { web: 'again', db: true });
      ws.deploy();
      const stored = ws.everythingStored();
      expect(stored).toContain('acme/web');
      expect(stored).not.toContain(rootToken);
    } finally {
      await server.stop();
    }
  });
});
