import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { expectDeployCycle, runCdkCli } from '../helpers/cdk-cli';
import { freshNpmApp } from '../helpers/npm-app';
import { tempDir } from '../helpers/storage';
import { terraformEnv } from '../helpers/terraform';

const ROOT = join(__dirname, '..', '..');
const PROJECT = join(ROOT, 'cdktn');
const CDKTN = join(PROJECT, 'node_modules', 'cdktn-cli', 'bundle', 'bin', 'cdktn.js');
const EXAMPLE = join(ROOT, 'examples', 'typescript');

const tf = terraformEnv();
const available = tf && existsSync(CDKTN);
if (!available && process.env.CI) throw new Error('cdktn-cli (in cdktn/node_modules: scripts/bootstrap) or terraform is missing');

const run = (cmd: string, args: string[], cwd: string) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, NODE_OPTIONS: '' }, timeout: 10 * 60_000 });

/**
 * hangar-cdktn, the CDK Terrain build of the construct library: the projen tasks of cdktn/ generate
 * its sources from src/, compile and pack it; a fresh app installs the tarball with cdktn and
 * constructs from the npm registry, and runs examples/typescript with its imports turned to cdktn
 * and hangar-cdktn, as the library's own are. cdktn-cli then deploys it like cdktf-cli does.
 */
(available ? describe : describe.skip)('the real cdktn CLI (CDK Terrain)', () => {
  jest.setTimeout(15 * 60_000);
  let app: string;

  beforeAll(() => {
    const projen = join(ROOT, 'node_modules', '.bin', 'projen');
    run(projen, ['pre-compile'], PROJECT);
    run(projen, ['compile'], PROJECT);
    const dist = tempDir('hangar-cdktn-dist-');
    run(process.execPath, [join(ROOT, 'scripts', 'cdktn-sources.mjs'), 'pack', dist], PROJECT);
    const tarball = readdirSync(dist).find((f) => f.endsWith('.tgz'))!;
    const versions = JSON.parse(readFileSync(join(PROJECT, 'package.json'), 'utf8')).devDependencies as Record<string, string>;
    app = freshNpmApp('hangar-cdktn-app-', [join(dist, tarball), `cdktn@${versions.cdktn}`, `constructs@${versions.constructs}`]);

    const example = readFileSync(join(EXAMPLE, 'main.ts'), 'utf8').replace("from 'cdktf'", "from 'cdktn'").replace("from '../../src'", "from 'hangar-cdktn'");
    const compiled = ts.transpileModule(example, { compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022 } });
    writeFileSync(join(app, 'main.js'), compiled.outputText);
    const config = JSON.parse(readFileSync(join(EXAMPLE, 'cdktf.json'), 'utf8'));
    writeFileSync(join(app, 'cdktf.json'), JSON.stringify({ ...config, app: 'node main.js' }, null, 2));
  });

  test('the example deploys, is in sync, redeploys with no change and destroys with hangar-cdktn', () => {
    expect(readFileSync(join(app, 'main.js'), 'utf8')).toMatch(/require\("hangar-cdktn"\)/);
    const cli = { node: process.execPath, cli: CDKTN, cwd: app, tf: tf! };
    expectDeployCycle((args, env) => runCdkCli(cli, args, env), app);
  });
});
