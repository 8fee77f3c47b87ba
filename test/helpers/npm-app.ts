import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tempDir } from './storage';

/**
 * A fresh npm project with the given packages installed (tarball paths or name@version), as a user
 * of the published library would make it. npm takes what `scripts/bootstrap` already put in its
 * cache (--prefer-offline) and gives up on a stalled registry request after a minute and retries,
 * not after npm's default five minutes: one stalled request twice had used up a CI run's ten.
 */
export function freshNpmApp(prefix: string, packages: string[]): string {
  const app = tempDir(prefix);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, version: '0.0.0' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--silent', '--prefer-offline',
    '--fetch-timeout=60000', '--fetch-retries=5', ...packages], {
    cwd: app,
    stdio: 'pipe',
    env: { ...process.env, NODE_OPTIONS: '' },
    timeout: 12 * 60_000,
  });
  return app;
}
