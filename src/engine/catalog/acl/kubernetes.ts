import { X509Certificate } from 'node:crypto';
import { z } from 'zod';
import { fetchJson } from '../../jwt-keys';
import { badRequest, consulObject, ignored } from '../route';
import type { SelectableNames, Variables } from './selector';

/** The configuration of a `kubernetes` auth method (the public service's field names). */
export const KubernetesConfig = consulObject({
  Host: z.string(),
  CACert: z.string().optional(),
  ServiceAccountJWT: z.string(),
  // Enterprise namespace mapping: known to the public service, not used by Hangar.
  MapNamespaces: ignored,
  ConsulNamespacePrefix: ignored,
  ConsulNamespaceOverrides: ignored,
});
export type KubernetesConfig = z.infer<typeof KubernetesConfig>;

/** What a binding rule of a kubernetes method may use (the public service's names). */
export const KUBERNETES_NAMES: SelectableNames = {
  values: [],
  lists: [],
  fields: ['serviceaccount.namespace', 'serviceaccount.name', 'serviceaccount.uid'],
};

export class KubernetesLoginError extends Error {}

/** The API server's base URL: Host is a URL, or a host or host:port (HTTPS then, as the public service assumes). */
function apiBase(host: string): string | undefined {
  const url = /^https?:\/\//.test(host) ? host : `https://${host}`;
  try {
    const parsed = new URL(url);
    return /\s/.test(host) || !parsed.hostname ? undefined : url.replace(/\/+$/, '');
  } catch {
    return undefined;
  }
}

/** Checks a kubernetes configuration: an http(s) Host, a PEM CA certificate if given, a reviewer JWT. */
export function checkKubernetesConfig(raw: unknown): KubernetesConfig {
  const parsed = KubernetesConfig.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badRequest(`Invalid Auth Method: Config${issue.path.length ? `.${issue.path.join('.')}` : ''}: ${issue.message}`);
  }
  const config = parsed.data;
  if (!apiBase(config.Host)) throw badRequest(`Invalid Auth Method: Host ${JSON.stringify(config.Host)} is not a host, host:port or http(s) URL`);
  if (!config.ServiceAccountJWT) throw badRequest('Invalid Auth Method: ServiceAccountJWT is required');
  if (config.CACert) {
    try {
      // X509Certificate throws on anything that is not a certificate. Its publicKey is a public
      // KeyObject already: createPublicKey(KeyObject) takes private keys only on Node.js 24.
      if (new X509Certificate(config.CACert).publicKey.type !== 'public') throw new Error('no public key');
    } catch {
      throw badRequest('Invalid Auth Method: CACert is not a PEM certificate');
    }
  }
  return config;
}

/**
 * Validates a service account token with the cluster's TokenReview API (as the public service
 * does, authenticating with the method's ServiceAccountJWT) and answers the identity's variables.
 */
export async function validateKubernetesLogin(bearer: string, config: KubernetesConfig): Promise<Variables> {
  const url = `${apiBase(config.Host)}/apis/authentication.k8s.io/v1/tokenreviews`;
  let res;
  try {
    res = await fetchJson(url, config.CACert || undefined, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'authorization': `Bearer ${config.ServiceAccountJWT}` },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: bearer } }),
    });
  } catch (err) {
    throw new KubernetesLoginError(`TokenReview failed: ${(err as Error).message}`);
  }
  if (res.status !== 200 && res.status !== 201) throw new KubernetesLoginError(`TokenReview answered ${res.status}`);
  const status = (res.body.status ?? {}) as { authenticated?: boolean; error?: string; user?: { username?: string; uid?: string } };
  if (!status.authenticated) throw new KubernetesLoginError(`lookup failed: ${status.error || 'service account token not authenticated'}`);
  // "system:serviceaccount:<namespace>:<name>"
  const parts = (status.user?.username ?? '').split(':');
  if (parts.length !== 4 || parts[0] !== 'system' || parts[1] !== 'serviceaccount' || !parts[2] || !parts[3]) {
    throw new KubernetesLoginError('lookup failed: the token is not a service account token');
  }
  return {
    values: {},
    lists: {},
    fields: { 'serviceaccount.namespace': parts[2], 'serviceaccount.name': parts[3], 'serviceaccount.uid': status.user?.uid ?? '' },
  };
}
