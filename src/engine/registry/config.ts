import type { Engine } from '../engine';

/** Settings of the box registry that have no place in the spec: limits, lifetimes, the 2FA notifier. */
export interface RegistryConfig {
  /** How long an upload URL may wait for its PUT to start (the spec: "short"). */
  readonly uploadUrlTtlMs: number;
  /** Largest box file accepted by an upload. */
  readonly maxUploadBytes: number;
  /** Requests per window for one token (0: no limit). */
  readonly rateLimitPerToken: number;
  /** Requests per window from one address without a token (0: no limit). */
  readonly rateLimitPerAddress: number;
  readonly rateLimitWindowMs: number;
  /** Lifetime of a two-factor code. */
  readonly twoFactorCodeTtlMs: number;
  /** A command run with the code in its environment (HANGAR_2FA_CODE, ...) to deliver it. */
  readonly twoFactorCommand?: string;
  /** A URL that receives a JSON POST with the code to deliver it. */
  readonly twoFactorWebhook?: string;
}

function numberFrom(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, not "${raw}"`);
  return value;
}

/** The configuration from the environment (`hangar server` documents each variable). */
export function registryConfigFromEnv(env: NodeJS.ProcessEnv = process.env): RegistryConfig {
  return {
    uploadUrlTtlMs: numberFrom(env, 'HANGAR_REGISTRY_UPLOAD_TTL', 600) * 1000,
    maxUploadBytes: numberFrom(env, 'HANGAR_REGISTRY_MAX_UPLOAD_BYTES', 64 * 1024 ** 3),
    rateLimitPerToken: numberFrom(env, 'HANGAR_REGISTRY_RATE_LIMIT_TOKEN', 6000),
    rateLimitPerAddress: numberFrom(env, 'HANGAR_REGISTRY_RATE_LIMIT_ADDRESS', 6000),
    rateLimitWindowMs: numberFrom(env, 'HANGAR_REGISTRY_RATE_LIMIT_WINDOW', 60) * 1000,
    twoFactorCodeTtlMs: numberFrom(env, 'HANGAR_REGISTRY_2FA_CODE_TTL', 300) * 1000,
    twoFactorCommand: env.HANGAR_REGISTRY_2FA_COMMAND || undefined,
    twoFactorWebhook: env.HANGAR_REGISTRY_2FA_WEBHOOK || undefined,
  };
}

const configs = new WeakMap<Engine, RegistryConfig>();

/** The engine's registry configuration: set by `configureRegistry`, else read from the environment once. */
export function registryConfig(engine: Engine): RegistryConfig {
  let config = configs.get(engine);
  if (!config) {
    config = registryConfigFromEnv();
    configs.set(engine, config);
  }
  return config;
}

/** Overrides settings for one engine (tests, embedders). */
export function configureRegistry(engine: Engine, overrides: Partial<RegistryConfig>): void {
  configs.set(engine, { ...registryConfig(engine), ...overrides });
}
