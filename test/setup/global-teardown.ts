import { existsSync, readFileSync, rmSync } from 'node:fs';
import { STATE_FILE } from './global-setup';
import { stopCluster, TestCluster } from './postgres';

export default async function globalTeardown(): Promise<void> {
  // The cluster global-setup started in this process (STATE_FILE may name another run's by now).
  const own = (globalThis as { hangarTestCluster?: TestCluster }).hangarTestCluster;
  if (!own) return;
  stopCluster(own);
  if (existsSync(STATE_FILE) && (JSON.parse(readFileSync(STATE_FILE, 'utf8')) as TestCluster).pid === own.pid) rmSync(STATE_FILE, { force: true });
}
