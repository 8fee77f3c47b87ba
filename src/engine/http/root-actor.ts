import type { FastifyRequest } from 'fastify';
import type { Engine } from '../engine';
import { LOCAL_ADMIN_HEADER } from '../engine';
import { isRootToken } from '../root-token';
import type { Db } from '../storage';
import { extractToken, TokenSources } from './tokens';

/**
 * The root token (or the local CLI) as the caller of the secrets and catalog APIs. Their own token
 * stores (policies, ACL tokens) arrive with their issues and extend this.
 */
export async function rootActor(
  req: FastifyRequest,
  db: Db,
  engine: Engine,
  sources: TokenSources,
): Promise<{ kind: 'root'; token?: string } | undefined> {
  if (req.headers[LOCAL_ADMIN_HEADER] === engine.localAdminSecret) return { kind: 'root' };
  const token = extractToken(req, sources);
  if (token && (await isRootToken(db, token))) return { kind: 'root', token };
  return undefined;
}
