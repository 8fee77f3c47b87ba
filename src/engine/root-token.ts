import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { sha256Hex, timingSafeEqualHex } from './crypto';
import { recordSecret } from './leak-watch';
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

export async function isRootToken(db: Db, token: string): Promise<boolean> {
  return isRootTokenHash(db, sha256Hex(token));
}

/** isRootToken for a caller that has the token's SHA-256 (hex) already. */
export async function isRootTokenHash(db: Db, tokenSha256: string): Promise<boolean> {
  const stored = await getSetting(db, ROOT_TOKEN_SETTING);
  return stored !== undefined && timingSafeEqualHex(stored, tokenSha256);
}

/** The root token from `<data>/root-token`, when this process may read it. */
export function readRootTokenFile(dataDir: string): string | undefined {
  const file = join(dataDir, ROOT_TOKEN_FILE);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

export async function getSetting(db: Db, name: string): Promise<string | undefined> {
  const row = await db.get<{ value: string }>('SELECT value FROM settings WHERE name = ?', [name]);
  return row?.value;
}

export async function putSetting(db: Db, name: string, value: string): Promise<void> {
  await db.run(
    'INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
    [name, value],
  );
}
