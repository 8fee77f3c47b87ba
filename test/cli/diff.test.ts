import { join } from 'node:path';
import { App, TerraformStack } from 'cdktf';
import { Box, Hangar } from '../../src';
import { openTransport } from '../../src/client/open';
import { RegistryClient } from '../../src/client/registry';
import { desiredStateIn } from '../../src/reconcile/drift';
import { encodePayload } from '../../src/reconcile/payload-format';
import { hangar } from '../helpers/cli';
import { tempDir } from '../helpers/storage';

describe('hangar diff', () => {
  test('reports in sync, drift (exit 2) and missing objects, and --fix converges', async () => {
    const data = tempDir();
    expect(hangar(['registry', 'create-user', 'acme', '--password', 'password123', '--data', data]).code).toBe(0);
    const app = new App({ outdir: tempDir() });
    const stack = new TerraformStack(app, 'diffed');
    new Hangar(stack, 'Hangar', { dataDir: data });
    new Box(stack, 'Web', { owner: 'acme', name: 'web', shortDescription: 'desired' });
    new Box(stack, 'Db', { owner: 'acme', name: 'db' });
    app.synth();
    const stackDir = join(app.outdir, 'stacks', 'diffed');
    // What `terraform apply` would run: one `hangar apply` per config resource.
    for (const payload of desiredStateIn(stackDir)) expect(hangar(['apply'], { HANGAR_PAYLOAD: encodePayload(payload) }).code).toBe(0);

    const clean = hangar(['diff', stackDir]);
    expect(clean).toMatchObject({ code: 0 });
    expect(clean.stdout).toMatch(/registry\.box acme\/web: in sync/);
    expect(clean.stdout).toMatch(/2 objects in sync/);
    expect(hangar(['diff', app.outdir]).code).toBe(0); // cdktf.out: all stacks

    const transport = await openTransport({ dataDir: data });
    const registry = new RegistryClient(transport);
    await registry.updateBox('acme', 'web', { shortDescription: 'changed by hand', isPrivate: false });
    await registry.deleteBox('acme', 'db');
    await transport.close();

    const drift = hangar(['diff', stackDir]);
    expect(drift.code).toBe(2);
    expect(drift.stdout).toContain('~ registry.box acme/web: shortDescription: live "changed by hand", desired "desired"; private: live false, desired true');
    expect(drift.stdout).toContain('~ registry.box acme/db: missing');
    expect(drift.stdout).toMatch(/2 of 2 objects drifted/);

    const fixed = hangar(['diff', stackDir, '--fix']);
    expect(fixed.code).toBe(0);
    expect(fixed.stdout).toMatch(/\(fixed\)/);
    expect(hangar(['diff', stackDir]).code).toBe(0);
  });

  test('errors: no stack directory (1), no argument (2)', () => {
    const none = hangar(['diff', tempDir()]);
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(/no cdk\.tf\.json in/);
    expect(hangar(['diff']).code).toBe(2);
  });
});
