import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CI_JWT_PUBKEYS_ENV, CI_JWT_PUBLIC_KEY } from '../../examples/typescript/main';
import { makeBoxFile } from '../helpers/box-file';
import { hangar } from '../helpers/cli';
import { tempDir } from '../helpers/storage';
import { terraformEnv } from '../helpers/terraform';

const ROOT = join(__dirname, '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'typescript');
const CDKTF = join(ROOT, 'node_modules', 'cdktf-cli', 'bundle', 'bin', 'cdktf');
/**
 * cdktf-cli drives Terraform through node-pty, whose prebuilt binaries stop at Node 22: the CLI runs
 * on the machine's own Node.js (HANGAR_CDKTF_NODE), while the app and the provisioners use ours.
 */
const CDKTF_NODE = process.env.HANGAR_CDKTF_NODE ?? '/usr/bin/node';

const tf = terraformEnv();
const available = tf && existsSync(CDKTF) && existsSync(CDKTF_NODE);
if (!available && process.env.CI) throw new Error('cdktf-cli, a Node.js for it, or terraform is missing');

function cdktf(args: string[], env: Record<string, string>) {
  const res = spawnSync(CDKTF_NODE, [CDKTF, ...args, '--auto-approve', '--skip-provider-lock'], {
    cwd: EXAMPLE,
    env: { ...process.env, ...tf, NODE_OPTIONS: '', CI: '1', HANGAR_NODE: process.execPath, PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}`, ...env },
    encoding: 'utf8',
    timeout: 10 * 60_000,
  });
  const out = `${res.stdout}${res.stderr}`.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
  if (res.status !== 0) throw new Error(`cdktf ${args[0]} failed (${res.status}):\n${out}`);
  return out;
}

(available ? describe : describe.skip)('the real cdktf CLI', () => {
  jest.setTimeout(15 * 60_000);

  afterAll(() => {
    for (const f of ['cdktf.out', 'terraform.hangar-example.tfstate', 'terraform.hangar-example.tfstate.backup']) {
      rmSync(join(EXAMPLE, f), { recursive: true, force: true });
    }
  });

  test('cdktf deploy, hangar diff and cdktf destroy of examples/typescript (all three services) on the embedded engine', () => {
    const data = tempDir();
    expect(hangar(['registry', 'create-user', 'alice', '--password', 'password123', '--data', data]).code).toBe(0);
    expect(hangar(['registry', 'create-org', 'acme', '--owner', 'alice', '--data', data]).code).toBe(0);
    const env = { HANGAR_DATA: data, HANGAR_EXAMPLE_BOX_FILE: makeBoxFile(tempDir()).path, [CI_JWT_PUBKEYS_ENV]: CI_JWT_PUBLIC_KEY };
    expect(cdktf(['deploy'], env)).toMatch(/Apply complete! Resources: \d+ added, 0 changed, 0 destroyed/);
    const diff = hangar(['diff', join(EXAMPLE, 'cdktf.out')], env);
    expect(diff.stdout).toMatch(/objects in sync/);
    expect(diff.code).toBe(0);
    expect(cdktf(['deploy'], env)).toMatch(/No changes|0 added, 0 changed, 0 destroyed/);
    expect(cdktf(['destroy'], env)).toMatch(/Destroy complete! Resources: \d+ destroyed/);
    const after = hangar(['diff', join(EXAMPLE, 'cdktf.out')], env);
    expect(after.code).toBe(2);
    expect(after.stdout).toMatch(/registry\.box acme\/web: missing/);
  });
});
