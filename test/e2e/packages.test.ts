import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCdkCli } from '../helpers/cdk-cli';
import { hangar } from '../helpers/cli';
import { LocalNpmRegistry, LocalPackageIndex, localRegistriesAvailable } from '../helpers/local-registries';
import { freshNpmApp } from '../helpers/npm-app';
import { builtPackages } from '../helpers/packages';
import { tempDir } from '../helpers/storage';
import { terraformEnv } from '../helpers/terraform';

const ROOT = join(__dirname, '..', '..');
const bin = (name: string) => join(ROOT, 'node_modules', '.bin', name);
const run = (cmd: string, args: string[], env: NodeJS.ProcessEnv = {}, cwd = ROOT) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, NODE_OPTIONS: '', ...env }, timeout: 10 * 60_000 });

const CDKTF = join(ROOT, 'node_modules', 'cdktf-cli', 'bundle', 'bin', 'cdktf');
const DEV_VERSIONS = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).devDependencies as Record<string, string>;

/** A data directory of the embedded engine with the owner the Box belongs to (alice's organization acme). */
function dataWithOwner(): string {
  const data = tempDir('hangar-install-data-');
  expect(hangar(['registry', 'create-user', 'alice', '--password', 'password123', '--data', data]).code).toBe(0);
  expect(hangar(['registry', 'create-org', 'acme', '--owner', 'alice', '--data', data]).code).toBe(0);
  return data;
}

/** `cdktf deploy` of the app in `app`, then `hangar diff` finds the deployed box in sync. */
function expectDeployed(app: string, tf: Record<string, string>, path: string): void {
  const env = { HANGAR_DATA: dataWithOwner(), PATH: `${path}:${process.env.PATH}` };
  expect(runCdkCli({ node: process.execPath, cli: CDKTF, cwd: app, tf }, ['deploy'], env)).toMatch(/Apply complete! Resources: \d+ added, 0 changed, 0 destroyed/);
  const diff = hangar(['diff', join(app, 'cdktf.out')], env);
  expect(diff.stdout).toMatch(/objects in sync/);
  expect(diff.code).toBe(0);
}

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
  let dist: string;

  beforeAll(() => {
    dist = builtPackages();
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
  /**
   * As users install them: the npm tarball published to a real npm registry (verdaccio, proxying
   * everything else) and the wheel to a real package index (pypiserver), both on loopback; a fresh
   * TypeScript app and a fresh virtualenv install `hangar-cdktf` by name and `cdktf deploy` a Box.
   */
  const tf = terraformEnv();
  const installable = localRegistriesAvailable('packages.test.ts (installs from local registries)') && tf !== undefined && existsSync(CDKTF);
  (installable ? describe : describe.skip)('installed by name from local registries, then deployed', () => {
    let npm: LocalNpmRegistry;
    let pypi: LocalPackageIndex;
    let version: string;

    beforeAll(async () => {
      [npm, pypi] = await Promise.all([LocalNpmRegistry.start(), LocalPackageIndex.start()]);
      const tarball = readdirSync(join(dist, 'js')).find((f) => /^hangar-cdktf@.*\.tgz$/.test(f))!;
      version = /@(.+)\.jsii\.tgz$/.exec(tarball)![1];
      npm.publish(join(dist, 'js', tarball));
      for (const file of readdirSync(join(dist, 'python'))) pypi.publish(join(dist, 'python', file));
    });
    afterAll(async () => {
      await Promise.all([npm?.stop(), pypi?.stop()]);
    });

    test('TypeScript: npm install hangar-cdktf from the registry, cdktf deploy a Box', () => {
      const app = tempDir('hangar-ts-app-');
      writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, version: '0.0.0' }));
      run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--registry', npm.url, `hangar-cdktf@${version}`,
        `cdktf@${DEV_VERSIONS.cdktf}`, `constructs@${DEV_VERSIONS.constructs}`, `@cdktf/provider-null@${DEV_VERSIONS['@cdktf/provider-null']}`,
        `ts-node@${DEV_VERSIONS['ts-node']}`, `typescript@${DEV_VERSIONS.typescript}`, '@types/node@^22'], {}, app);
      // ts-node compiles to CommonJS (without a tsconfig.json, Node.js 24 would strip the types itself and load the app as ESM)
      writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'commonjs', moduleResolution: 'node', strict: true, skipLibCheck: true } }));
      writeFileSync(join(app, 'cdktf.json'), JSON.stringify({ language: 'typescript', app: 'npx ts-node main.ts', projectId: 'install-ts', sendCrashReports: 'false' }));
      writeFileSync(join(app, 'main.ts'), [
        "import { App, TerraformStack } from 'cdktf';",
        "import { Box, Hangar } from 'hangar-cdktf';",
        'const app = new App();',
        "const stack = new TerraformStack(app, 'registry');",
        "new Hangar(stack, 'Hangar', {});",
        "new Box(stack, 'Web', { owner: 'acme', name: 'web', shortDescription: 'Nginx on Debian 12', private: false });",
        'app.synth();',
      ].join('\n'));
      expectDeployed(app, tf!, join(app, 'node_modules', '.bin'));
    });

    test('Python: pip install hangar-cdktf from the index, cdktf deploy the same Box', () => {
      const venv = tempDir('hangar-install-venv-');
      run('python3', ['-m', 'venv', venv]);
      run(join(venv, 'bin', 'pip'), ['install', '--quiet', '--extra-index-url', pypi.url, `hangar-cdktf==${version}`]);
      const app = tempDir('hangar-py-app-');
      writeFileSync(join(app, 'cdktf.json'), JSON.stringify({ language: 'python', app: 'python main.py', projectId: 'install-py', sendCrashReports: 'false' }));
      writeFileSync(join(app, 'main.py'), [
        'from cdktf import App, TerraformStack',
        'from hangar_cdktf import Box, Hangar',
        'app = App()',
        'stack = TerraformStack(app, "registry")',
        'Hangar(stack, "Hangar")',
        'Box(stack, "Web", owner="acme", name="web", short_description="Nginx on Debian 12", private=False)',
        'app.synth()',
      ].join('\n'));
      expectDeployed(app, tf!, join(venv, 'bin'));
    });
  });
});
