import { existsSync, readFileSync, rmSync } from 'node:fs';
import { RUN_TMP_VAR, STATE_FILE } from './global-setup';
import { assertNoLeaks } from './leak-scan';
import { stopCluster, TestCluster } from './postgres';
import { LEAK_WATCH_VAR } from '../../src/engine/leak-watch';

export default async function globalTeardown(): Promise<void> {
  // The cluster global-setup started in this process (STATE_FILE may name another run's by now).
  const own = (globalThis as { hangarTestCluster?: TestCluster }).hangarTestCluster;
  if (own) {
    stopCluster(own);
    if (existsSync(STATE_FILE) && (JSON.parse(readFileSync(STATE_FILE, 'utf8')) as TestCluster).pid === own.pid) rmSync(STATE_FILE, { force: true });
  }
  checkNoLeaks();
  const runTmp = process.env[RUN_TMP_VAR];
  if (runTmp) rmSync(runTmp, { recursive: true, force: true });
}

/** Issue 18: no token or secret in plaintext in any log or audit line of the whole run (leak-scan.ts). */
function checkNoLeaks(): void {
  const dir = process.env[LEAK_WATCH_VAR];
  if (!dir || !existsSync(dir)) return;
  const started = Date.now();
  assertNoLeaks(dir);
  // HANGAR_LEAK_WATCH_KEEP=1 keeps the capture of a clean run too, and says how long the scan took.
  if (process.env.HANGAR_LEAK_WATCH_KEEP) process.stderr.write(`\nleak scan: clean in ${Date.now() - started} ms; capture kept in ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
}
