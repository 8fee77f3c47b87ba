import type { FastifyInstance } from 'fastify';
import { LOCAL_ADMIN_HEADER } from '../engine';
import { ApiDefinition } from '../http/api';
import { badRequest, HangarError, ValidationError } from '../http/errors';
import { decodeJson, JSON_TYPE } from '../http/json-body';
import { Reply, route } from '../http/routes';
import { peerCertificate } from '../http/tls';
import { extractToken, SECRETS_TOKEN_SOURCES } from '../http/tokens';
import { dispatch } from './core/request';
import { acceptListVerb } from './list-verb';
import { secretsCore } from './service';

const secretsRoute = route<undefined, 'any'>();
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A body sent as form data: Vault reads it as JSON when it starts with `{` (`curl -d '{...}'` sends
 * form-urlencoded), and an OIDC provider's `form_post` sends real form fields.
 */
function parseLoose(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  // Decoded as a JSON body is, under the same limits (depth, width) and with the same messages.
  if (trimmed.startsWith('{')) return decodeJson(Buffer.from(trimmed));
  return Object.fromEntries(new URLSearchParams(trimmed));
}

function setup(app: FastifyInstance): void {
  acceptListVerb(app.server);
  // Vault sends JSON as bare `application/json`, and hvac reads an error's `errors` only from exactly
  // that type; Fastify gives every JSON answer a charset, taken off here.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (reply.getHeader('content-type') === JSON_TYPE) reply.header('content-type', 'application/json');
    done(null, payload);
  });
  // Other types (none, text/plain) are JSON through the shared parsers (engine/http/json-body.ts).
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer' }, (_req, body: Buffer, done) => {
    try {
      done(null, parseLoose(utf8.decode(body)));
    } catch (err) {
      done(err instanceof HangarError ? err : badRequest('Request body is not valid UTF-8'), undefined);
    }
  });
}

/**
 * The secrets API (spec 001), Vault's protocol: one route takes every `/v1/...` request and the
 * core's pipeline (core/request.ts) routes it to `sys/`, `auth/token/` or a mounted engine.
 */
export const secretsApi: ApiDefinition<undefined, 'any'> = {
  name: 'secrets',
  routes: [
    secretsRoute({
      method: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
      path: '/v1/*',
      permission: 'any',
      transaction: 'none',
      handler: async ({ body }, ctx) => {
        const req = ctx.request;
        const core = await secretsCore(ctx.engine);
        const res = await dispatch(core, {
          method: req.method,
          url: req.url,
          headers: req.headers,
          body,
          ip: req.ip,
          id: req.id,
          baseUrl: ctx.baseUrl,
          token: extractToken(req, SECRETS_TOKEN_SOURCES),
          localAdmin: req.headers[LOCAL_ADMIN_HEADER] === ctx.engine.localAdminSecret,
          clientCertificate: () => peerCertificate(req),
        });
        const headers = { ...res.headers, ...(res.contentType ? { 'content-type': res.contentType } : {}) };
        return new Reply(res.status, res.status === 204 || req.method === 'HEAD' ? undefined : res.body, headers);
      },
    }),
  ],
  // No `authenticate`: the pipeline authenticates inside its own transaction (core/request.ts).
  authorize: () => undefined,
  setup,
  renderError(error: HangarError) {
    return {
      status: error instanceof ValidationError ? 400 : error.status,
      contentType: 'application/json; charset=utf-8',
      body: JSON.stringify({ errors: error.messages }),
    };
  },
};
