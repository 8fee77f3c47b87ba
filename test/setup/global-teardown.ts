import { existsSync, readFileSync, rmSync } from 'node:fs';
import { STATE_FILE } from './global-setup';
import { stopCluster } from './postgres';

export default async function globalTeardown(): Promise<void> {
  if (!existsSync(STATE_FILE)) return;
  stopCluster(JSON.parse(readFileSync(STATE_FILE, 'utf8')));
  rmSync(STATE_FILE, { force: true });
}
