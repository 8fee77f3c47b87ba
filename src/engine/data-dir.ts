import { mkdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/**
 * Where the embedded engine keeps its data when no directory is named: `HANGAR_DATA`, else
 * `$XDG_DATA_HOME/hangar`, else `~/.local/share/hangar`. `hangar server` and the custom resources
 * of the embedded mode use the same rule, so by default they meet on the same directory.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.HANGAR_DATA) return resolve(env.HANGAR_DATA);
  if (env.XDG_DATA_HOME) return join(env.XDG_DATA_HOME, 'hangar');
  return join(homedir(), '.local', 'share', 'hangar');
}

/**
 * Creates the data directory, owner-only (0700), whatever the storage: with PostgreSQL it still
 * holds the root token file and the box images. An existing directory keeps its mode (it may be
 * one the operator chose); the server warns when others can enter it (startup-warnings.ts).
 */
export function prepareDataDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}
