import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gunzipSync } from 'node:zlib';
import type { Header } from 'tar-stream';
import { BlobStore } from '../blobs/blob-store';
import { masterKeyFingerprint, readMasterKey, secretsKeyLocation, SECRETS_KEY_ENV } from '../secrets/core/barrier';
import { Db, openStorage, SqlValue, StorageConfig } from '../storage';
import { openRawConnection } from './connection';
import { BLOBS_PREFIX, decodeRow, KEY_ENTRY, Manifest, MANIFEST_ENTRY, ManifestTable, parseManifest, TABLES_PREFIX } from './format';
import { listTables, quoted, schemaVersion } from './tables';
import { MIGRATIONS } from '../storage/migrations';

/** Parameters of one multi-row INSERT, at most (well under SQLite's and PostgreSQL's limits). */
const INSERT_PARAMS = 2000;

export interface RestoreOptions {
  readonly storage: StorageConfig;
  readonly dataDir: string;
  readonly secretsKeyFile?: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** Refused before anything changed: the message says why and what to do. */
export class RestoreRefused extends Error {}

/** A backup whose every entry matched its manifest, and the master key when it holds it. */
export interface VerifiedBackup {
  readonly manifest: Manifest;
  readonly key?: Buffer;
}

/**
 * Reads a backup once through and checks it: every entry's size and SHA-256 against the manifest,
 * no entry missing or extra. Nothing is written.
 */
export async function verifyBackup(file: string): Promise<VerifiedBackup> {
  const seen = new Map<string, { size: number; sha256: string }>();
  let manifestText: string | undefined;
  let keyText: string | undefined;
  await readEntries(file, async (header, stream) => {
    const hash = createHash('sha256');
    const keep = header.name === MANIFEST_ENTRY || header.name === KEY_ENTRY;
    const kept: Buffer[] = [];
    let size = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      hash.update(chunk);
      size += chunk.length;
      if (keep) kept.push(chunk);
    }
    if (seen.has(header.name)) throw new RestoreRefused(`the backup is damaged: it holds ${header.name} twice`);
    seen.set(header.name, { size, sha256: hash.digest('hex') });
    if (header.name === MANIFEST_ENTRY) manifestText = Buffer.concat(kept).toString('utf8');
    if (header.name === KEY_ENTRY) keyText = Buffer.concat(kept).toString('utf8');
  });
  if (manifestText === undefined) throw new RestoreRefused(`the backup is damaged or incomplete: it has no ${MANIFEST_ENTRY}`);
  let manifest: Manifest;
  try {
    manifest = parseManifest(manifestText);
  } catch (err) {
    throw new RestoreRefused((err as Error).message);
  }
  for (const listed of manifest.files) {
    const found = seen.get(listed.path);
    if (!found) throw new RestoreRefused(`the backup is damaged or incomplete: ${listed.path} is missing`);
    if (found.size !== listed.size || found.sha256 !== listed.sha256) {
      throw new RestoreRefused(`the backup is damaged: the SHA-256 of ${listed.path} is ${found.sha256}, its manifest says ${listed.sha256}`);
    }
  }
  const listed = new Set(manifest.files.map((f) => f.path));
  const extra = [...seen.keys()].find((name) => name !== MANIFEST_ENTRY && !listed.has(name));
  if (extra) throw new RestoreRefused(`the backup is damaged: ${extra} is not in its manifest`);
  const key = keyText === undefined ? undefined : Buffer.from(keyText.trim(), 'base64');
  if (key && (key.length !== 32 || masterKeyFingerprint(key) !== manifest.secretsKey.fingerprint)) {
    throw new RestoreRefused(`the backup is damaged: its ${KEY_ENTRY} does not match the fingerprint in its manifest`);
  }
  return { manifest, key };
}

/**
 * Restores a backup into an empty target (a data directory, and its PostgreSQL database when the
 * storage is PostgreSQL). Checks first, changing nothing when one fails: the backup's checksums
 * (verifyBackup), its schema (not newer than this Hangar's), the secrets key (the backup's own, or
 * the one the target has must be the backup's), and that the target is empty. Then the schema is
 * brought to the backup's migration, every row inserted in one transaction (tables in dependency
 * order) with the box files moved into place at its end, and the schema migrated to the current one.
 */
export async function restoreBackup(file: string, options: RestoreOptions): Promise<Manifest> {
  const { manifest, key } = await verifyBackup(file);
  const newest = MIGRATIONS[MIGRATIONS.length - 1].version;
  if (manifest.schemaVersion > newest) {
    throw new RestoreRefused(
      `the backup was made by a newer Hangar (${manifest.hangarVersion}, schema migration ${manifest.schemaVersion}; this one knows up to ${newest}): restore it with that version or a later one`,
    );
  }
  const env = options.env ?? process.env;
  const location = secretsKeyLocation(options.dataDir, env, options.secretsKeyFile);
  const present = readMasterKey(location, env);
  const wanted = manifest.secretsKey.fingerprint;
  const where = 'env' in location ? `${SECRETS_KEY_ENV}` : location.file;
  if (wanted && present && masterKeyFingerprint(present) !== wanted) {
    throw new RestoreRefused(
      `the secrets key in ${where} is not the one the backup was sealed with (fingerprint ${wanted}): use that key, or move this one away${key ? ' to restore the key the backup holds' : ''}`,
    );
  }
  if (wanted && !present && !key) {
    throw new RestoreRefused(
      `the backup's secrets are sealed with the key of fingerprint ${wanted}, which it does not hold: put that key in ${where} (or set ${SECRETS_KEY_ENV}), then restore again`,
    );
  }
  await checkEmpty(options, manifest);

  const store = BlobStore.forDataDir(options.dataDir);
  const staging = join(store.root, 'tmp', `restore-${randomUUID()}`);
  const placed: string[] = [];
  let wroteKey = false;
  let storage = await openStorage(options.storage, { upTo: manifest.schemaVersion });
  try {
    await storage.tx(async (db) => {
      const target = new Map((await listTables(db.all.bind(db), storage.dialect)).map((t) => [t.name, t]));
      const tables = new Map(manifest.tables.map((t) => [t.name, t]));
      for (const name of tables.keys()) {
        if (!target.has(name)) throw new Error(`the backup's table ${name} is not in schema migration ${manifest.schemaVersion} here`);
      }
      // Rows the migrations seed (the catalog's index, ...) give way to the backup's.
      for (const name of [...target.keys()].reverse()) await db.run(`DELETE FROM ${quoted(name)}`);
      await mkdir(staging, { recursive: true, mode: 0o700 });
      const listed = new Map(manifest.files.map((f) => [f.path, f]));
      await readEntries(file, async (header, stream) => {
        const expected = listed.get(header.name);
        if (header.name.startsWith(TABLES_PREFIX)) {
          const data = await readAll(stream);
          checkAgain(header.name, data, expected?.sha256);
          const table = tables.get(header.name.slice(TABLES_PREFIX.length).split('/')[0]);
          if (!table) throw new Error(`${header.name} belongs to no table of the manifest`);
          await insertRows(db, table, target.get(table.name)!.columns, gunzipSync(data).toString('utf8'));
        } else if (header.name.startsWith(BLOBS_PREFIX)) {
          const id = header.name.slice(BLOBS_PREFIX.length);
          store.path(id); // checks the id
          const hash = createHash('sha256');
          await pipeline(stream, async function* (source: AsyncIterable<Buffer>) {
            for await (const chunk of source) {
              hash.update(chunk);
              yield chunk;
            }
          }, createWriteStream(join(staging, id), { mode: 0o600, flush: true }));
          if (hash.digest('hex') !== expected?.sha256) throw new RestoreRefused(`the backup changed while it was restored: ${header.name}`);
        } else {
          stream.resume();
        }
      });
      for (const id of await readdir(staging)) {
        const path = store.path(id);
        await mkdir(join(path, '..'), { recursive: true, mode: 0o700 });
        await rename(join(staging, id), path);
        placed.push(path);
      }
      if (key && !present && 'file' in location) {
        await writeFile(location.file, `${key.toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
        wroteKey = true;
      }
    });
  } catch (err) {
    for (const path of placed) await rm(path, { force: true });
    if (wroteKey && 'file' in location) await rm(location.file, { force: true });
    throw err;
  } finally {
    await rm(staging, { recursive: true, force: true });
    await storage.close();
  }
  // The migrations after the backup's, as an upgrade would run them.
  storage = await openStorage(options.storage);
  await storage.close();
  return manifest;
}

/**
 * An empty target: no settings (a server that ever started there wrote its root token's hash) and no
 * box file. A schema without rows, as a failed restore leaves it, is empty, unless it is newer
 * than the backup's.
 */
async function checkEmpty(options: RestoreOptions, manifest: Manifest): Promise<void> {
  const target = options.storage.kind === 'sqlite' ? `the data directory ${options.dataDir}` : 'the PostgreSQL database';
  const raw = await openRawConnection(options.storage, options.dataDir);
  if (raw) {
    try {
      const all = raw.all.bind(raw);
      const version = await schemaVersion(all, raw.dialect);
      if (version > 0) {
        const [row] = await all<{ n: number | string }>('SELECT COUNT(*) AS n FROM settings');
        if (Number(row.n) > 0) throw new RestoreRefused(`${target} is not empty: restore into a new one (nothing was changed)`);
        if (version > manifest.schemaVersion) {
          throw new RestoreRefused(
            `${target} already has a schema newer than the backup's (migration ${version} > ${manifest.schemaVersion}): restore into a new one`,
          );
        }
      }
    } finally {
      await raw.close();
    }
  }
  const blobs = await readdir(BlobStore.forDataDir(options.dataDir).root).catch(() => [] as string[]);
  if (blobs.some((name) => name !== 'tmp')) {
    throw new RestoreRefused(`${target} is not empty: ${join(options.dataDir, 'blobs')} holds box files (nothing was changed)`);
  }
}

/** Inserts a chunk's rows, several per statement; columns this storage computes itself are left to it. */
async function insertRows(db: Db, table: ManifestTable, targetColumns: readonly string[], text: string): Promise<void> {
  const keep = table.columns.map((c) => targetColumns.includes(c));
  const columns = table.columns.filter((_, i) => keep[i]);
  const perStatement = Math.max(1, Math.floor(INSERT_PARAMS / columns.length));
  const head = `INSERT INTO ${quoted(table.name)} (${columns.map(quoted).join(', ')}) VALUES `;
  const tuple = `(${columns.map(() => '?').join(', ')})`;
  let params: SqlValue[] = [];
  let count = 0;
  const flush = async () => {
    if (count === 0) return;
    await db.run(head + Array(count).fill(tuple).join(', '), params);
    params = [];
    count = 0;
  };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const values = decodeRow(line);
    if (values.length !== table.columns.length) throw new Error(`a row of ${table.name} has ${values.length} values for ${table.columns.length} columns`);
    for (let i = 0; i < values.length; i++) if (keep[i]) params.push(values[i]);
    if (++count >= perStatement) await flush();
  }
  await flush();
}

function checkAgain(path: string, data: Buffer, sha256: string | undefined): void {
  if (createHash('sha256').update(data).digest('hex') !== sha256) throw new RestoreRefused(`the backup changed while it was restored: ${path}`);
}

async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/** Runs `onEntry` for each entry of a tar file, one after the other; each must consume its stream. */
async function readEntries(file: string, onEntry: (header: Header, stream: Readable) => Promise<void>): Promise<void> {
  const tar = require('tar-stream') as typeof import('tar-stream');
  const extract = tar.extract();
  const source = createReadStream(file);
  source.on('error', (err) => extract.destroy(err));
  source.pipe(extract as unknown as NodeJS.WritableStream);
  try {
    for await (const entry of extract) await onEntry(entry.header, entry as unknown as Readable);
  } catch (err) {
    source.destroy();
    if (err instanceof RestoreRefused) throw err;
    const message = (err as Error).message ?? String(err);
    // tar-stream's own complaints mean a file that is no tar, or one cut short.
    if (/header|tar|Unexpected end/i.test(message) && !(err as NodeJS.ErrnoException).code) {
      throw new RestoreRefused(`${file} is not a complete Hangar backup (${message})`);
    }
    throw err;
  }
}
