import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Clock } from './clock';
import { sha256Hex, timingSafeEqualHex } from './crypto';
import { recordSecret } from './leak-watch';
import { CachedSetting, putSetting } from './settings';
import { Db, Storage } from './storage';

/** The setting that holds the SHA-256 of the root token (the catalog derives the root token's AccessorID from it). */
export const ROOT_TOKEN_SETTING = 'root_token_sha256';
export const ROOT_TOKEN_FILE = 'root-token';

/**
 * The root token: root of the secrets service, management token of the catalog and administrator
 * of the registry. Only its SHA-256 is stored. A fresh data directory gets a random one written to
 * `<data>/root-token` (mode 0600) once; `--dev-root-token` replaces it in dev mode.
 */
export async function ensureRootToken(
  storage: Storage,
  options: { dataDir?: string; devRootToken?: string },
): Promise<{ token?: string; created: boolean }> {
  if (options.devRootToken !== undefined) {
    const token = options.devRootToken;
    await storage.tx((db) => putSetting(db, ROOT_TOKEN_SETTING, sha256Hex(token)));
    return { token, created: true };
  }
  const token = newRootToken();
  // Servers starting at once on a fresh PostgreSQL both find no token; only one insert wins.
  const created = await storage.tx(
    async (db) =>
      (await db.run('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', [ROOT_TOKEN_SETTING, sha256Hex(token)])) === 1,
  );
  if (!created) return { created: false };
  if (options.dataDir) {
    const file = join(options.dataDir, ROOT_TOKEN_FILE);
    writeFileSync(file, `${token}\n`, { mode: 0o600 });
  }
  return { token, created: true };
}

export function newRootToken(): string {
  const token = `hgr.root.${randomBytes(24).toString('base64url')}`;
  recordSecret('token', token);
  return token;
}

/** How long a server trusts the root token's hash it last read (see RootTokenHash). */
export const ROOT_TOKEN_REREAD_MS = 1000;

/**
 * Whether a token is the root token. Every request with a token asks, so the stored hash is kept
 * in memory and read again at most once a second: it changes only when a server starts
 * (ensureRootToken), and a server started with `--dev-root-token` on a PostgreSQL database that
 * others share is seen by them within that second.
 */
export class RootTokenHash {
  private readonly stored: CachedSetting;

  constructor(clock: Clock) {
    this.stored = new CachedSetting(ROOT_TOKEN_SETTING, ROOT_TOKEN_REREAD_MS, clock);
  }

  matchesToken(db: Db, token: string): Promise<boolean> {
    return this.matches(db, sha256Hex(token));
  }

  /** matchesToken for a caller that has the token's SHA-256 (hex) already. */
  async matches(db: Db, tokenSha256: string): Promise<boolean> {
    const stored = await this.stored.get(db);
    return stored !== undefined && timingSafeEqualHex(stored, tokenSha256);
  }
}

/** The root token from `<data>/root-token`, when this process may read it. */
export function readRootTokenFile(dataDir: string): string | undefined {
  const file = join(dataDir, ROOT_TOKEN_FILE);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}
