import { createPublicKey } from 'node:crypto';
import { z } from 'zod';
import type { Barrier } from '../../secrets/core/barrier';
import type { Db } from '../../storage';
import { badRequest, consulObject, formatDuration } from '../route';
import { checkKubernetesConfig, KUBERNETES_NAMES, KubernetesConfig } from './kubernetes';
import type { SelectableNames } from './selector';

export interface AuthMethodRow {
  ns: string;
  name: string;
  type: string;
  display_name: string;
  description: string;
  max_token_ttl: number;
  token_locality: string;
  config: string;
  create_index: number;
  modify_index: number;
}

/** The configuration of a `jwt` auth method (the public service's field names). */
export const JwtConfig = consulObject({
  JWTValidationPubKeys: z.array(z.string()).nullish(),
  JWKSURL: z.string().optional(),
  JWKSCACert: z.string().optional(),
  OIDCDiscoveryURL: z.string().optional(),
  OIDCDiscoveryCACert: z.string().optional(),
  BoundIssuer: z.string().optional(),
  BoundAudiences: z.array(z.string()).nullish(),
  ClaimMappings: z.record(z.string(), z.string()).nullish(),
  ListClaimMappings: z.record(z.string(), z.string()).nullish(),
  JWTSupportedAlgs: z.array(z.string()).nullish(),
  ExpirationLeeway: z.union([z.string(), z.number()]).optional(),
  NotBeforeLeeway: z.union([z.string(), z.number()]).optional(),
  ClockSkewLeeway: z.union([z.string(), z.number()]).optional(),
});
export type JwtConfig = z.infer<typeof JwtConfig>;

export const AUTH_METHOD_TYPES = ['jwt', 'kubernetes'] as const;

/** Checks a jwt configuration: exactly one key source, PEM keys that parse, an http(s) URL. */
export function checkJwtConfig(raw: unknown): JwtConfig {
  const parsed = JwtConfig.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badRequest(`Invalid Auth Method: Config${issue.path.length ? `.${issue.path.join('.')}` : ''}: ${issue.message}`);
  }
  const config = parsed.data;
  const sources = [config.JWTValidationPubKeys?.length ? 1 : 0, config.JWKSURL ? 1 : 0, config.OIDCDiscoveryURL ? 1 : 0];
  if (sources.reduce((a, b) => a + b, 0) !== 1) {
    throw badRequest("Invalid Auth Method: exactly one of 'JWTValidationPubKeys', 'JWKSURL', or 'OIDCDiscoveryURL' must be set");
  }
  for (const [i, pem] of (config.JWTValidationPubKeys ?? []).entries()) {
    try {
      createPublicKey(pem);
    } catch {
      throw badRequest(`Invalid Auth Method: error parsing public key JWTValidationPubKeys[${i}]: not a PEM public key`);
    }
  }
  for (const url of [config.JWKSURL, config.OIDCDiscoveryURL]) {
    if (url !== undefined && !/^https?:\/\/\S+$/.test(url)) throw badRequest(`Invalid Auth Method: ${JSON.stringify(url)} is not an http(s) URL`);
  }
  const values = Object.values(config.ClaimMappings ?? {});
  const lists = Object.values(config.ListClaimMappings ?? {});
  for (const name of [...values, ...lists]) {
    if (!/^[A-Za-z0-9_-]+$/.test(name)) throw badRequest(`Invalid Auth Method: mapped name ${JSON.stringify(name)} may use only letters, digits, '-' and '_'`);
  }
  const duplicate = values.find((v) => lists.includes(v));
  if (duplicate) throw badRequest(`Invalid Auth Method: ${JSON.stringify(duplicate)} is mapped both as a value and as a list`);
  return config;
}

/** Checks the configuration of a method of the given type. */
export function checkConfig(type: string, raw: unknown): JwtConfig | KubernetesConfig {
  return type === 'kubernetes' ? checkKubernetesConfig(raw) : checkJwtConfig(raw);
}

/** The variables a binding rule of this method may use: a jwt method's claim mappings' target names, a kubernetes method's service account. */
export function selectableNames(method: AuthMethodRow): SelectableNames {
  if (method.type === 'kubernetes') return KUBERNETES_NAMES;
  const config = JSON.parse(method.config) as JwtConfig;
  return { values: Object.values(config.ClaimMappings ?? {}), lists: Object.values(config.ListClaimMappings ?? {}) };
}

export async function getAuthMethod(db: Db, ns: string, name: string): Promise<AuthMethodRow | undefined> {
  return db.get<AuthMethodRow>('SELECT * FROM catalog_acl_auth_methods WHERE ns = ? AND name = ?', [ns, name]);
}

/** Config fields that are credentials: sealed by the barrier at rest (a kubernetes method's reviewer token). */
const SEALED_FIELDS: Readonly<Record<string, readonly string[]>> = { kubernetes: ['ServiceAccountJWT'] };

const sealedAt = (ns: string, name: string, field: string) => `catalog_acl_auth_methods:${ns}/${name}:${field}`;

/** A checked config as stored: its credential fields sealed. */
export async function sealConfig(barrier: Barrier, db: Db, method: { ns: string; name: string; type: string }, config: object): Promise<string> {
  const out: Record<string, unknown> = { ...config };
  for (const field of SEALED_FIELDS[method.type] ?? []) {
    if (typeof out[field] === 'string' && out[field] !== '') out[field] = await barrier.seal(db, out[field], sealedAt(method.ns, method.name, field));
  }
  return JSON.stringify(out);
}

/** A method's config with its credential fields opened (for login, and for reads, which show them as the public service does). */
export async function openConfig(barrier: Barrier, db: Db, row: AuthMethodRow): Promise<Record<string, unknown>> {
  const config = JSON.parse(row.config) as Record<string, unknown>;
  for (const field of SEALED_FIELDS[row.type] ?? []) {
    if (typeof config[field] === 'string' && config[field] !== '') config[field] = await barrier.open(db, config[field], sealedAt(row.ns, row.name, field));
  }
  return config;
}

/** A method as answered; `config` is its opened config (see openConfig), left out of list entries. */
export function renderAuthMethod(row: AuthMethodRow, config?: Record<string, unknown>): Record<string, unknown> {
  return {
    Name: row.name,
    Type: row.type,
    ...(row.display_name ? { DisplayName: row.display_name } : {}),
    Description: row.description,
    // A Go duration string ("10m0s"), as the public service encodes it; the Go client decodes only that.
    ...(Number(row.max_token_ttl) ? { MaxTokenTTL: formatDuration(Number(row.max_token_ttl)) } : {}),
    ...(row.token_locality ? { TokenLocality: row.token_locality } : {}),
    ...(config ? { Config: config } : {}),
    Namespace: row.ns,
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}
