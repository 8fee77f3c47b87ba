import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { exampleDeployEnv, expectDeployCycle, majorOf, runCdkCli } from '../helpers/cdk-cli';
import { hangar } from '../helpers/cli';
import { terraformEnv } from '../helpers/terraform';

const ROOT = join(__dirname, '..', '..');
const EXAMPLE = join(ROOT, 'examples', 'typescript');
const CDKTF = join(ROOT, 'node_modules', 'cdktf-cli', 'bundle', 'bin', 'cdktf');

/**
 * The Node.js versions a pipeline may have on PATH: the project's own (24, from npm; scripts/bootstrap
 * builds cdktf-cli's terminal module for it) and the machine's (Debian's 20, on which Hangar's CLI
 * runs itself again on the newer Node.js it finds) run the whole cycle; 22 (the npm registry's binary,
 * fetched by scripts/bootstrap) deploys and destroys once.
 */
const NODES = [process.execPath, '/usr/bin/node'].filter((node) => existsSync(node) && majorOf(node) !== undefined);
const NODE_22 = join(ROOT, '.cache', 'node', '22', 'bin', 'node');

const tf = terraformEnv();
const available = tf && existsSync(CDKTF);
if (!available && process.env.CI) throw new Error('cdktf-cli or terraform is missing');
if (available && process.env.CI && majorOf(NODE_22) !== 22) throw new Error(`Node.js 22 is missing at ${NODE_22}: run scripts/bootstrap`);

const cdktf = (node: string, args: string[], env: Record<string, string>) => runCdkCli({ node, cli: CDKTF, cwd: EXAMPLE, tf: tf! }, args, env);

(available ? describe : describe.skip)('the real cdktf CLI', () => {
  jest.setTimeout(15 * 60_000);

  afterAll(() => {
    for (const f of ['cdktf.out', 'terraform.hangar-example.tfstate', 'terraform.hangar-example.tfstate.backup']) {
      rmSync(join(EXAMPLE, f), { recursive: true, force: true });
    }
  });

  test.each(NODES.map((node) => [majorOf(node), node] as const))('on Node.js %s: cdktf deploy, hangar diff and cdktf destroy of examples/typescript (all three services) on the embedded engine', (_major, node) => {
    expectDeployCycle((args, env) => cdktf(node, args, env), EXAMPLE);
  });

  (majorOf(NODE_22) === 22 ? test : test.skip)('on Node.js 22: cdktf deploy and destroy of examples/typescript', () => {
    const env = exampleDeployEnv();
    expect(cdktf(NODE_22, ['deploy'], env)).toMatch(/Apply complete! Resources: \d+ added, 0 changed, 0 destroyed/);
    expect(hangar(['diff', join(EXAMPLE, 'cdktf.out')], env).code).toBe(0);
    expect(cdktf(NODE_22, ['destroy'], env)).toMatch(/Destroy complete! Resources: \d+ destroyed/);
  });
});
