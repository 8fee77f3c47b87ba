import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The test suite's leak watch (issue 18): when HANGAR_LEAK_WATCH_DIR names a directory, every
 * process of the run (jest workers, `hangar server`, CLI runs) copies each log line it writes and
 * each audit line into that directory, and records every credential it issues or handles (tokens,
 * generated passwords, private keys, secret values, wrapping tokens) in a file of its own there, never
 * in a log. After the run, test/setup/leak-scan.ts looks for the second in the first. Unset (always,
 * outside the test suite), nothing here runs.
 *
 * A directory counts only if it was made for this (prepareLeakWatchDir): the variable set by mistake
 * on a real server, pointing anywhere else, records nothing.
 */
export const LEAK_WATCH_VAR = 'HANGAR_LEAK_WATCH_DIR';

/** The file that marks a directory as a leak watch's (made by prepareLeakWatchDir). */
export const LEAK_WATCH_MARKER = '.hangar-leak-watch';

/** Makes `dir` (owner-only) a leak watch's directory; returns it. */
export function prepareLeakWatchDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(join(dir, LEAK_WATCH_MARKER), 'Captures of the test suite\'s leak watch (src/engine/leak-watch.ts).\n', { mode: 0o600 });
  return dir;
}

/** What a recorded value is, as the scan names it (never the value itself). */
export type SecretKind = 'token' | 'wrapping token' | 'password' | 'private key' | 'secret value' | 'jwt';

/** Values shorter than this are not recorded: too likely to occur in a log line by chance. */
export const MIN_SECRET_LENGTH = 12;

/** The capture files of one process; the scan tells them apart by these prefixes. */
export const CAPTURE_FILES = { log: 'log-', audit: 'audit-', secrets: 'secrets-' } as const;

export class LeakWatch {
  private readonly recorded = new Set<string>();

  constructor(readonly dir: string) {}

  /** A chunk of log output (one or more lines, as the logger writes them). */
  log(text: string): void {
    this.append(`${CAPTURE_FILES.log}${process.pid}.log`, text.endsWith('\n') ? text : `${text}\n`);
  }

  /** One audit line, as a file device writes it. */
  audit(line: string): void {
    this.append(`${CAPTURE_FILES.audit}${process.pid}.log`, line);
  }

  /**
   * A credential this process issued or handled. A multi-line value (a PEM key) is recorded line by
   * line, and each also as JSON escapes it, so that it is found however a log line would carry it.
   */
  secret(kind: SecretKind, value: string): void {
    for (const part of value.split('\n')) {
      const piece = part.replace(/^-----.*-----$/, '').trim();
      if (piece.length < MIN_SECRET_LENGTH) continue;
      for (const form of new Set([piece, JSON.stringify(piece).slice(1, -1)])) {
        if (this.recorded.has(form)) continue;
        this.recorded.add(form);
        this.append(`${CAPTURE_FILES.secrets}${process.pid}.ndjson`, `${JSON.stringify({ kind, value: form })}\n`);
      }
    }
  }

  /** Opened for each line (a few µs): jest loads this module anew for each test file, so kept descriptors would pile up. */
  private append(name: string, text: string): void {
    appendFileSync(join(this.dir, name), text, { mode: 0o600 });
  }
}

/** Read once: a process is watched from its start or not at all (and the request path pays no lookup). */
let current: LeakWatch | null | undefined;

/** The watch of this process, or undefined when the variable does not name a prepared directory (outside the test suite). */
export function leakWatch(): LeakWatch | undefined {
  if (current === undefined) {
    const dir = process.env[LEAK_WATCH_VAR];
    current = dir && existsSync(join(dir, LEAK_WATCH_MARKER)) ? new LeakWatch(dir) : null;
  }
  return current ?? undefined;
}

/** Records `value` when the watch is on; a no-op otherwise. */
export function recordSecret(kind: SecretKind, value: string | undefined): void {
  if (value) leakWatch()?.secret(kind, value);
}

/** The kind of a value by the name of the field that carries it, or undefined for a field that holds no secret. */
export function secretKindOfField(key: string): SecretKind | undefined {
  if (/private_key|^(secret_)?key_pem$/.test(key)) return 'private key';
  if (/password|passphrase|bindpass/.test(key)) return 'password';
  if (/^(client_)?token$|^secret_id$|_secret$|^secret$|^secret_key$|^plaintext$|^credential/.test(key)) return 'secret value';
  if (/^(jwt|id_token|access_token|refresh_token)$/.test(key)) return 'jwt';
  return undefined;
}
