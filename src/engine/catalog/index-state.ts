import type { Db } from '../storage';

/** Groups of rows whose index a blocking query compares (the public service's memdb tables). */
export const TABLES = ['acl', 'namespaces', 'nodes', 'sessions', 'kvs'] as const;
export type Table = (typeof TABLES)[number];

/**
 * The PostgreSQL channel on which a committed write names each table whose index it bumped (a
 * trigger on catalog_tables, migration 302): how servers on one database wake each other's waiters.
 */
export const TABLES_CHANNEL = 'hangar_catalog_tables';

/**
 * The storage lane (TxOptions.lane) of catalog write transactions: each takes the index row's lock
 * (Writes.lock, Writes.next) and holds it to its commit, so they run one after another anyway.
 */
export const CATALOG_WRITES = 'catalog';

/**
 * The writes of one transaction: the first write takes the next catalog index (one per
 * transaction, like one Raft entry), every write stamps it on the tables it touches.
 * `touched` tells the blocking-query notifier which waiters to look at once the transaction commits.
 */
export class Writes {
  private index?: number;
  private readonly stamped = new Set<Table>();

  /** `serialized`: the storage runs one write transaction at a time (SQLite), so lock() has nothing to wait for. */
  constructor(
    readonly db: Db,
    readonly touched: Set<Table> = new Set(),
    private readonly serialized = false,
  ) {}

  /**
   * Waits for every other catalog write to commit before this transaction reads what it will change
   * (the index row's lock, taken without moving the index). Under PostgreSQL's READ COMMITTED two
   * registers of one node would otherwise both find it missing and both insert it; SQLite's
   * BEGIN IMMEDIATE serializes writers already.
   */
  async lock(): Promise<void> {
    if (this.index === undefined && !this.serialized) await this.db.run("UPDATE catalog_meta SET value = value WHERE name = 'index'");
  }

  async next(...tables: Table[]): Promise<number> {
    if (this.index === undefined) {
      const row = await this.db.get<{ value: number }>("UPDATE catalog_meta SET value = value + 1 WHERE name = 'index' RETURNING value");
      this.index = Number(row!.value);
    }
    for (const table of tables) {
      if (this.stamped.has(table)) continue;
      await this.db.run('UPDATE catalog_tables SET idx = ? WHERE name = ?', [this.index, table]);
      this.stamped.add(table);
      this.touched.add(table);
    }
    return this.index;
  }
}

/** The highest index of some tables: what a blocking query on them answers in its index header. */
export async function tablesIndex(db: Db, tables: readonly Table[]): Promise<number> {
  const rows = await db.all<{ idx: number }>(
    `SELECT idx FROM catalog_tables WHERE name IN (${tables.map(() => '?').join(', ')})`,
    tables,
  );
  return Math.max(1, ...rows.map((r) => Number(r.idx)));
}

/** All tables' indexes (the poller compares them to notice writes of other processes). */
export async function allTableIndexes(db: Db): Promise<Map<Table, number>> {
  const rows = await db.all<{ name: Table; idx: number }>('SELECT name, idx FROM catalog_tables');
  return new Map(rows.map((r) => [r.name, Number(r.idx)]));
}
