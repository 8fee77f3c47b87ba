import type { Clock } from './clock';
import { Db } from './storage';

/** Server-wide settings: one row each in the `settings` table, shared by the servers of a database. */
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

/**
 * A setting that requests consult often, kept in memory and read again once `maxAgeMs` passed:
 * another server of the same database that changes it is seen within that time.
 */
export class CachedSetting {
  private value: string | undefined;
  private readAt = -Infinity;

  constructor(
    private readonly name: string,
    private readonly maxAgeMs: number,
    private readonly clock: Clock,
  ) {}

  /** The value, read in `db` when the kept one is older than `maxAgeMs`. */
  async get(db: Db): Promise<string | undefined> {
    const kept = this.kept();
    if (kept) return kept.value;
    this.remember(await getSetting(db, this.name));
    return this.value;
  }

  /** The value kept, unless it is older than `maxAgeMs`. */
  kept(): { readonly value: string | undefined } | undefined {
    // A clock set back counts as expired, not as young.
    const age = this.clock.now() - this.readAt;
    return age >= 0 && age < this.maxAgeMs ? { value: this.value } : undefined;
  }

  /** The value as read (or written) in a transaction of this server just now. */
  remember(value: string | undefined): void {
    this.value = value;
    this.readAt = this.clock.now();
  }
}
