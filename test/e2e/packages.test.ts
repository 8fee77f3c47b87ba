import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freshNpmApp } from '../helpers/npm-app';
import { tempDir } from '../helpers/storage';

const ROOT = join(__dirname, '..', '..');
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);
const run = (cmd: string, args: string[], env: NodeJS.ProcessEnv = {}) =>
  execFileSync(cmd, args, { cwd: ROOT, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, NODE_OPTIONS: '', ...env }, timeout: 10 * 60_000 });

function synthesized(outdir: string) {
  return JSON.parse(readFileSync(join(outdir, 'stacks', 'hangar-example', 'cdk.tf.json'), 'utf8'));
}

/**
 * The npm package: jsii-pacmak packs the tarball, a fresh app installs it with cdktf from the npm
 * registry and synthesizes. The Python package: jsii-pacmak builds the wheel, a fresh virtual environment installs it with the
 * cdktf Python packages from PyPI, and examples/python synthesizes the same stack as examples/typescript.
 */
describe('published packages', () => {
  jest.setTimeout(15 * 60_000);
  const dist = tempDir('hangar-dist-');

  beforeAll(() => {
    run(bin('jsii'), ['--silence-warnings=reserved-word']);
    run(bin('jsii-pacmak'), ['--target', 'js', '--target', 'python', '--outdir', dist]);
  });

  test('the npm tarball installs into a fresh CDKTF app, which synthesizes custom resources with the bundled CLI', () => {
    const tarball = readdirSync(join(dist, 'js')).find((f) => f.endsWith('.tgz'));
    expect(tarball).toBeDefined();
    const versions = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).devDependencies as Record<string, string>;
    const app = freshNpmApp('hangar-npm-app-', [join(dist, 'js', tarball!),
      `cdktf@${versions.cdktf}`, `constructs@${versions.constructs}`, `@cdktf/provider-null@${versions['@cdktf/provider-null']}`]);
    writeFileSync(join(app, 'main.js'), [
      "const { App, TerraformStack } = require('cdktf');",
      "const { Hangar, Box, Namespace } = require('hangar-cdktf');",
      'const app = new App();',
      "const stack = new TerraformStack(app, 'stack');",
      "const hangar = new Hangar(stack, 'Hangar', { registryUrl: 'http://127.0.0.1:8080', catalogUrl: 'http://127.0.0.1:8500' });",
      "new Box(stack, 'Web', { hangar, owner: 'acme', name: 'web', shortDescription: 'from the npm package' });",
      "new Namespace(stack, 'Team', { hangar, name: 'team-a' });",
      'app.synth();',
    ].join('\n'));
    const out = tempDir('hangar-npm-out-');
    execFileSync(process.execPath, ['main.js'], { cwd: app, env: { ...process.env, NODE_OPTIONS: '', CDKTF_OUTDIR: out }, stdio: 'pipe' });
    const stack = JSON.parse(readFileSync(join(out, 'stacks', 'stack', 'cdk.tf.json'), 'utf8'));
    const web = stack.resource.null_resource[Object.keys(stack.resource.null_resource).find((k) => k.startsWith('Web_Config_'))!];
    expect(JSON.parse(Buffer.from(web.triggers.payload, 'base64url').toString())).toMatchObject({ kind: 'registry.box', key: 'acme/web' });
    expect(existsSync(join(out, 'stacks', 'stack', web.provisioner[0]['local-exec'].environment.HANGAR_CLI))).toBe(true);
  });

  test('the wheel installs in a virtualenv and examples/python synthesizes what examples/typescript does', () => {
    const wheel = readdirSync(join(dist, 'python')).find((f) => f.endsWith('.whl'));
    expect(wheel).toBeDefined();

    const venv = tempDir('hangar-venv-');
    run('python3', ['-m', 'venv', venv]);
    run(join(venv, 'bin', 'pip'), ['install', '--quiet', join(dist, 'python', wheel!)]);

    // Both examples upload this file (same path, same checksum) for web 1.0.0's virtualbox provider.
    const boxFile = join(tempDir('hangar-box-'), 'web.box');
    writeFileSync(boxFile, 'a small box file');
    const env = {
      PATH: `${join(ROOT, 'node_modules', '.bin')}:${process.env.PATH}`,
      HANGAR_REGISTRY_URL: '',
      HANGAR_EXAMPLE_OWNER: 'acme',
      HANGAR_EXAMPLE_BOX_FILE: boxFile,
    };
    const pyOut = tempDir('hangar-py-out-');
    run(join(venv, 'bin', 'python'), [join(ROOT, 'examples', 'python', 'main.py')], { ...env, CDKTF_OUTDIR: pyOut });
    const tsOut = tempDir('hangar-ts-out-');
    run(bin('ts-node'), ['--transpile-only', join(ROOT, 'examples', 'typescript', 'main.ts')], { ...env, CDKTF_OUTDIR: tsOut });

    const py = synthesized(pyOut);
    const ts = synthesized(tsOut);
    expect(Object.keys(py.resource.null_resource).sort()).toEqual(Object.keys(ts.resource.null_resource).sort());
    expect(py.resource).toEqual(ts.resource);
    expect(py.provider).toEqual(ts.provider);
    expect(py.terraform.required_providers).toEqual(ts.terraform.required_providers);
    const cli = py.resource.null_resource[Object.keys(py.resource.null_resource).find((k) => k.startsWith('Web_Config_'))!]
      .provisioner[0]['local-exec'].environment.HANGAR_CLI;
    expect(existsSync(join(pyOut, 'stacks', 'hangar-example', cli))).toBe(true);
    const provider = py.resource.null_resource[Object.keys(py.resource.null_resource).find((k) => k.startsWith('WebV1Virtualbox_Config_'))!];
    expect(JSON.parse(Buffer.from(provider.triggers.payload, 'base64url').toString()).desired).toMatchObject({ file: boxFile });
  });
});
