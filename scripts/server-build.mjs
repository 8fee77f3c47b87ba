// What building the `hangar` CLI needs, and nothing else: esbuild and the packages the bundle takes in
// (src/cli, src/engine, src/ui), at the versions package-lock.json pins. `npm run server` on a fresh
// clone installs only these (scripts/bootstrap-server), not the 800 MB the tests and the jsii build need.
//
//   node scripts/server-build.mjs DIR     writes DIR/package.json and DIR/package-lock.json: the lock's
//                                        entries for these packages and everything they depend on
//   node scripts/server-build.mjs --list  prints the packages, one a line
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** esbuild, and every package imported by the code the CLI bundles (test/cli/server-build.test.ts keeps this complete). */
const SERVER_BUILD_PACKAGES = [
  'esbuild',
  '@asteasolutions/zod-to-openapi', '@peculiar/asn1-ecc', '@peculiar/asn1-pkcs8', '@peculiar/asn1-rsa',
  '@peculiar/asn1-schema', '@peculiar/asn1-x509', '@peculiar/x509', 'asn1js', 'croner', 'dns-packet', 'fastify',
  'htm', 'jose', 'ldapts', 'markdown-it', 'mysql2', 'pg', 'pino', 'pino-pretty', 'preact', 'preact-render-to-string',
  'prom-client', 're2js', 'sanitize-html', 'sshpk', 'tar-stream', 'undici', 'zod',
];

/** The lock's entries (by path, "node_modules/a/node_modules/b") that installing `roots` needs. */
function closure(packages, roots) {
  const wanted = new Map();
  // Node's resolution inside the lock: from a package's own node_modules up to the top.
  const resolve = (from, name) => {
    for (let dir = from; ; dir = dir.slice(0, Math.max(0, dir.lastIndexOf('/node_modules/')))) {
      const path = `${dir ? `${dir}/` : ''}node_modules/${name}`;
      if (packages[path]) return path;
      if (!dir) return undefined;
    }
  };
  const visit = (path, optional) => {
    if (wanted.has(path)) return;
    wanted.set(path, packages[path]);
    const entry = packages[path];
    const deps = { ...entry.dependencies, ...entry.optionalDependencies, ...entry.peerDependencies };
    for (const name of Object.keys(deps)) {
      const found = resolve(path, name);
      const isOptional = name in (entry.optionalDependencies ?? {}) || entry.peerDependenciesMeta?.[name]?.optional;
      // The lock records only this platform's optional native bindings (esbuild's, for one).
      if (found) visit(found, optional || isOptional);
      else if (!isOptional && !optional) throw new Error(`package-lock.json has no ${name} for ${path}`);
    }
  };
  for (const root of roots) {
    const path = `node_modules/${root}`;
    if (!packages[path]) throw new Error(`package-lock.json has no ${root}: add it to the devDependencies`);
    visit(path, false);
  }
  return wanted;
}

function write(dir) {
  const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8'));
  const entries = closure(lock.packages, SERVER_BUILD_PACKAGES);
  const dependencies = Object.fromEntries(SERVER_BUILD_PACKAGES.map((name) => [name, lock.packages[`node_modules/${name}`].version]));
  const manifest = { name: 'hangar-server-build', private: true, dependencies };
  // Installed as dependencies here, so not "dev" (npm would leave dev entries out of this install).
  const packages = { '': manifest };
  for (const [path, entry] of entries) {
    const { dev, devOptional, peer, ...rest } = entry;
    packages[path] = rest;
  }
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  writeFileSync(join(dir, 'package-lock.json'), `${JSON.stringify({ name: manifest.name, lockfileVersion: 3, requires: true, packages }, null, 2)}\n`);
}

const arg = process.argv[2];
if (arg === '--list') process.stdout.write(`${SERVER_BUILD_PACKAGES.join('\n')}\n`);
else if (arg) write(arg);
else {
  process.stderr.write('usage: node scripts/server-build.mjs DIR | --list\n');
  process.exit(2);
}
