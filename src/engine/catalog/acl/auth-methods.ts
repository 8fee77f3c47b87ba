import { createPublicKey } from 'node:crypto';
import { z } from 'zod';
import type { Db } from '../../storage';
import { badRequest, consulObject } from '../route';
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

export const AUTH_METHOD_TYPES = ['jwt'] as const;

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

/** The variables a binding rule of this method may use: its claim mappings' target names. */
export function selectableNames(method: AuthMethodRow): SelectableNames {
  const config = JSON.parse(method.config) as JwtConfig;
  return { values: Object.values(config.ClaimMappings ?? {}), lists: Object.values(config.ListClaimMappings ?? {}) };
}

export async function getAuthMethod(db: Db, ns: string, name: string): Promise<AuthMethodRow | undefined> {
  return db.get<AuthMethodRow>('SELECT * FROM catalog_acl_auth_methods WHERE ns = ? AND name = ?', [ns, name]);
}

export function renderAuthMethod(row: AuthMethodRow, stub = false): Record<string, unknown> {
  return {
    Name: row.name,
    Type: row.type,
    ...(row.display_name ? { DisplayName: row.display_name } : {}),
    Description: row.description,
    ...(Number(row.max_token_ttl) ? { MaxTokenTTL: Number(row.max_token_ttl) } : {}),
    ...(row.token_locality ? { TokenLocality: row.token_locality } : {}),
    ...(stub ? {} : { Config: JSON.parse(row.config) }),
    Namespace: row.ns,
    CreateIndex: Number(row.create_index),
    ModifyIndex: Number(row.modify_index),
  };
}
