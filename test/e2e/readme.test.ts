import { spawn } from 'node:child_process';
import { chmodSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLI } from '../helpers/cli';
import { LocalNpmRegistry, LocalPackageIndex, localRegistriesAvailable } from '../helpers/local-registries';
import { builtPackages } from '../helpers/packages';
import { publicServiceBinary } from '../helpers/public-tools';
import { tempDir } from '../helpers/storage';
import { terraformEnv } from '../helpers/terraform';
import { freePort } from '../setup/postgres';

const ROOT = join(__dirname, '..', '..');
const DOCS = ['README.md', join('docs', 'getting-started.md')];
const CDKTF = join(ROOT, 'node_modules', 'cdktf-cli', 'bundle', 'bin', 'cdktf');
/** The marker, on the line before a block, of a block that is not meant to run (installs, long commands). */
const NOT_RUN = /^<!-- not run\b.*-->\s*$/;

/** The ```sh blocks of a Markdown file, in order, but those marked not to run. */
export function runnableBlocks(markdown: string): string[] {
  const blocks: string[] = [];
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== '```sh') continue;
    const end = lines.indexOf('```', i + 1);
    const marked = i > 0 && NOT_RUN.test(lines[i - 1].trim());
    if (!marked) blocks.push(lines.slice(i + 1, end).join('\n'));
    i = end;
  }
  return blocks;
}


const tf = terraformEnv();
const VAULT = publicServiceBinary('vault');
const CONSUL = publicServiceBinary('consul');
const available = localRegistriesAvailable('readme.test.ts') && tf !== undefined && existsSync(CDKTF) && VAULT !== undefined && CONSUL !== undefined;
if (!available) process.stderr.write('readme.test.ts skipped: terraform, cdktf-cli, or the vault and consul binaries (scripts/build-public-services) are missing\n');

test('every block marked not to run is a ```sh block', () => {
  for (const doc of DOCS) {
    const lines = readFileSync(join(ROOT, doc), 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (NOT_RUN.test(line.trim())) expect(`${doc}:${i + 2}: ${lines[i + 1]}`).toBe(`${doc}:${i + 2}: \`\`\`sh`);
    });
  }
});

/**
 * README.md and docs/getting-started.md as a newcomer follows them: their ```sh blocks run in order in one
 * bash in an empty directory. What the docs say to install is there: `hangar` (the bundled CLI), the
 * `vault` and `consul` binaries, Terraform and the CDKTF CLI on PATH; the npm registry and PyPI are local
 * ones (verdaccio, pypiserver) where this build's hangar-cdktf is published; the ports 8080, 8200 and 8500
 * become free ones (in the text and in HANGAR_*_ADDR).
 */
(available ? describe : describe.skip)('the README and docs/getting-started.md run as written', () => {
  jest.setTimeout(20 * 60_000);
  let npm: LocalNpmRegistry;
  let pypi: LocalPackageIndex;

  beforeAll(async () => {
    const dist = builtPackages();
    [npm, pypi] = await Promise.all([LocalNpmRegistry.start(), LocalPackageIndex.start()]);
    npm.publish(join(dist, 'js', readdirSync(join(dist, 'js')).find((f) => /^hangar-cdktf@.*\.tgz$/.test(f))!));
    for (const file of readdirSync(join(dist, 'python'))) pypi.publish(join(dist, 'python', file));
  });
  afterAll(async () => {
    await Promise.all([npm?.stop(), pypi?.stop()]);
  });

  test('every ```sh block, in order', async () => {
    const tools = tempDir('hangar-readme-bin-');
    writeFileSync(join(tools, 'hangar'), `#!/bin/sh\nexec "${process.execPath}" "${CLI}" "$@"\n`);
    writeFileSync(join(tools, 'cdktf'), `#!/bin/sh\nexec "${process.execPath}" "${CDKTF}" "$@"\n`);
    chmodSync(join(tools, 'hangar'), 0o755);
    chmodSync(join(tools, 'cdktf'), 0o755);
    symlinkSync(VAULT!, join(tools, 'vault'));
    symlinkSync(CONSUL!, join(tools, 'consul'));

    const ports = { 8080: await freePort(), 8200: await freePort(), 8500: await freePort() };
    const script = DOCS.flatMap((doc) => runnableBlocks(readFileSync(join(ROOT, doc), 'utf8')).map((block, i) => `echo '### ${doc} block ${i + 1}' >&2\n${block}`))
      .join('\n')
      .replace(/127\.0\.0\.1:(8080|8200|8500)\b/g, (_, port: '8080' | '8200' | '8500') => `127.0.0.1:${ports[port]}`);
    const work = tempDir('hangar-readme-');

    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: work,
      detached: true,
      env: {
        ...process.env,
        ...tf,
        NODE_OPTIONS: '',
        CI: '1',
        HANGAR_NODE: '',
        PATH: `${tools}:${join(ROOT, 'node_modules', '.bin')}:${tf!.PATH ?? process.env.PATH}`,
        HANGAR_REGISTRY_ADDR: `127.0.0.1:${ports[8080]}`,
        HANGAR_SECRETS_ADDR: `127.0.0.1:${ports[8200]}`,
        HANGAR_CATALOG_ADDR: `127.0.0.1:${ports[8500]}`,
        npm_config_registry: npm.url,
        PIP_EXTRA_INDEX_URL: pypi.url,
        PIP_DISABLE_PIP_VERSION_CHECK: '1',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((done) => child.once('exit', done));
    // Whatever a failed block left running (the dev server) goes with the script's process group.
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // all gone already
    }
    if (code !== 0) throw new Error(`the blocks failed (exit ${code}):\n${out.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').slice(-6000)}`);
    expect(out).toMatch(/^acme\/base$/m);
    expect(out).toMatch(/^s3cret$/m);
    expect(out).toMatch(/^listen 80$/m);
    expect(out).toMatch(/^Nginx on Debian 12$/m);
    expect(out).toMatch(/^PostgreSQL 17$/m);
  });
});
