import { z } from 'zod';
import { HangarError } from '../../http/errors';
import { getAuthMethod, JwtConfig, openConfig } from '../acl/auth-methods';
import { BindingError, bindsNothing, evaluateBindings } from '../acl/bindings';
import { JwtError, validateJwtLogin } from '../acl/jwt';
import { KubernetesConfig, KubernetesLoginError, validateKubernetesLogin } from '../acl/kubernetes';
import { getToken, renderToken } from '../acl/store';
import { deleteToken, insertToken, tokenBarrier } from '../acl/tokens';
import { requestNamespace, requireLiveNamespace } from '../namespaces';
import { aclNotFound, actorOf, ANONYMOUS_ACCESSOR, badRequest, catalogRoute, CommonQuery, consulObject } from '../route';
import { requestWrites } from '../runtime';

const LoginBody = consulObject({
  AuthMethod: z.string().optional(),
  BearerToken: z.string().optional(),
  Meta: z.record(z.string(), z.string()).nullish(),
});

const permissionDenied = (why?: string) => new HangarError(403, [why ? `Permission denied: ${why}` : 'Permission denied']);

/** "token created via login", with the login's Meta as JSON when given (as the public service describes them). */
function description(meta: Record<string, string> | null | undefined): string {
  const base = 'token created via login';
  return meta && Object.keys(meta).length ? `${base}: ${JSON.stringify(meta)}` : base;
}

/** /v1/acl/login and /v1/acl/logout: tokens for identities an auth method vouches for. */
export const aclLoginRoutes = [
  catalogRoute({
    method: 'POST',
    path: '/v1/acl/login',
    query: CommonQuery,
    body: LoginBody,
    // No token is needed: the bearer token is the credential.
    permission: 'public',
    handler: async ({ query, body }, ctx) => {
      if (!body.AuthMethod) throw badRequest('Invalid Login request: Missing auth method name');
      if (!body.BearerToken) throw badRequest('Invalid Login request: Missing auth method bearer token');
      for (const [k, v] of Object.entries(body.Meta ?? {})) {
        if (k.length > 128 || v.length > 512) throw badRequest(`Invalid Login request: Meta key ${JSON.stringify(k.slice(0, 128))} or its value is too long`);
      }
      const ns = requestNamespace(ctx, query);
      await requireLiveNamespace(ctx.db, ns);
      const method = await getAuthMethod(ctx.db, ns, body.AuthMethod);
      if (!method) throw new HangarError(403, [`ACL not found: auth method ${JSON.stringify(body.AuthMethod)} not found`]);
      let bindings;
      try {
        const config: unknown = await openConfig(await tokenBarrier(ctx.engine), ctx.db, method);
        const vars =
          method.type === 'kubernetes'
            ? await validateKubernetesLogin(body.BearerToken, config as KubernetesConfig)
            : await validateJwtLogin(body.BearerToken, config as JwtConfig, ctx.now);
        bindings = await evaluateBindings(ctx.db, method, vars);
      } catch (err) {
        if (err instanceof JwtError || err instanceof KubernetesLoginError || err instanceof BindingError) throw permissionDenied(err.message);
        throw err;
      }
      // No rule matched: the public service refuses to create a token that grants nothing.
      if (bindsNothing(bindings)) throw permissionDenied();
      const ttlMs = Math.round(Number(method.max_token_ttl) / 1e6);
      const { row, secret } = await insertToken(requestWrites(ctx), await tokenBarrier(ctx.engine), {
        ns,
        description: description(body.Meta),
        policyIds: bindings.policyIds,
        roleIds: bindings.roleIds,
        services: bindings.services,
        nodes: bindings.nodes,
        local: method.token_locality !== 'global',
        authMethod: method.name,
        expirationTime: ttlMs > 0 ? ctx.now + ttlMs : undefined,
        now: ctx.now,
      });
      return renderToken(ctx.db, row, secret);
    },
  }),
  catalogRoute({
    method: 'POST',
    path: '/v1/acl/logout',
    query: CommonQuery,
    permission: 'the token itself',
    handler: async (_input, ctx) => {
      const actor = actorOf(ctx);
      if (!actor.secretId || actor.accessorId === ANONYMOUS_ACCESSOR) throw aclNotFound();
      const row = actor.stored ? await getToken(ctx.db, actor.accessorId, ctx.now) : undefined;
      // Only a token made by a login can log out.
      if (!row?.auth_method) throw permissionDenied();
      await deleteToken(requestWrites(ctx), row.accessor_id);
      return true;
    },
  }),
];
