import { randomBytes, randomUUID } from 'node:crypto';
import type { Barrier } from './barrier';
import { bumpConfigStamp, configStamp } from './stamp';
import { MountEntry } from './types';
import type { Db } from '../../storage';

/** Mounts that always exist and cannot be disabled or moved. */
export const BUILTIN_MOUNTS: ReadonlyArray<Pick<MountEntry, 'path' | 'kind' | 'type' | 'description'>> = [
  { path: 'sys/', kind: 'secret', type: 'system', description: 'system endpoints used for control, policy and debugging' },
  { path: 'auth/token/', kind: 'auth', type: 'token', description: 'token based credentials' },
  { path: 'identity/', kind: 'secret', type: 'identity', description: 'identity store' },
  { path: 'cubbyhole/', kind: 'secret', type: 'cubbyhole', description: 'per-token private secret storage' },
];

/** As Vault, a segment may start with "-" or "_" (`vault secrets enable -path=-x`), never with "." (no `..`). */
const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/;

/** Normalizes a mount path given by a user (`pki`, `/my/pki/`) to `my/pki/`; throws a clear message. */
export function normalizeMountPath(path: string): string {
  const trimmed = path.replace(/^\/+|\/+$/g, '');
  const segments = trimmed.split('/');
  if (trimmed === '' || segments.some((s) => !SEGMENT.test(s))) {
    throw new Error(`mount path "${path}" is invalid: use segments of letters, digits, ".", "_" and "-" separated by "/", none starting with "."`);
  }
  if (trimmed.length > 200) throw new Error(`mount path "${path}" is longer than 200 characters`);
  return `${trimmed}/`;
}

/**
 * The mount table (sealed rows). Opened once per version of the secrets configuration (see
 * stamp.ts): a request reads the change stamp, not the table, so several servers still agree.
 */
export class MountTable {
  /** Opened entries by ciphertext, so a change re-opens only the rows that changed. */
  private readonly cache = new Map<string, MountEntry>();
  /** The table as of one stamp, sorted by path. */
  private table?: { readonly stamp: string; readonly entries: readonly MountEntry[] };

  constructor(private readonly barrier: Barrier) {}

  async all(db: Db): Promise<MountEntry[]> {
    return [...(await this.current(db))];
  }

  private async current(db: Db): Promise<readonly MountEntry[]> {
    const stamp = await configStamp(db);
    if (this.table?.stamp === stamp) return this.table.entries;
    const rows = await db.all<{ path: string; sealed: string }>('SELECT path, sealed FROM secrets_mounts ORDER BY path');
    const out: MountEntry[] = [];
    const seen = new Set<string>();
    for (const row of rows) {
      seen.add(row.sealed);
      let entry = this.cache.get(row.sealed);
      if (!entry) {
        entry = await this.barrier.openJson<MountEntry>(db, row.sealed, `mount:${row.path}`);
        this.cache.set(row.sealed, entry);
      }
      out.push(entry);
    }
    for (const key of this.cache.keys()) if (!seen.has(key)) this.cache.delete(key);
    this.table = { stamp, entries: out };
    return out;
  }

  async get(db: Db, path: string): Promise<MountEntry | undefined> {
    return (await this.current(db)).find((m) => m.path === path);
  }

  /** The mount that serves a request path (longest prefix), or undefined. */
  async resolve(db: Db, requestPath: string): Promise<MountEntry | undefined> {
    return longestPrefix(await this.current(db), requestPath);
  }

  /**
   * `resolve` on the table as last read, without asking storage: possibly stale, so only for
   * guesses that a transaction then checks (which kind of transaction a request should open).
   */
  resolveLastRead(requestPath: string): MountEntry | undefined {
    return this.table && longestPrefix(this.table.entries, requestPath);
  }

  /** A new mount entry with fresh ids. */
  newEntry(fields: Pick<MountEntry, 'path' | 'kind' | 'type'> & Partial<MountEntry>, now: number): MountEntry {
    return {
      description: '',
      defaultLeaseTtl: 0,
      maxLeaseTtl: 0,
      options: {},
      local: false,
      sealWrap: false,
      ...fields,
      accessor: `${fields.kind === 'auth' ? `auth_${fields.type}` : fields.type}_${randomBytes(4).toString('hex')}`,
      uuid: randomUUID(),
      createdAt: now,
    };
  }

  async put(db: Db, entry: MountEntry): Promise<void> {
    const sealed = await this.barrier.sealJson(db, entry, `mount:${entry.path}`);
    await db.run('INSERT INTO secrets_mounts (path, sealed) VALUES (?, ?) ON CONFLICT (path) DO UPDATE SET sealed = excluded.sealed', [
      entry.path,
      sealed,
    ]);
    await bumpConfigStamp(db);
  }

  async delete(db: Db, path: string): Promise<void> {
    await db.run('DELETE FROM secrets_mounts WHERE path = ?', [path]);
    await bumpConfigStamp(db);
  }
}

function longestPrefix(mounts: readonly MountEntry[], requestPath: string): MountEntry | undefined {
  let best: MountEntry | undefined;
  for (const m of mounts) {
    if ((requestPath === m.path.slice(0, -1) || requestPath.startsWith(m.path)) && (!best || m.path.length > best.path.length)) best = m;
  }
  return best;
}
