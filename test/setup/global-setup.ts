import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findPostgresBin, startCluster } from './postgres';
import { makeRunTmp } from './run-tmp';
import { LEAK_WATCH_VAR, prepareLeakWatchDir } from '../../src/engine/leak-watch';
import { NESTED_TX_CHECK_VAR } from '../../src/engine/storage/nesting-check';

export const STATE_FILE = join(__dirname, '..', '..', '.cache', 'test-cluster.json');

/** Set to the run's temporary directory, which the teardown removes whole. */
export const RUN_TMP_VAR = 'HANGAR_TEST_RUN_TMP';

/**
 * Once per test run: the bundled CLI is built (tests run it as users do) and a private PostgreSQL
 * cluster is started. Under CI a missing PostgreSQL is a failure, never a silent skip.
 */
export default async function globalSetup(): Promise<void> {
  const root = join(__dirname, '..', '..');
  execFileSync(process.execPath, [join(root, 'scripts', 'bundle.mjs')], { cwd: root, stdio: 'pipe' });
  // Every process of the run (workers, servers and CLIs they spawn) captures its log and audit lines
  // and records the secrets it handles here; the teardown scans the one for the other (leak-scan.ts).
  mkdirSync(join(root, '.cache'), { recursive: true });
  process.env[LEAK_WATCH_VAR] = prepareLeakWatchDir(mkdtempSync(join(root, '.cache', 'leak-watch-')));
  // Every temporary file and directory of the run (tests, servers, CLIs, Terraform, the client
  // suites) goes under one directory that the teardown removes, however a test ends.
  const runTmp = makeRunTmp('hangar-run-');
  // A transaction opened inside another fails at once instead of hanging the server it runs in.
  process.env[NESTED_TX_CHECK_VAR] = '1';
  process.env[RUN_TMP_VAR] = runTmp;
  process.env.TMPDIR = runTmp;

  const bin = findPostgresBin();
  if (!bin) {
    if (process.env.CI) throw new Error('PostgreSQL binaries not found (install postgresql or set HANGAR_PG_BIN)');
    process.stderr.write('\nPostgreSQL binaries not found: PostgreSQL tests are skipped (CI fails instead)\n');
    return;
  }
  const cluster = await startCluster(bin);
  // Teardown runs in this same process: it stops this run's cluster, not the one another
  // concurrent jest run (same working tree) last recorded in STATE_FILE.
  (globalThis as { hangarTestCluster?: unknown }).hangarTestCluster = cluster;
  process.env.HANGAR_TEST_POSTGRES_URL = cluster.url;
  mkdirSync(join(root, '.cache'), { recursive: true });
  writeFileSync(STATE_FILE, JSON.stringify(cluster));
  if (!existsSync(STATE_FILE)) throw new Error('could not record the test cluster');
}
