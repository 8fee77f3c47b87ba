import { execFile } from 'node:child_process';
import { randomInt, randomUUID } from 'node:crypto';
import { sha256Hex, timingSafeEqualHex } from '../crypto';
import type { Engine } from '../engine';
import { registryConfig } from './config';
import { Owner } from './owners';
import { HangarError, invalid } from '../http/errors';

/** Delivery methods Hangar can send a code by; `sms` goes through the configured notifier. */
export const DELIVERY_METHODS = ['sms'] as const;

const MAX_ATTEMPTS = 5;
const MIN_INTERVAL_MS = 30_000;
const MAX_PER_HOUR = 10;

/** 406 with the delivery methods: what the Vagrant CLI reads to ask for a code (and request one by SMS). */
export class TwoFactorRequired extends HangarError {
  readonly extra = { two_factor: { default_delivery_method: 'sms', delivery_methods: [...DELIVERY_METHODS] } };
  constructor() {
    super(406, ['Two-factor authentication is enabled for this account: send two_factor.code (request one by SMS first)']);
  }
}

/** "+1 555 123 4567" -> "+* *** *** **67": enough to recognise one's phone, not to learn a number. */
export function obfuscate(destination: string): string {
  const digits = destination.replace(/\D/g, '').length;
  let seen = 0;
  return destination.replace(/\d/g, (d) => (++seen > digits - 2 ? d : '*'));
}

function codeHash(userId: string, code: string): string {
  return sha256Hex(`${userId}:${code}`);
}

/**
 * Sends a fresh one-time code to the user's phone through the notifier and stores its hash.
 * At most one code per 30 s and ten per hour; a new code replaces older ones.
 */
export async function requestCode(engine: Engine, user: Owner): Promise<string> {
  if (!user.two_factor_method) throw invalid('Two-factor authentication is not enabled for this user');
  if (!user.phone) throw invalid('This user has no phone number to send a code to');
  const config = registryConfig(engine);
  const now = engine.clock.now();
  const code = String(randomInt(0, 1_000_000)).padStart(6, '0');
  const id = randomUUID();
  await engine.storage.tx(async (db) => {
    const recent = await db.all<{ created_at: number }>(
      'SELECT created_at FROM registry_two_factor_codes_log WHERE user_id = ? AND created_at > ? ORDER BY created_at DESC',
      [user.id, now - 60 * 60 * 1000],
    );
    const wait = recent.length ? recent[0].created_at + MIN_INTERVAL_MS - now : 0;
    if (wait > 0 || recent.length >= MAX_PER_HOUR) {
      const retry = wait > 0 ? Math.ceil(wait / 1000) : 3600;
      throw new HangarError(429, [`Too many two-factor codes requested: try again in ${retry} s`], { 'retry-after': String(retry) });
    }
    await db.run('DELETE FROM registry_two_factor_codes WHERE user_id = ?', [user.id]);
    await db.run(
      'INSERT INTO registry_two_factor_codes (id, user_id, code_hash, attempts, expires_at, created_at) VALUES (?, ?, ?, 0, ?, ?)',
      [id, user.id, codeHash(user.id, code), now + config.twoFactorCodeTtlMs, now],
    );
    await db.run('INSERT INTO registry_two_factor_codes_log (id, user_id, created_at) VALUES (?, ?, ?)', [id, user.id, now]);
  });
  try {
    await deliver(engine, { username: user.username, destination: user.phone, method: 'sms', code });
  } catch (err) {
    await engine.storage.tx((db) => db.run('DELETE FROM registry_two_factor_codes WHERE id = ?', [id]));
    throw err;
  }
  return obfuscate(user.phone);
}

/**
 * Checks a code: single use (a right one is deleted), short-lived, and at most five tries per
 * code (then it is gone and a new one must be requested). Commits its own transaction, so failed
 * attempts count even though the login fails.
 */
export async function verifyCode(engine: Engine, user: Owner, code: string): Promise<boolean> {
  const now = engine.clock.now();
  return engine.storage.tx(async (db) => {
    const row = await db.get<{ id: string; code_hash: string; attempts: number; expires_at: number }>(
      'SELECT id, code_hash, attempts, expires_at FROM registry_two_factor_codes WHERE user_id = ? ORDER BY created_at DESC LIMIT 1',
      [user.id],
    );
    if (!row || row.expires_at <= now || row.attempts >= MAX_ATTEMPTS) return false;
    if (/^\d{6}$/.test(code.trim()) && timingSafeEqualHex(row.code_hash, codeHash(user.id, code.trim()))) {
      await db.run('DELETE FROM registry_two_factor_codes WHERE user_id = ?', [user.id]);
      return true;
    }
    if (row.attempts + 1 >= MAX_ATTEMPTS) await db.run('DELETE FROM registry_two_factor_codes WHERE id = ?', [row.id]);
    else await db.run('UPDATE registry_two_factor_codes SET attempts = attempts + 1 WHERE id = ?', [row.id]);
    return false;
  });
}

interface Message {
  readonly username: string;
  readonly destination: string;
  readonly method: string;
  readonly code: string;
}

/**
 * The pluggable notifier: a command (run with HANGAR_2FA_CODE, HANGAR_2FA_DESTINATION,
 * HANGAR_2FA_USERNAME and HANGAR_2FA_METHOD in its environment) or a webhook (a JSON POST of
 * username, destination, delivery_method and code). The code never goes into a response or a log.
 */
async function deliver(engine: Engine, message: Message): Promise<void> {
  const { twoFactorCommand, twoFactorWebhook } = registryConfig(engine);
  if (!twoFactorCommand && !twoFactorWebhook) {
    throw new HangarError(503, ['Two-factor codes cannot be delivered: the server has no notifier configured (HANGAR_REGISTRY_2FA_COMMAND or HANGAR_REGISTRY_2FA_WEBHOOK)']);
  }
  try {
    if (twoFactorCommand) {
      await new Promise<void>((resolve, reject) =>
        execFile(
          '/bin/sh',
          ['-c', twoFactorCommand],
          {
            timeout: 15_000,
            env: {
              ...process.env,
              HANGAR_2FA_CODE: message.code,
              HANGAR_2FA_DESTINATION: message.destination,
              HANGAR_2FA_USERNAME: message.username,
              HANGAR_2FA_METHOD: message.method,
            },
          },
          (err) => (err ? reject(new Error(`notifier command failed: ${err.message.split('\n')[0]}`)) : resolve()),
        ),
      );
    }
    if (twoFactorWebhook) {
      const res = await fetch(twoFactorWebhook, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: message.username, destination: message.destination, delivery_method: message.method, code: message.code }),
        signal: AbortSignal.timeout(15_000),
      });
      if (!res.ok) throw new Error(`notifier webhook answered ${res.status}`);
    }
  } catch (err) {
    engine.logger.error({ err: { message: (err as Error).message }, username: message.username }, 'two-factor code delivery failed');
    throw new HangarError(503, ['The two-factor code could not be delivered; try again later']);
  }
}
