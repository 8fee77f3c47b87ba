import { chmodSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A directory for every temporary file of one run (a test run, `npm run bench`), for TMPDIR: what
 * Node's os.tmpdir(), Go and Python read, so the processes the run starts write there too and one
 * removal at the end leaves nothing behind. Open to all like /tmp, since PostgreSQL runs as another user.
 */
export function makeRunTmp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  chmodSync(dir, 0o1777);
  return dir;
}
