import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CI_JWT_PUBKEYS_ENV, CI_JWT_PUBLIC_KEY } from '../../examples/typescript/main';
import { makeBoxFile } from '../helpers/box-file';
import { hangar } from '../helpers/cli';
import { tempDir } from '../helpers/storage';
import { terraformEnv } from '../helpers/terraform';

const ROOT = join(__dirname, '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'typescript');
const CDKTF = join(ROOT, 'node_modules', 'cdktf-cli', 'bundle', 'bin', 'cdktf');
const BIN = join(ROOT, 'node_modules', '.bin');

/** Major version of a Node.js binary, or undefined when it does not run. */
function majorOf(node: string): number | undefined {
  const res = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  return res.status === 0 ? Number(res.stdout.split('.')[0]) : undefined;
}

/**
 * The Node.js versions a pipeline may have on PATH: the project's own (24, from npm; scripts/bootstrap
 * builds cdktf-cli's terminal module for it) and the machine's (Debian's 20, on which Hangar's CLI
 * runs itself again on the newer Node.js it finds).
 */
const NODES = [process.execPath, '/usr/bin/node'].filter((node) => existsSync(node) && majorOf(node) !== undefined);

const tf = terraformEnv();
const available = tf && existsSync(CDKTF);
if (!available && process.env.CI) throw new Error('cdktf-cli or terraform is missing');

/** Runs cdktf-cli as a pipeline would: `node` on PATH is the given one, and nothing says otherwise. */
function cdktf(node: string, args: string[], env: Record<string, string>) {
  const res = spawnSync(node, [CDKTF, ...args, '--auto-approve', '--skip-provider-lock'], {
    cwd: EXAMPLE,
    env: { ...process.env, ...tf, NODE_OPTIONS: '', CI: '1', HANGAR_NODE: '', PATH: `${dirname(node)}:${BIN}:${tf?.PATH ?? process.env.PATH}`, ...env },
    encoding: 'utf8',
    timeout: 10 * 60_000,
  });
  const out = `${res.stdout}${res.stderr}`.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
  if (res.status !== 0) throw new Error(`cdktf ${args[0]} on Node.js ${majorOf(node)} failed (${res.status}):\n${out}`);
  return out;
}

(available ? describe : describe.skip)('the real cdktf CLI', () => {
  jest.setTimeout(15 * 60_000);

  afterAll(() => {
    for (const f of ['cdktf.out', 'terraform.hangar-example.tfstate', 'terraform.hangar-example.tfstate.backup']) {
      rmSync(join(EXAMPLE, f), { recursive: true, force: true });
    }
  });

  test.each(NODES.map((node) => [majorOf(node), node] as const))('on Node.js %s: cdktf deploy, hangar diff and cdktf destroy of examples/typescript (all three services) on the embedded engine', (_major, node) => {
    const data = tempDir();
    expect(hangar(['registry', 'create-user', 'alice', '--password', 'password123', '--data', data]).code).toBe(0);
    expect(hangar(['registry', 'create-org', 'acme', '--owner', 'alice', '--data', data]).code).toBe(0);
    const env = { HANGAR_DATA: data, HANGAR_EXAMPLE_BOX_FILE: makeBoxFile(tempDir()).path, [CI_JWT_PUBKEYS_ENV]: CI_JWT_PUBLIC_KEY };
    expect(cdktf(node, ['deploy'], env)).toMatch(/Apply complete! Resources: \d+ added, 0 changed, 0 destroyed/);
    const diff = hangar(['diff', join(EXAMPLE, 'cdktf.out')], env);
    expect(diff.stdout).toMatch(/objects in sync/);
    expect(diff.code).toBe(0);
    expect(cdktf(node, ['deploy'], env)).toMatch(/No changes|0 added, 0 changed, 0 destroyed/);
    expect(cdktf(node, ['destroy'], env)).toMatch(/Destroy complete! Resources: \d+ destroyed/);
    const after = hangar(['diff', join(EXAMPLE, 'cdktf.out')], env);
    expect(after.code).toBe(2);
    expect(after.stdout).toMatch(/registry\.box acme\/web: missing/);
  });
});
