import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { makeBoxFile } from './box-file';
import { hangar } from './cli';
import { tempDir } from './storage';
import { CI_JWT_PUBKEYS_ENV, CI_JWT_PUBLIC_KEY } from '../../examples/typescript/main';

const BIN = join(__dirname, '..', '..', 'node_modules', '.bin');

/** Major version of a Node.js binary, or undefined when it does not run. */
export function majorOf(node: string): number | undefined {
  const res = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' });
  return res.status === 0 ? Number(res.stdout.split('.')[0]) : undefined;
}

export interface CdkCliRun {
  /** The Node.js that runs the CLI, and the first `node` on PATH (the custom resources' too). */
  readonly node: string;
  /** The CLI's JavaScript entry point (cdktf-cli's or cdktn-cli's). */
  readonly cli: string;
  /** The app's directory (with its cdktf.json). */
  readonly cwd: string;
  /** The environment of scripts/setup-terraform (terraformEnv()). */
  readonly tf: Record<string, string>;
}

/**
 * Runs `cdktf`/`cdktn` ARGS as a pipeline would: `node` on PATH is the given one and nothing says
 * otherwise (no HANGAR_NODE). Resolves to the output without colours; throws with it on failure.
 */
export function runCdkCli(run: CdkCliRun, args: string[], env: Record<string, string>): string {
  const res = spawnSync(run.node, [run.cli, ...args, '--auto-approve', '--skip-provider-lock'], {
    cwd: run.cwd,
    env: { ...process.env, ...run.tf, NODE_OPTIONS: '', CI: '1', HANGAR_NODE: '', PATH: `${dirname(run.node)}:${BIN}:${run.tf.PATH ?? process.env.PATH}`, ...env },
    encoding: 'utf8',
    timeout: 10 * 60_000,
  });
  const out = `${res.stdout}${res.stderr}`.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '');
  if (res.status !== 0) throw new Error(`${args.join(' ')} on Node.js ${majorOf(run.node)} failed (${res.status}):\n${out}`);
  return out;
}

/**
 * A fresh embedded data directory with the example's owner (alice's organization acme), and the
 * environment the example's deploy needs (HANGAR_DATA, the box file to upload, the CI's public key).
 */
export function exampleDeployEnv(): Record<string, string> {
  const data = tempDir();
  expect(hangar(['registry', 'create-user', 'alice', '--password', 'password123', '--data', data]).code).toBe(0);
  expect(hangar(['registry', 'create-org', 'acme', '--owner', 'alice', '--data', data]).code).toBe(0);
  return { HANGAR_DATA: data, HANGAR_EXAMPLE_BOX_FILE: makeBoxFile(tempDir()).path, [CI_JWT_PUBKEYS_ENV]: CI_JWT_PUBLIC_KEY };
}

/**
 * The whole cycle a pipeline runs with the CLI (`cli` runs it with ARGS in the app's directory `app`):
 * deploy, `hangar diff` (in sync), deploy again (no change), destroy, `hangar diff` (the box missing).
 */
export function expectDeployCycle(cli: (args: string[], env: Record<string, string>) => string, app: string): void {
  const env = exampleDeployEnv();
  expect(cli(['deploy'], env)).toMatch(/Apply complete! Resources: \d+ added, 0 changed, 0 destroyed/);
  const diff = hangar(['diff', join(app, 'cdktf.out')], env);
  expect(diff.stdout).toMatch(/objects in sync/);
  expect(diff.code).toBe(0);
  expect(cli(['deploy'], env)).toMatch(/No changes|0 added, 0 changed, 0 destroyed/);
  expect(cli(['destroy'], env)).toMatch(/Destroy complete! Resources: \d+ destroyed/);
  const after = hangar(['diff', join(app, 'cdktf.out')], env);
  expect(after.code).toBe(2);
  expect(after.stdout).toMatch(/registry\.box acme\/web: missing/);
}
