import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BoundedMap } from '../bounded-map';
import { sha256Hex } from '../crypto';
import { type Engine, LOCAL_ADMIN_HEADER } from '../engine';
import { HangarError } from '../http/errors';
import { extractToken, REGISTRY_TOKEN_SOURCES } from '../http/tokens';
import { CachedSetting, putSetting } from '../settings';
import { Db } from '../storage';
import { registryConfig } from './config';

const MAINTENANCE_KEY = 'registry:maintenance';
const MAINTENANCE_CACHE_MS = 2000;

interface EngineLimits {
  maintenance: CachedSetting;
  windows: BoundedMap<string, { start: number; count: number }>;
}

/**
 * Rate-limit windows kept at most (one per token or address seen lately; about 150 bytes each).
 * Past it the window started longest ago goes: those are expired first, and a flood of made-up
 * tokens gains nothing it would not have had (each made-up token has a window of its own anyway).
 */
export const RATE_WINDOWS_MAX = 10_000;

const state = new WeakMap<Engine, EngineLimits>();

function limitsOf(engine: Engine): EngineLimits {
  let s = state.get(engine);
  if (!s) {
    s = { maintenance: new CachedSetting(MAINTENANCE_KEY, MAINTENANCE_CACHE_MS, engine.clock), windows: new BoundedMap(RATE_WINDOWS_MAX) };
    state.set(engine, s);
  }
  return s;
}

/** The engine's rate-limit windows: how many it holds and its bound (tests check them). */
export function rateLimitWindows(engine: Engine): { readonly size: number; readonly maxSize: number } {
  return limitsOf(engine).windows;
}

/**
 * Maintenance mode, shared by the servers of one database (a setting), cached for two seconds. A
 * caller inside a transaction passes it: one opened inside another would wait for itself on SQLite.
 */
export async function inMaintenance(engine: Engine, db?: Db): Promise<boolean> {
  const setting = limitsOf(engine).maintenance;
  const kept = setting.kept();
  if (kept) return kept.value === 'on';
  const value = db ? await setting.get(db) : await engine.storage.tx((tx) => setting.get(tx), { readOnly: true });
  return value === 'on';
}

export async function setMaintenance(db: Db, engine: Engine, on: boolean): Promise<void> {
  await putSetting(db, MAINTENANCE_KEY, on ? 'on' : 'off');
  limitsOf(engine).maintenance.remember(on ? 'on' : 'off');
}

/**
 * Writes during maintenance: every method but GET and HEAD, and the GETs that prepare uploads.
 * Reads (boxes, metadata, downloads of released versions) keep working, as on the public service;
 * the admin API and the local administrator (the CLI on the data directory) stay unaffected.
 */
function isWrite(req: FastifyRequest): boolean {
  const path = req.url.split('?')[0];
  if (path.startsWith('/api/v1/admin/')) return false;
  if (req.method !== 'GET' && req.method !== 'HEAD') return true;
  return /\/upload(\/direct)?\/?$/.test(path);
}

/**
 * Fixed-window rate limits: per token (requests that carry one) and per address (those that do
 * not), with X-RateLimit-Limit/-Remaining/-Reset on every answer and 429 past the limit.
 */
function rateLimit(engine: Engine, req: FastifyRequest, reply: FastifyReply): void {
  if (req.headers[LOCAL_ADMIN_HEADER] === engine.localAdminSecret) return;
  const config = registryConfig(engine);
  const token = extractToken(req, REGISTRY_TOKEN_SOURCES);
  const limit = token ? config.rateLimitPerToken : config.rateLimitPerAddress;
  if (!limit) return;
  const key = token ? `t:${sha256Hex(token)}` : `a:${req.ip}`;
  const s = limitsOf(engine);
  const now = engine.clock.now();
  let window = s.windows.get(key);
  if (!window || now >= window.start + config.rateLimitWindowMs) {
    window = { start: now, count: 0 };
    s.windows.set(key, window);
  }
  window.count++;
  const reset = window.start + config.rateLimitWindowMs;
  const headers = {
    'x-ratelimit-limit': String(limit),
    'x-ratelimit-remaining': String(Math.max(0, limit - window.count)),
    'x-ratelimit-reset': String(Math.ceil(reset / 1000)),
  };
  reply.headers(headers);
  if (window.count > limit) {
    const retry = String(Math.max(1, Math.ceil((reset - now) / 1000)));
    throw new HangarError(429, [`Rate limit exceeded: ${limit} requests per ${config.rateLimitWindowMs / 1000} s; retry in ${retry} s`], {
      ...headers,
      'retry-after': retry,
    });
  }
}

/** The registry's request hooks: rate limits first, then maintenance mode. */
export function registerLimits(app: FastifyInstance, engine: Engine): void {
  app.addHook('onRequest', async (req, reply) => {
    rateLimit(engine, req, reply);
    const localAdmin = req.headers[LOCAL_ADMIN_HEADER] === engine.localAdminSecret;
    if (!localAdmin && isWrite(req) && (await inMaintenance(engine))) {
      throw new HangarError(503, ['The registry is in maintenance mode: reads work, changes are refused until it ends'], {
        'retry-after': '60',
      });
    }
  });
}
