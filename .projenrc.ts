import { cdktf, javascript, release, typescript } from 'projen';

/**
 * The single source of package.json, tsconfig, jest and eslint settings.
 * Run `npx projen` after editing; running it again leaves no diff.
 */
const project = new cdktf.ConstructLibraryCdktf({
  name: 'hangar-cdktf',
  description:
    'Hangar: a box registry, a secrets service and a service catalog in one engine, ' +
    'with CDK for Terraform constructs that manage all three.',
  author: 'Hangar developers',
  authorAddress: 'hangar@example.com',
  repositoryUrl: 'https://github.com/hangar-dev/hangar.git',
  defaultReleaseBranch: 'main',
  projenrcTs: true,
  license: 'Apache-2.0',
  keywords: ['cdktf', 'terraform', 'vagrant', 'box-registry', 'secrets', 'catalog'],

  // jsii and the TypeScript minor it compiles with; TypeScript 7 breaks jsii and ts-node.
  jsiiVersion: '~5.9.0',
  typescriptVersion: '~5.9.3',
  cdktfVersion: '^0.21.0',
  constructsVersion: '^10.4.2',
  minNodeVersion: '22.12.0',
  peerDeps: ['@cdktf/provider-null@^11.0.1'],

  // The engine's libraries are bundled into the one-file CLI (assets/hangar.cjs) by esbuild,
  // so the published library depends on none of them at run time.
  devDeps: [
    // Node.js from the npm registry (npm scripts put node_modules/.bin first on PATH). The engine
    // needs >= 22.12; tests need 24 because jest loads ESM-only packages (jose, htmlparser2) only there.
    'node@^24.11.0',
    'fastify@^5',
    'zod@^4',
    'undici@^7',
    'pg@^8',
    '@types/pg',
    'pino@^9',
    'markdown-it@^14',
    '@types/markdown-it',
    'sanitize-html@^2',
    '@types/sanitize-html',
    'esbuild@^0.25',
    // the real `cdktf deploy` of the example in the end-to-end tests
    'cdktf-cli@0.21.0',
    // benchmarks: the load generator runs in its own process, as users measure
    'autocannon@^8',
    // hardening: property-based fuzzing of every route table
    'fast-check@^4',
    // operations: Prometheus metrics, readable dev logs, OpenAPI documents from the zod route tables
    'prom-client@^15',
    'pino-pretty@^13',
    '@asteasolutions/zod-to-openapi@^8',
    '@seriousme/openapi-schema-validator@^2',
    // registry: dependencies of the box registry and its tests
    // secrets: dependencies of the secrets service and its tests
    '@peculiar/x509@^2',
    // pki: ASN.1 types that @peculiar/x509 has no class for (otherName SANs, name constraints, CRL numbers)
    '@peculiar/asn1-x509@^2',
    '@peculiar/asn1-schema@^2',
    // pki: EC and PKCS#8 private key structures (issued keys are encoded from their raw parts); asn1js (the
    // encoder under asn1-schema) to put the signed TBSCertificate's bytes into the Certificate as they are
    '@peculiar/asn1-ecc@^2',
    '@peculiar/asn1-pkcs8@^2',
    // pki: RSASSA-PSS parameters of certificates signed with use_pss
    '@peculiar/asn1-rsa@^2',
    'asn1js@^3',
    'mysql2@^3',
    // database: the cron schedules of static roles (rotation_schedule), read as Vault's standard 5-field parser does
    'croner@^10',
    'ldapts@^9',
    'sshpk@^1',
    '@types/sshpk',
    're2js@^2',
    'jose@^6',
    'oidc-provider@^9',
    'playwright-core@^1',
    'node-vault@^0.12',
    // rabbitmq engine tests: an AMQP client judges issued credentials
    'amqplib@^0.10',
    '@types/amqplib',
    // web UI (src/ui): Preact components written with htm tagged templates, rendered to HTML on the server
    // and bundled for the browser by esbuild (scripts/bundle-ui.mjs)
    'preact@11.2.0',
    'htm@3.1.1',
    'preact-render-to-string@6.8.2',
    // web UI tests: the WCAG 2 A/AA rules (contrast included) checked in each page (test/ui/browser.ts)
    'axe-core@4.14.1',
    // catalog: dependencies of the service catalog and its tests
    'consul@^2',
    // operations: the backup file (`hangar operator backup`) is a tar, written and read as a stream
    'tar-stream@^3',
    // catalog DNS: DNS messages encoded and decoded by the usual library, not by hand
    'dns-packet@^5',
    '@types/dns-packet',
  ],
  allowScripts: ['node', 'esbuild', '@cdktf/node-pty-prebuilt-multiarch'],
  bin: { hangar: 'assets/hangar.cjs' },

  packageManager: javascript.NodePackageManager.NPM,
  github: false,
  // Releases are cut locally, no GitHub workflows (docs/releasing.md): `npx projen release` bumps the
  // version from the conventional commits since the last tag, builds and tests, packs dist/, prepends
  // CHANGELOG.md, commits and tags; the maintainer pushes and publishes.
  release: true,
  releaseTrigger: release.ReleaseTrigger.manual({ changelogPath: 'CHANGELOG.md', gitPushCommand: '' }),
  majorVersion: 0,
  // With no tag yet projen would release 0.0.0; the first release is 0.1.0, later ones follow the commits.
  nextVersionCommand: "git tag --list 'v*' | grep -c . >/dev/null || echo 0.1.0",
  buildWorkflow: false,
  depsUpgrade: false,
  pullRequestTemplate: false,
  prettier: false,
  // `npm test` runs eslint as a check; `npm run lint:fix` (below) is the one task that rewrites files.
  eslintOptions: { dirs: ['src'], devdirs: ['test', 'bench', 'build-tools', 'projenrc'], commandOptions: { fix: false } },
  catalog: { announce: false },
  publishToPypi: { distName: 'hangar-cdktf', module: 'hangar_cdktf' },
  docgen: true,

  jestOptions: {
    passWithNoTests: false,
    updateSnapshot: javascript.UpdateSnapshot.NEVER,
    jestConfig: {
      testTimeout: 60_000,
      collectCoverage: false,
      // Each test file starts its own servers; two workers fit the two cores.
      maxWorkers: 2,
      globalSetup: '<rootDir>/test/setup/global-setup.ts',
      globalTeardown: '<rootDir>/test/setup/global-teardown.ts',
      // A worker whose event loop is empty still needs time to exit: Node.js frees its V8 heap
      // (~350 MiB after a few suites) at exit, 0.4-0.8 s on a loaded 2-core machine, longer than
      // jest's 500 ms, which then reported "failed to exit gracefully". A worker that really leaks
      // a handle never exits, so it is still reported, 5 s later.
      workerGracefulExitTimeout: 5_000,
      // .cache/ holds the public services' source trees (scripts/build-public-services): jest would
      // crawl them and report their snapshot files as obsolete.
      modulePathIgnorePatterns: ['<rootDir>/.cache/'],
    },
  },
  gitignore: ['/assets/', '/.hangar/', 'cdktf.out/', '__pycache__/', '*.tsbuildinfo', '/.cache/', '*.tfstate', '*.tfstate.*', '.terraform/', '.terraform.lock.hcl'],
  // assets/ui/ (the web UI's browser files) travels inside assets/hangar.cjs already.
  // .cache/ holds build and test tools (node headers, local registries, executables): never published.
  npmIgnoreOptions: { ignorePatterns: ['/bench/', '/examples/', '/scripts/', '/docs/', '/.ci/', '/cdktn/', '/assets/ui/', '/.cache/', '/Dockerfile', '/.dockerignore'] },
});

// The engine, CLI, clients, reconcilers and web UI are bundled (assets/hangar.cjs, assets/ui); their libraries are
// devDependencies on purpose. The constructs (the published library code) may not use them.
project.eslint?.addOverride({
  files: ['src/engine/**', 'src/cli/**', 'src/client/**', 'src/reconcile/**', 'src/ui/**', 'bench/**'],
  rules: {
    'import/no-extraneous-dependencies': ['error', { devDependencies: true, optionalDependencies: false, peerDependencies: true }],
    // The CLI requires heavy modules where a command needs them, so that others start fast.
    '@typescript-eslint/no-require-imports': 'off',
  },
});

// jest loads ESM-only packages through require(esm) only with VM modules on (Node >= 24.9).
project.testTask.env('NODE_OPTIONS', '--experimental-vm-modules --disable-warning=ExperimentalWarning');

// ts-jest transpiles each test file alone (isolatedModules), so nothing else would type-check the tests
// and benchmarks: `npm test` does, first. Without isolatedModules here, since src/index.ts re-exports
// interfaces by name, as jsii expects.
const typecheck = project.addTask('typecheck', {
  description: 'Type-checks the tests and the benchmarks',
  steps: [{ exec: 'tsc --noEmit -p test/tsconfig.json --isolatedModules false' }, { exec: 'tsc --noEmit -p bench/tsconfig.json --isolatedModules false' }],
});
project.testTask.prependSpawn(typecheck);

// The one-file CLI that custom resources run and that `npx hangar` starts.
const bundle = project.addTask('bundle', {
  description: 'Bundle the hangar CLI into assets/hangar.cjs',
  exec: 'node scripts/bundle.mjs',
});
project.postCompileTask.spawn(bundle);

// Long runs stay out of `npm test`: `npm run soak -- --minutes N` (mixed load, a row per minute).
const soak = project.addTask('soak', { description: 'Mixed load on all three APIs of one hangar server: errors, latency and RSS each minute' });
soak.spawn(bundle);
soak.exec('ts-node --transpile-only bench/soak.ts', { receiveArgs: true });

// `npm run bench`: every row of the performance goals (issue 19) against the freshly bundled CLI,
// each with its baseline from the same run; writes bench/results.md (under 10 minutes on 2 cores).
const bench = project.addTask('bench', { description: 'All benchmarks of the performance goals; writes bench/results.md' });
bench.spawn(bundle);
bench.exec('ts-node --transpile-only bench/run-all.ts', { receiveArgs: true });

// `npm run fuzz`: the property-based suite of test/fuzz over every route table, long (HANGAR_FUZZ_RUNS
// requests per route, 100 by default, a random seed; HANGAR_FUZZ_SEED replays one); `npm test` runs it short.
project.addTask('fuzz', {
  description: 'Fuzz every route of the three APIs (HANGAR_FUZZ_RUNS per route, default 100)',
  env: { NODE_OPTIONS: '--experimental-vm-modules --disable-warning=ExperimentalWarning', HANGAR_FUZZ_LONG: '1' },
  exec: 'jest --runInBand test/fuzz',
  receiveArgs: true,
});

// `npm run ui:screenshots`: the web UI suites, saving their screenshots into docs/ui (shown by docs/ui.md);
// `npm test` writes them under .cache/ui-screenshots so that it never rewrites the tree.
project.addTask('ui:screenshots', {
  description: 'Run the web UI suites in Chromium and refresh the screenshots in docs/ui',
  env: { NODE_OPTIONS: '--experimental-vm-modules --disable-warning=ExperimentalWarning', HANGAR_UI_SCREENSHOTS: 'docs/ui' },
  exec: 'jest test/ui',
  receiveArgs: true,
});

// `npm test` checks lint (eslintOptions above) and never rewrites the tree; fixes are asked for.
const LINTED = 'src test bench build-tools projenrc .projenrc.ts';
project.addTask('lint:fix', {
  description: 'Runs eslint and fixes what it can',
  env: { ESLINT_USE_FLAT_CONFIG: 'false', NODE_NO_WARNINGS: '1' },
  exec: `eslint --ext .ts,.tsx --fix --no-error-on-unmatched-pattern ${LINTED}`,
  receiveArgs: true,
});

// `npm run openapi`: docs/openapi/*.json and README.md from the route tables (a test checks they are current).
project.addTask('openapi', { description: 'Writes the OpenAPI documents of the three APIs to docs/openapi', exec: 'ts-node --transpile-only scripts/openapi.ts' });

// The README's two commands work on a fresh clone. `npm test`: scripts/bootstrap installs what is
// missing (dependencies, including a Node.js >= 24 from the npm registry) before projen's tasks run.
// `npm run server`: scripts/bootstrap-server builds the CLI with only the packages that takes.
project.package.setScript('test', 'bash scripts/bootstrap && projen test');
project.package.setScript('server', 'bash scripts/bootstrap-server && node assets/hangar.cjs server');

// hangar-cdktn: the same constructs for CDK Terrain (cdktn, the maintained fork of CDK for Terraform).
// Its sources are generated from src/ (scripts/cdktn-sources.mjs: the module 'cdktf' becomes 'cdktn'),
// compiled with tsc and packed into dist/js beside hangar-cdktf; cdktn-cli deploys the example with it
// in test/e2e/cdktn-cli.test.ts. A project of its own, because cdktn needs constructs >= 10.6 and
// cdktn-cli pins other jsii tools than this project's.
const cdktn = new typescript.TypeScriptProject({
  parent: project,
  outdir: 'cdktn',
  name: 'hangar-cdktn',
  description: 'Hangar constructs for CDK Terrain (cdktn): the box registry, secrets service and service catalog from `cdktn deploy`.',
  authorName: 'Hangar developers',
  authorEmail: 'hangar@example.com',
  repository: 'https://github.com/hangar-dev/hangar.git',
  license: 'Apache-2.0',
  keywords: ['cdktn', 'terraform', 'vagrant', 'box-registry', 'secrets', 'catalog'],
  defaultReleaseBranch: 'main',
  packageManager: javascript.NodePackageManager.NPM,
  typescriptVersion: '~5.9.3',
  minNodeVersion: '22.12.0',
  peerDeps: ['cdktn@^0.24.0', 'constructs@^10.6.0'],
  // the real `cdktn deploy` of the example in the end-to-end tests
  devDeps: ['cdktn-cli@0.24.0', '@types/node@^22'],
  bin: { hangar: 'assets/hangar.cjs' },
  readme: { contents: '# hangar-cdktn\n\nHangar\'s constructs for CDK Terrain (`cdktn`), built from the same sources as `hangar-cdktf`. See the Hangar repository\'s docs/constructs.md.\n' },
  sampleCode: false,
  jest: false,
  eslint: false,
  prettier: false,
  github: false,
  release: false,
  buildWorkflow: false,
  depsUpgrade: false,
  pullRequestTemplate: false,
  npmignoreEnabled: true,
  tsconfig: { compilerOptions: { rootDir: 'src', outDir: 'lib', lib: ['es2022'], target: 'ES2022', skipLibCheck: true } },
});
// Generated, not committed: the sources (from src/), the bundled CLI, the compiled lib.
cdktn.gitignore.removePatterns('!/src/');
cdktn.gitignore.exclude('/src/', '/assets/');
cdktn.tryRemoveFile('test/tsconfig.json');
cdktn.preCompileTask.exec('node ../scripts/cdktn-sources.mjs sources');
cdktn.packageTask.reset('node ../scripts/cdktn-sources.mjs pack');
// `npx projen package` (and so the release) packs hangar-cdktn beside hangar-cdktf.
const packageCdktn = project.addTask('package:cdktn', { description: 'Builds hangar-cdktn (CDK Terrain) from the same sources and packs it into dist/js', cwd: 'cdktn' });
packageCdktn.exec('projen build');
project.tasks.tryFind('package:js')?.spawn(packageCdktn);

// The single-file `hangar` for linux-x64 (scripts/build-executable: a Node.js single executable application
// with the bundled CLI, built by post-compile), then the checksums of every artifact in dist/.
// `npx projen package` (and so the release) builds both after the packages.
const packageExecutable = project.addTask('package:executable', {
  description: 'Builds the single-file hangar for linux-x64 into dist/hangar-linux-x64 (with its .sha256)',
  exec: 'bash scripts/build-executable --out dist',
});
const checksums = project.addTask('package:checksums', {
  description: 'Writes dist/SHA256SUMS: the SHA-256 of every package and executable in dist/',
  exec: "cd dist && find js python hangar-linux-x64 -type f ! -name '*.sha256' 2>/dev/null | sort | xargs sha256sum > SHA256SUMS",
});
const packageAll = project.tasks.tryFind('package-all');
packageAll?.spawn(packageExecutable);
packageAll?.spawn(checksums);

project.synth();
