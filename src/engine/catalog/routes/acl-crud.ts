import { z } from 'zod';
import type { Db } from '../../storage';
import { requestNamespace } from '../namespaces';
import { blockingQuery, listFilter, ok } from '../query';
import { badRequest, CatalogContext, catalogRoute, CommonQuery, requirePermission } from '../route';
import { requestWrites } from '../runtime';

/**
 * The route shapes that the namespaced ACL objects (policies, roles, binding rules, auth methods,
 * tokens) share: each object's route table calls these with its own path, written out in full so
 * that grepping a path finds its route, and with its own store functions.
 */

/** The body of the public service's 404 for a missing token or policy. */
export const ACL_NOT_FOUND = 'ACL not found';

export const IdParam = z.object({ id: z.string().min(1) });
export const NameParam = z.object({ name: z.string().min(1) });

/** PUT create: an ID in the body is refused, as the public service does. */
export function aclCreateRoute<B extends { ID?: string }>(
  path: string,
  body: z.ZodType<B>,
  noun: string,
  write: (ctx: CatalogContext, query: CommonQuery, body: B) => Promise<unknown>,
) {
  return catalogRoute({
    method: 'PUT',
    path,
    query: CommonQuery,
    body,
    permission: 'acl:write',
    handler: async ({ query, body: input }, ctx) => {
      if (input.ID) throw badRequest(`Cannot specify the ID when creating a new ${noun}`);
      return write(ctx, query, input);
    },
  });
}

/** PUT update by id: an ID in the body other than the URL's is refused (`<Label> ID in URL and payload do not match`). */
export function aclUpdateRoute<B extends { ID?: string }>(
  path: string,
  body: z.ZodType<B>,
  label: string,
  write: (ctx: CatalogContext, query: CommonQuery, body: B, id: string) => Promise<unknown>,
) {
  return catalogRoute({
    method: 'PUT',
    path,
    params: IdParam,
    query: CommonQuery,
    body,
    permission: 'acl:write',
    handler: async ({ params, query, body: input }, ctx) => {
      if (input.ID && input.ID !== params.id) throw badRequest(`${label} ID in URL and payload do not match`);
      return write(ctx, query, input, params.id);
    },
  });
}

/**
 * GET one object: acl:read in the request's namespace, answered as a blocking query on the acl
 * index. `read` answers the rendered object, or undefined for a 404 (the public service answers
 * tokens and policies with "ACL not found", roles, auth methods and binding rules without a body).
 */
export function aclReadRoute<P>(
  path: string,
  params: z.ZodType<P>,
  read: (db: Db, params: P, ns: string, ctx: CatalogContext) => Promise<unknown>,
  notFoundBody?: string,
) {
  return catalogRoute({
    method: 'GET',
    path,
    params,
    query: CommonQuery,
    permission: 'acl:read',
    transaction: 'read',
    handler: async ({ params: input, query }, ctx) => {
      const ns = requestNamespace(ctx, query);
      requirePermission(ctx, 'acl', 'read', undefined, ns);
      return blockingQuery(ctx, query, ['acl'], async (db) => {
        const found = await read(db, input, ns, ctx);
        return found === undefined ? { status: 404, body: notFoundBody } : ok(found);
      });
    },
  });
}

/** DELETE: acl:write in the request's namespace; `remove` deletes and answers the response body. */
export function aclDeleteRoute<P>(path: string, params: z.ZodType<P>, remove: (ctx: CatalogContext, params: P, ns: string) => Promise<boolean>) {
  return catalogRoute({
    method: 'DELETE',
    path,
    params,
    query: CommonQuery,
    permission: 'acl:write',
    handler: async ({ params: input, query }, ctx) => {
      const ns = requestNamespace(ctx, query);
      requirePermission(ctx, 'acl', 'write', undefined, ns);
      return remove(ctx, input, ns);
    },
  });
}

/** Deletes the row `id` of an ACL table, moving the acl index first (blocking queries wake). */
export async function deleteAclRow(ctx: CatalogContext, table: string, id: string): Promise<void> {
  await requestWrites(ctx).next('acl');
  await ctx.db.run(`DELETE FROM ${table} WHERE id = ?`, [id]);
}

/** Which namespaces a list answers: one (`ns`), or all that the caller may read (`ns=*`). */
export interface ListScope {
  /** The namespace, or '*' for all. */
  readonly ns: string;
  readonly all: boolean;
  /** Whether a row of that namespace is listed. */
  visible(rowNs: string): boolean;
}

/**
 * GET a list: `?ns=*` lists every namespace the caller may read, otherwise acl:read in the request's
 * namespace is needed. Answered as a blocking query on the acl index.
 */
export function aclListRoute<Q extends CommonQuery>(
  path: string,
  query: z.ZodType<Q>,
  list: (db: Db, query: Q, scope: ListScope, ctx: CatalogContext) => Promise<unknown[]>,
) {
  return catalogRoute({
    method: 'GET',
    path,
    query,
    permission: 'acl:read',
    transaction: 'read',
    handler: async ({ query: input }, ctx) => {
      const all = input.ns === '*';
      const ns = all ? '*' : requestNamespace(ctx, input);
      if (!all) requirePermission(ctx, 'acl', 'read', undefined, ns);
      const authz = ctx.actor!.authz;
      const scope: ListScope = { ns, all, visible: (rowNs) => !all || authz.allowed('acl', 'read', undefined, rowNs) };
      const filter = listFilter(input.filter);
      return blockingQuery(ctx, input, ['acl'], async (db) => ok(filter(await list(db, input, scope, ctx))));
    },
  });
}

/** The rows of an ACL table in a list's scope (not yet filtered by `visible`). */
export function rowsInScope<T>(db: Db, table: string, scope: ListScope, orderBy: string): Promise<T[]> {
  return scope.all
    ? db.all<T>(`SELECT * FROM ${table} ORDER BY ${orderBy}`)
    : db.all<T>(`SELECT * FROM ${table} WHERE ns = ? ORDER BY ${orderBy}`, [scope.ns]);
}
