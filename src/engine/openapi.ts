import { OpenApiGeneratorV3, OpenAPIRegistry, RouteConfig } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { ApiDefinition, ApiName } from './http/api';
import type { Method, Route } from './http/routes';
import type { EngineRoute, EngineType, MountEntry } from './secrets/core/types';
import { VERSION } from './version';

/**
 * OpenAPI 3 documents of the three APIs, generated from their route tables (zod schemas through
 * zod-to-openapi), never written by hand. Registry and catalog: every route of the table. Secrets:
 * every route of every engine type under a generic mount path (`/{pki_mount_path}/issue/{name}`),
 * as the public service's `generic_mount_paths=true` shows them.
 */

/** One operation before it becomes OpenAPI: where its input lives and who may call it. */
interface Operation {
  readonly method: 'get' | 'post' | 'put' | 'patch' | 'delete' | 'head';
  /** OpenAPI path syntax: `/api/v1/box/{username}/{name}`. */
  readonly path: string;
  readonly params?: z.ZodType;
  readonly query?: z.ZodType;
  readonly body?: z.ZodType;
  readonly permission: string;
  readonly extensions?: Record<string, unknown>;
}

const TITLES: Record<ApiName, string> = {
  registry: 'Hangar box registry API',
  secrets: 'Hangar secrets API',
  catalog: 'Hangar service catalog API',
};

const documents = new Map<ApiName, object>();

/** The document of one API (built once per process: route tables do not change at run time). */
export function openApiDocument(name: ApiName): object {
  let doc = documents.get(name);
  if (!doc) {
    doc = build(name, name === 'secrets' ? secretsOperations() : tableOperations(apiDefinition(name)));
    documents.set(name, doc);
  }
  return doc;
}

function apiDefinition(name: 'registry' | 'catalog'): ApiDefinition<unknown, unknown> {
  // Loaded here: the engine's route tables import this module's callers.
  if (name === 'registry') return (require('./registry/api') as typeof import('./registry/api')).registryApi as never;
  return (require('./catalog/api') as typeof import('./catalog/api')).catalogApi as never;
}

/** Fastify path syntax to OpenAPI's: `:name` and the wildcard `*` become parameters. */
export function openApiPath(path: string): string {
  return path.replace(/:(\w+)/g, '{$1}').replace(/\*$/, '{path}');
}

function tableOperations(api: ApiDefinition<unknown, unknown>): Operation[] {
  const ops: Operation[] = [];
  for (const r of api.routes as readonly Route<unknown, unknown>[]) {
    const methods = (Array.isArray(r.method) ? r.method : [r.method]) as Method[];
    for (const method of methods) {
      ops.push({
        method: method.toLowerCase() as Operation['method'],
        path: openApiPath(r.path),
        params: r.params,
        query: r.query,
        body: r.stream || method === 'GET' || method === 'HEAD' ? undefined : r.body,
        permission: String(r.permission),
        ...(r.stream ? { extensions: { 'x-hangar-stream': true } } : {}),
      });
    }
  }
  return ops;
}

/** Where an engine type's routes live, as the generic mount path the public service shows. */
export function mountPrefix(type: EngineType, variant: string): string {
  if (type.type === 'system') return '/sys';
  if (type.type === 'token') return '/auth/token';
  if (type.type === 'identity' || type.type === 'cubbyhole') return `/${type.type}`;
  const param = `{${variant.replace(/-/g, '_')}_mount_path}`;
  return type.kind === 'auth' ? `/auth/${param}` : `/${param}`;
}

/** A type's route sets: its routes, and those of a mount option that changes them (KV version 2). */
function variants(type: EngineType): Array<[string, readonly EngineRoute[]]> {
  const sets: Array<[string, readonly EngineRoute[]]> = [[type.type, type.routes]];
  const v2 = type.routesFor?.({ options: { version: '2' } } as unknown as MountEntry);
  if (v2 && v2 !== type.routes) sets.push([variantOf(type, v2), v2]);
  return sets;
}

/** The name of a route set in generic mount paths: the type's, or `<type>_v2` for the routes a mount option gives. */
export function variantOf(type: EngineType, routes: readonly EngineRoute[]): string {
  return routes === type.routes ? type.type : `${type.type}_v2`;
}

/** An engine route's OpenAPI path under its mount's prefix (`/{pki_mount_path}/issue/{name}`). */
export function engineRoutePath(prefix: string, route: EngineRoute): string {
  return `${prefix}/${route.pattern}`.replace(/\/$/, '').replace(/[:*](\w+)/g, '{$1}');
}

function secretsOperations(): Operation[] {
  const { ENGINE_TYPES } = require('./secrets/engines') as typeof import('./secrets/engines');
  const ops: Operation[] = [];
  for (const type of ENGINE_TYPES) {
    for (const [variant, routes] of variants(type)) {
      const prefix = mountPrefix(type, variant);
      for (const r of routes) {
        const path = engineRoutePath(prefix, r);
        const extensions = {
          ...(r.unauthenticated ? { 'x-vault-unauthenticated': true } : {}),
          ...(r.sudo ? { 'x-vault-sudo': true } : {}),
          ...(r.create || r.exists ? { 'x-vault-create-supported': true } : {}),
        };
        const permission = r.unauthenticated ? 'none' : `a policy granting the operation on ${path}${r.sudo ? ' and sudo' : ''}`;
        const base = { path, permission, extensions };
        if (r.read) ops.push({ ...base, method: 'get', query: r.query });
        if (r.list && !r.read) ops.push({ ...base, method: 'get', query: listQuery(r.query) });
        if (r.write || r.create || r.update) ops.push({ ...base, method: 'post', body: r.body });
        if (r.delete) ops.push({ ...base, method: 'delete', query: r.query });
      }
    }
  }
  return ops;
}

/** A list is a GET with `list=true` (or the LIST method). */
function listQuery(query: z.ZodType | undefined): z.ZodType {
  const list = z.object({ list: z.literal('true') });
  return query instanceof z.ZodObject ? query.extend(list.shape) : list;
}

function build(name: ApiName, ops: readonly Operation[]): object {
  const registry = new OpenAPIRegistry();
  const seen = new Set<string>();
  for (const op of ops) {
    const key = `${op.method} ${op.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const full = routeConfig(op, true);
    // A schema the generator cannot express (a custom check, a transform to a class) leaves that
    // operation's input undocumented rather than failing the whole document.
    registry.registerPath(expressible(full) ? full : routeConfig(op, false));
  }
  const document = new OpenApiGeneratorV3(registry.definitions).generateDocument({
    openapi: '3.0.3',
    info: { title: TITLES[name], version: VERSION, description: `Generated from Hangar's route tables (${name}).` },
    servers: [{ url: name === 'secrets' ? '/v1' : '/' }],
  });
  return document;
}

function routeConfig(op: Operation, withSchemas: boolean): RouteConfig {
  const pathParams = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
  // Path parameters only (a table's params schema may serve two paths), each required.
  const declared: Record<string, z.ZodType> = withSchemas && op.params instanceof z.ZodObject ? op.params.shape : {};
  const params = z.object(Object.fromEntries(pathParams.map((p) => [p, declared[p] ?? z.string()]))).required();
  const query = withSchemas && (op.query instanceof z.ZodObject || op.query instanceof z.ZodPipe) ? op.query : undefined;
  const body = withSchemas ? op.body : undefined;
  return {
    method: op.method,
    path: op.path,
    description: `Permission: ${op.permission}`,
    ...op.extensions,
    request: {
      ...(pathParams.length > 0 ? { params } : {}),
      ...(query ? { query: query as z.ZodObject } : {}),
      ...(body ? { body: { content: { 'application/json': { schema: body } } } } : {}),
    },
    responses: { default: { description: 'The answer, or an error in the API\'s error envelope' } },
  };
}

function expressible(route: RouteConfig): boolean {
  try {
    const one = new OpenAPIRegistry();
    one.registerPath(route);
    new OpenApiGeneratorV3(one.definitions).generateDocument({ openapi: '3.0.3', info: { title: '', version: '' } });
    return true;
  } catch {
    return false;
  }
}

/** Where each listener serves its document. */
export const OPENAPI_PATHS: Record<ApiName, string> = {
  registry: '/api/v1/internal/specs/openapi',
  secrets: '/v1/sys/internal/specs/openapi',
  catalog: '/v1/internal/specs/openapi',
};

/** docs/openapi/README.md: every operation of the three documents, with its permission. */
export function openApiSummary(): string {
  const lines = [
    '# HTTP APIs (generated)',
    '',
    'Generated by `npm run openapi` from the route tables; do not edit. The full OpenAPI 3 documents are',
    'beside this file and served by each listener:',
    '',
    ...(['registry', 'secrets', 'catalog'] as const).map((api) => `- ${api}: [${api}.json](${api}.json), \`GET ${OPENAPI_PATHS[api]}\``),
  ];
  for (const api of ['registry', 'secrets', 'catalog'] as const) {
    const doc = openApiDocument(api) as { paths: Record<string, Record<string, { description?: string }>> };
    lines.push('', `## ${TITLES[api]}`, '', '| method | path | permission |', '|---|---|---|');
    for (const [path, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const permission = (op.description ?? '').replace(/^Permission: /, '').replace(/\|/g, '\\|');
        lines.push(`| ${method.toUpperCase()} | \`${api === 'secrets' ? '/v1' : ''}${path}\` | ${permission} |`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}
