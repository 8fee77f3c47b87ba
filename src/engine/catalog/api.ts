import { sha256Hex } from '../crypto';
import { LOCAL_ADMIN_HEADER } from '../engine';
import type { Engine } from '../engine';
import { ApiDefinition } from '../http/api';
import { HangarError, ValidationError } from '../http/errors';
import { jsonLimitBroken } from '../http/json-body';
import { extractToken, TokenSources } from '../http/tokens';
import { secretsCore } from '../secrets/service';
import type { Db } from '../storage';
import { Authorizer } from './acl/authorizer';
import { findRequestToken, requestAuthorizer } from './acl/store';
import { rootAccessorId, uuidOf } from './acl/tokens';
import { stopChecker } from './checker';
import { CATALOG_WRITES } from './index-state';
import { aclNotFound, CatalogActor, CatalogPermission, LOCAL_DATACENTER } from './route';
import { aclAuthMethodRoutes } from './routes/acl-auth-methods';
import { aclBindingRuleRoutes } from './routes/acl-binding-rules';
import { aclLegacyRoutes } from './routes/acl-legacy';
import { aclLoginRoutes } from './routes/acl-login';
import { aclPolicyRoutes } from './routes/acl-policies';
import { aclRoleRoutes } from './routes/acl-roles';
import { aclTokenRoutes } from './routes/acl-tokens';
import { agentRoutes } from './routes/agent';
import { agentCheckRoutes } from './routes/agent-checks';
import { agentServiceRoutes } from './routes/agent-services';
import { catalogNodeRoutes } from './routes/catalog-nodes';
import { healthRoutes } from './routes/health';
import { internalRoutes } from './routes/internal';
import { kvRoutes } from './routes/kv';
import { namespaceRoutes } from './routes/namespaces';
import { sessionRoutes } from './routes/sessions';
import { statusRoutes } from './routes/status';
import { TxnRolledBack, txnRoutes } from './routes/txn';
import { runtimeOf } from './runtime';

/**
 * The caller a token secret names ('' for the anonymous token): the root token (a management
 * token) or a stored token, with `version`, which changes whenever its permissions may have (the
 * token, any policy, role or namespace default); undefined for a secret that matches no token.
 * The HTTP API and the DNS interface (its DNS token) resolve their callers with it.
 */
export async function tokenActor(db: Db, engine: Engine, secret: string): Promise<{ actor: CatalogActor; version: string } | undefined> {
  // One SHA-256 serves both lookups (the root token's stored hash, the token table's secret_hash).
  const hash = sha256Hex(secret || 'anonymous');
  if (secret && (await engine.rootToken.matches(db, hash))) {
    const accessorId = rootAccessorId(hash);
    return { actor: { accessorId, secretId: secret, ns: 'default', authz: Authorizer.management(), stored: false }, version: accessorId };
  }
  const row = await findRequestToken(db, hash, engine.clock.now());
  if (!row) return undefined;
  const generation = engine.storage.generation;
  const authz = await requestAuthorizer(db, row, engine.catalogDefaultPolicy, runtimeOf(engine).authorizers, generation);
  return {
    actor: { accessorId: row.accessor_id, secretId: secret, ns: row.ns, authz, stored: true },
    version: `${generation}:${row.accessor_id}:${row.modify_index}:${row.acl_idx}:${row.namespaces_idx}:${engine.catalogDefaultPolicy}`,
  };
}

/** The public service reads `?token=` too (after its header). */
const TOKEN_SOURCES: TokenSources = { headers: ['x-catalog-token', 'x-consul-token'], queryParameter: 'token' };

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Integers beyond 2^53 stay exact as bigints (uint64 KV flags in a transaction); schemas decide what they accept. */
function exactIntegers(_key: string, value: unknown, context?: { source?: string }): unknown {
  if (typeof value === 'number' && !Number.isSafeInteger(value) && context?.source && /^-?\d+$/.test(context.source)) return BigInt(context.source);
  return value;
}

const BIG_INTEGER = /\d{16}/;

/** The public service decodes any body as JSON whatever its Content-Type (curl -d sends a form type). */
function decodeJsonBody(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  const broken = jsonLimitBroken(body);
  if (broken) throw new HangarError(400, [`Request decode failed: ${broken}`]);
  try {
    const text = utf8.decode(body);
    // A reviver slows every parse; only an integer of 16 digits or more can be beyond 2^53.
    return BIG_INTEGER.test(text) ? JSON.parse(text, exactIntegers as (key: string, value: unknown) => unknown) : JSON.parse(text);
  } catch (err) {
    throw new HangarError(400, [`Request decode failed: ${(err as Error).message}`]);
  }
}

/**
 * The catalog API (spec 002): ACLs (tokens, policies, roles, auth methods, binding rules, login),
 * namespaces, catalog nodes and checks, sessions and the KV store with locks. Errors are plain text,
 * as the public service sends them.
 */
export const catalogApi: ApiDefinition<CatalogActor, CatalogPermission> = {
  name: 'catalog',
  writeLane: CATALOG_WRITES,
  routes: [
    ...statusRoutes,
    ...aclTokenRoutes,
    ...aclPolicyRoutes,
    ...aclRoleRoutes,
    ...aclAuthMethodRoutes,
    ...aclBindingRuleRoutes,
    ...aclLoginRoutes,
    ...aclLegacyRoutes,
    ...namespaceRoutes,
    ...agentRoutes,
    ...agentServiceRoutes,
    ...agentCheckRoutes,
    ...catalogNodeRoutes,
    ...healthRoutes,
    ...sessionRoutes,
    ...kvRoutes,
    ...txnRoutes,
    ...internalRoutes,
  ],

  /**
   * The caller: the local administrator, the root token (a management token), a stored token, or
   * the anonymous token when none is sent. Undefined for a secret that matches no token: routes
   * that need a token answer "ACL not found".
   */
  async authenticate(req, db, engine) {
    if (req.headers[LOCAL_ADMIN_HEADER] === engine.localAdminSecret) {
      return { accessorId: uuidOf('accessor:local'), secretId: '', ns: 'default', authz: Authorizer.management(), stored: false };
    }
    return (await tokenActor(db, engine, extractToken(req, TOKEN_SOURCES) ?? ''))?.actor;
  },

  authorize(permission, actor) {
    if (permission !== 'public' && !actor) throw aclNotFound();
  },

  renderError(error: HangarError) {
    if (error instanceof TxnRolledBack) {
      return { status: 409, contentType: 'application/json', body: JSON.stringify({ Results: null, Errors: error.errors }) };
    }
    return {
      status: error instanceof ValidationError ? 400 : error.status,
      contentType: 'text/plain; charset=utf-8',
      body: error.messages.join('\n'),
    };
  },

  setup(app, engine) {
    const runtime = runtimeOf(engine);
    // Bodies are read as bytes: KV values stay raw, everything else is JSON whatever its type.
    app.removeAllContentTypeParsers();
    app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
    // Callback hooks, not async ones: they run for every request.
    app.addHook('preHandler', (req, _reply, done) => {
      try {
        const query = req.query as Record<string, unknown>;
        // Another datacenter: the public service's 500 (clients and consul-template tell it from a
        // datacenter that is down by its text), before the body is decoded or anything else is read
        // or written. A repeated `?dc=` counts by its first value, as Go's Query().Get reads it.
        const dc = Array.isArray(query.dc) ? (query.dc[0] as unknown) : query.dc;
        if (typeof dc === 'string' && dc !== '' && dc !== LOCAL_DATACENTER) throw new HangarError(500, ['No path to datacenter']);
        if (dc !== query.dc) query.dc = dc;
        if (query.stale !== undefined && query.consistent !== undefined) {
          throw new HangarError(400, ['Cannot specify ?stale with ?consistent, conflicting semantics.']);
        }
        if (Buffer.isBuffer(req.body) && !req.routeOptions.url?.startsWith('/v1/kv/')) req.body = decodeJsonBody(req.body);
      } catch (err) {
        return done(err as Error);
      }
      // Token secrets are sealed by the secrets barrier; it opens here, before the request's
      // transaction, since opening it the first time writes in a transaction of its own.
      if (req.routeOptions.url?.startsWith('/v1/acl/')) secretsCore(engine).then(() => done(), done);
      else done();
    });
    app.addHook('onResponse', (req, _reply, done) => {
      const touched = runtime.pending.get(req.id);
      if (touched) {
        runtime.pending.delete(req.id);
        if (touched.size > 0) runtime.blocking.notify(touched);
      }
      done();
    });
    app.addHook('preClose', async () => {
      clearInterval(runtime.heartbeat);
      await stopChecker(engine);
      await runtime.blocking.close();
    });
  },
};
