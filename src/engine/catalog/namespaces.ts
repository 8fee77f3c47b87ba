import type { Db } from '../storage';
import type { Writes } from './index-state';
import { badRequest, CatalogContext } from './route';
import { invalidateSessions, SessionRow } from './sessions';

export interface NamespaceRow {
  name: string;
  description: string;
  policy_defaults: string;
  role_defaults: string;
  meta: string;
  deleted_at: number | null;
  create_index: number;
  modify_index: number;
}

export async function getNamespace(db: Db, name: string): Promise<NamespaceRow | undefined> {
  return db.get<NamespaceRow>('SELECT * FROM catalog_namespaces WHERE name = ?', [name]);
}

/** A namespace that writes may go to: it exists and is not being deleted. */
export async function requireLiveNamespace(db: Db, name: string): Promise<void> {
  // The schema creates the default namespace and it cannot be deleted: most writes need no read.
  if (name === 'default') return;
  const ns = await getNamespace(db, name);
  if (!ns) throw badRequest(`Namespace ${JSON.stringify(name)} does not exist`);
  if (ns.deleted_at !== null) throw badRequest(`Namespace ${JSON.stringify(name)} is marked for deletion`);
}

/**
 * The namespace of a request, in the spec's order: the body's Namespace field, the `ns` query
 * parameter, the X-Catalog-Namespace (or X-Consul-Namespace) header, the token's namespace, `default`.
 */
export function requestNamespace(ctx: CatalogContext, query: { ns?: string }, bodyNamespace?: string): string {
  const header = ctx.request.headers['x-catalog-namespace'] ?? ctx.request.headers['x-consul-namespace'];
  const fromHeader = Array.isArray(header) ? header[0] : header;
  return bodyNamespace || query.ns || fromHeader || ctx.actor?.ns || 'default';
}

/** Namespaces marked for deletion, oldest first (what the removal job works through). */
export async function markedNamespaces(db: Db): Promise<string[]> {
  const rows = await db.all<{ name: string }>('SELECT name FROM catalog_namespaces WHERE deleted_at IS NOT NULL ORDER BY deleted_at LIMIT 10');
  return rows.map((r) => r.name);
}

/**
 * Removes a namespace marked for deletion with everything in it, in one transaction: a crash
 * leaves it whole and marked, and the next round (on any server) does it again, once.
 */
export async function removeNamespace(writes: Writes, name: string, now: number): Promise<void> {
  const db = writes.db;
  const row = await getNamespace(db, name);
  if (!row || row.deleted_at === null) return;
  await writes.next('namespaces', 'acl', 'sessions', 'kvs', 'nodes');
  await invalidateSessions(writes, await db.all<SessionRow>('SELECT * FROM catalog_sessions WHERE ns = ?', [name]), now);
  const tables = [
    'catalog_checks', 'catalog_services', 'catalog_kv', 'catalog_kv_lock_delays', 'catalog_acl_binding_rules', 'catalog_acl_auth_methods',
    'catalog_acl_tokens', 'catalog_acl_roles', 'catalog_acl_policies',
  ];
  for (const table of tables) {
    await db.run(`DELETE FROM ${table} WHERE ns = ?`, [name]);
  }
  await db.run('DELETE FROM catalog_namespaces WHERE name = ?', [name]);
}

/** The namespace a read of the catalog looks in: the request's, or undefined for every one (`?ns=*`). */
export function readNamespace(ctx: CatalogContext, query: { ns?: string }): string | undefined {
  const ns = requestNamespace(ctx, query);
  return ns === '*' ? undefined : ns;
}
