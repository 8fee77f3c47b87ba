import { createCipheriv, createDecipheriv, createHash, createSecretKey, KeyObject, randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pooledRandomBytes } from '../../random';
import type { Db, Storage } from '../../storage';

/** The file, in the data directory, that holds the key wrapping the keyring. */
export const SECRETS_KEY_FILE = 'secrets.key';
/** Environment variable that supplies the key instead of the file (base64 or hex of 32 bytes). */
export const SECRETS_KEY_ENV = 'HANGAR_SECRETS_KEY';
/** Environment variable naming the key file when it lives elsewhere (`--secrets-key-file`). */
export const SECRETS_KEY_FILE_ENV = 'HANGAR_SECRETS_KEY_FILE';

/**
 * The seam for a KMS (not built yet): a function that returns the 32-byte master key, for example
 * by asking a KMS to decrypt a wrapped key kept beside the database. Given to the engine
 * (`EngineOptions.unseal`), it replaces the environment variable and the key file.
 */
export type UnsealHook = () => Promise<Buffer>;

/**
 * Where the master key comes from: `HANGAR_SECRETS_KEY`, else the key file named by
 * `--secrets-key-file` (or `HANGAR_SECRETS_KEY_FILE`), else `<data>/secrets.key`.
 */
export function secretsKeyLocation(
  dataDir: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
  keyFile?: string,
): { readonly env: string } | { readonly file: string } {
  if (env[SECRETS_KEY_ENV]) return { env: SECRETS_KEY_ENV };
  const file = keyFile ?? env[SECRETS_KEY_FILE_ENV] ?? (dataDir ? join(dataDir, SECRETS_KEY_FILE) : undefined);
  if (!file) throw new Error(`no secrets key: set ${SECRETS_KEY_ENV} or give the engine a data directory`);
  return { file: resolve(file) };
}

/**
 * The master key at its location, undefined when its file does not exist (yet). A key file others
 * may read is refused.
 */
export function readMasterKey(location: ReturnType<typeof secretsKeyLocation>, env: NodeJS.ProcessEnv = process.env): Buffer | undefined {
  if ('env' in location) return decodeKey(env[location.env]!, location.env);
  const file = location.file;
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  // Group and other bits (the low six) must be clear.
  if (statSync(file).mode % 0o100 !== 0) throw new Error(`${file} is readable by others: chmod 600 it`);
  return decodeKey(text.trim(), file);
}

/**
 * A master key's fingerprint: tells two keys apart (backups record it) without revealing the key,
 * a SHA-256 of the key under a label of its own, so it equals no other hash made of the key.
 */
export function masterKeyFingerprint(key: Buffer): string {
  return `sha256:${createHash('sha256').update('hangar secrets master key fingerprint\0').update(key).digest('hex')}`;
}

/** The master key's text as a key file holds it. */
export function masterKeyText(key: Buffer): string {
  return `${key.toString('base64')}\n`;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = 'hgb1';
/** How long a process trusts its idea of the newest keyring term before asking the database again. */
const TERM_REFRESH_MS = 1000;

/**
 * Encryption at rest for everything the secrets service stores (AES-256-GCM, node:crypto).
 *
 * A random data key per keyring term seals the values; each data key is stored wrapped by the
 * master key, which never enters the database (see `secretsKeyLocation`; a key file is created
 * with mode 0600 on first use). Rotation adds a term: new writes use it, older values stay
 * readable under their own term, so rotation needs no downtime and no rewrite. Each sealed value is
 * bound to where it is stored (the additional data), so a value copied into another row fails to open.
 */
export class Barrier {
  /** The master key from the environment or the key file (created, 0600, when missing). */
  static fromEnvironment(dataDir: string | undefined, env: NodeJS.ProcessEnv = process.env, keyFile?: string): Barrier {
    const location = secretsKeyLocation(dataDir, env, keyFile);
    if ('file' in location) {
      try {
        writeFileSync(location.file, masterKeyText(randomBytes(32)), { mode: 0o600, flag: 'wx' });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
    }
    return new Barrier(readMasterKey(location, env)!);
  }

  private readonly keys = new Map<number, KeyObject>();
  private active?: { term: number; checkedAt: number };

  private readonly masterKey: KeyObject;

  constructor(masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error('the secrets master key must be 32 bytes');
    this.masterKey = createSecretKey(masterKey);
  }

  /** Seals a value; `where` names the row it is stored in (table and key). */
  async seal(db: Db, plaintext: string, where: string): Promise<string> {
    const term = await this.activeTerm(db);
    const key = await this.key(db, term);
    return `${PREFIX}:${term}:${encrypt(key, Buffer.from(plaintext, 'utf8'), where).toString('base64')}`;
  }

  /** Opens a sealed value; throws when it was not sealed for `where` or was tampered with. */
  async open(db: Db, sealed: string, where: string): Promise<string> {
    const [prefix, termText, body] = sealed.split(':');
    const term = Number(termText);
    if (prefix !== PREFIX || !Number.isInteger(term) || !body) throw new Error(`sealed value of ${where} is malformed`);
    return decrypt(await this.key(db, term), Buffer.from(body, 'base64'), where).toString('utf8');
  }

  async sealJson(db: Db, value: unknown, where: string): Promise<string> {
    return this.seal(db, JSON.stringify(value), where);
  }

  async openJson<T>(db: Db, sealed: string, where: string): Promise<T> {
    return JSON.parse(await this.open(db, sealed, where)) as T;
  }

  /** Seals into compact bytes (batch tokens carry their entry this way). */
  async sealCompact(db: Db, plaintext: Buffer, where: string): Promise<Buffer> {
    const term = await this.activeTerm(db);
    const head = Buffer.alloc(4);
    head.writeUInt32BE(term);
    return Buffer.concat([head, encrypt(await this.key(db, term), plaintext, where)]);
  }

  /** Opens what sealCompact sealed; undefined when it does not open. */
  async openCompact(db: Db, sealed: Buffer, where: string): Promise<Buffer | undefined> {
    if (sealed.length < 4 + IV_BYTES + TAG_BYTES) return undefined;
    try {
      return decrypt(await this.key(db, sealed.readUInt32BE(0)), sealed.subarray(4), where);
    } catch {
      return undefined;
    }
  }

  /** Adds a keyring term with a fresh data key; returns the new term. */
  async rotate(db: Db, now: number): Promise<number> {
    const term = (await this.newestTerm(db)) + 1;
    await this.insertTerm(db, term, now);
    // Not cached here: should the transaction roll back, no process may hold this key as term N.
    this.active = undefined;
    return term;
  }

  /** The newest term and when it was installed. */
  async status(db: Db): Promise<{ term: number; installTime: number }> {
    const term = await this.activeTerm(db, true);
    const row = await db.get<{ created_at: number | string }>('SELECT created_at FROM secrets_keyring WHERE term = ?', [term]);
    return { term, installTime: Number(row?.created_at ?? 0) };
  }

  /**
   * Creates the keyring on first use and checks that this master key opens it (a wrong key fails
   * here, clearly). Runs in its own transaction before the barrier seals anything.
   */
  async init(storage: Storage, now: number): Promise<void> {
    await storage.tx(async (db) => {
      if ((await this.newestTerm(db)) === 0) await this.insertTerm(db, 1, now);
    });
    await storage.tx(async (db) => this.key(db, await this.activeTerm(db, true)), { readOnly: true });
  }

  private async activeTerm(db: Db, fresh = false): Promise<number> {
    if (!fresh && this.active && Date.now() - this.active.checkedAt < TERM_REFRESH_MS) return this.active.term;
    const term = await this.newestTerm(db);
    if (term === 0) throw new Error('the keyring is not initialized');
    this.active = { term, checkedAt: Date.now() };
    return term;
  }

  private async newestTerm(db: Db): Promise<number> {
    const row = await db.get<{ term: number | string | null }>('SELECT MAX(term) AS term FROM secrets_keyring');
    return Number(row?.term ?? 0);
  }

  private async insertTerm(db: Db, term: number, now: number): Promise<void> {
    const key = randomBytes(32);
    const wrapped = encrypt(this.masterKey, key, `keyring:${term}`).toString('base64');
    // Two servers starting at once on one database: the first term wins, the other reads it.
    await db.run('INSERT INTO secrets_keyring (term, wrapped, created_at) VALUES (?, ?, ?) ON CONFLICT (term) DO NOTHING', [
      term,
      wrapped,
      now,
    ]);
  }

  private async key(db: Db, term: number): Promise<KeyObject> {
    const cached = this.keys.get(term);
    if (cached) return cached;
    const row = await db.get<{ wrapped: string }>('SELECT wrapped FROM secrets_keyring WHERE term = ?', [term]);
    if (!row) throw new Error(`keyring term ${term} is missing`);
    let key: KeyObject;
    try {
      key = createSecretKey(decrypt(this.masterKey, Buffer.from(row.wrapped, 'base64'), `keyring:${term}`));
    } catch {
      throw new Error(
        `the secrets key does not open keyring term ${term}: this database was sealed with another key (${SECRETS_KEY_ENV} or ${SECRETS_KEY_FILE})`,
      );
    }
    this.keys.set(term, key);
    return key;
  }
}

/** AES-256-GCM: iv (12) | tag (16) | ciphertext; the key is a KeyObject, imported once. */
function encrypt(key: KeyObject, plaintext: Buffer, aad: string): Buffer {
  const iv = pooledRandomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(aad, 'utf8'));
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]);
}

function decrypt(key: KeyObject, sealed: Buffer, aad: string): Buffer {
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, IV_BYTES));
  decipher.setAAD(Buffer.from(aad, 'utf8'));
  decipher.setAuthTag(sealed.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]);
}

function decodeKey(text: string, source: string): Buffer {
  const key = /^[0-9a-fA-F]{64}$/.test(text) ? Buffer.from(text, 'hex') : Buffer.from(text, 'base64');
  if (key.length !== 32) throw new Error(`${source} must hold 32 bytes, base64 or hex encoded (e.g. openssl rand -base64 32)`);
  return key;
}
