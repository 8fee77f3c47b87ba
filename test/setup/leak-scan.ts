/* eslint-disable no-bitwise -- the rolling hash and its bit filter work on 32-bit integers. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CAPTURE_FILES, MIN_SECRET_LENGTH } from '../../src/engine/leak-watch';

/** A secret found where it must not be: the file, the line and the kind, never the value. */
export interface LeakFinding {
  readonly file: string;
  readonly line: number;
  readonly kind: string;
}

/**
 * What looks like a credential whoever issued it. A test that must put a made-up one in a log line
 * (to check redaction) marks it with FAKE_SECRET_MARK inside the value; marked matches are not
 * findings, and a mark never hides a recorded secret.
 */
const PATTERNS: readonly { kind: string; hint: string; re: RegExp }[] = [
  { kind: 'PEM private key', hint: 'PRIVATE KEY', re: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----(\\n|\s)*[A-Za-z0-9+/=]{0,64}/g },
  { kind: 'JWT', hint: 'eyJ', re: /eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{16,}/g },
  { kind: 'secrets token (hvs.)', hint: 'hv', re: /\bhv[sbr]\.[A-Za-z0-9_-]{20,}/g },
  { kind: 'registry token (hgr.)', hint: 'hgr.', re: /\bhgr\.(root\.)?[A-Za-z0-9_-]{20,}/g },
];
export const FAKE_SECRET_MARK = 'FAKEXSECRET';

const K = MIN_SECRET_LENGTH;
const FILTER_BITS = 22;

/** A polynomial hash of `K` characters from `at`, the same as the rolling one in `SecretIndex.kindsIn`. */
function anchorHash(s: string, at: number): number {
  let h = 0;
  for (let i = at; i < at + K; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** 31^(K-1) modulo 2^32, to take the oldest character out of the rolling hash. */
const OUT = (() => {
  let p = 1;
  for (let i = 1; i < K; i++) p = Math.imul(p, 31);
  return p;
})();

/**
 * The recorded secrets, indexed by a hash of their first K characters (Rabin-Karp): a log is read
 * once whatever the number of secrets, with a bit filter in front of the map.
 */
export class SecretIndex {
  private readonly byAnchor = new Map<number, { value: string; kind: string }[]>();
  private readonly filter = new Uint8Array(1 << (FILTER_BITS - 3));
  size = 0;

  add(value: string, kind: string): void {
    if (value.length < K) return;
    const h = anchorHash(value, 0);
    const list = this.byAnchor.get(h);
    if (list?.some((s) => s.value === value)) return;
    if (list) list.push({ value, kind });
    else this.byAnchor.set(h, [{ value, kind }]);
    const bit = h & ((1 << FILTER_BITS) - 1);
    this.filter[bit >>> 3] |= 1 << (bit & 7);
    this.size++;
  }

  /** The kinds of the recorded secrets that occur in `text`. */
  kindsIn(text: string): Set<string> {
    const kinds = new Set<string>();
    if (text.length < K || this.size === 0) return kinds;
    let h = anchorHash(text, 0);
    for (let i = 0; ; i++) {
      const bit = h & ((1 << FILTER_BITS) - 1);
      if (this.filter[bit >>> 3] & (1 << (bit & 7))) {
        for (const s of this.byAnchor.get(h) ?? []) if (text.startsWith(s.value, i)) kinds.add(s.kind);
      }
      if (i + K >= text.length) return kinds;
      h = (Math.imul(h - Math.imul(text.charCodeAt(i), OUT), 31) + text.charCodeAt(i + K)) | 0;
    }
  }
}

/** Reads the recorded secrets of every process of the run. */
export function readSecrets(dir: string): SecretIndex {
  const index = new SecretIndex();
  for (const name of readdirSync(dir).filter((n) => n.startsWith(CAPTURE_FILES.secrets))) {
    for (const line of readFileSync(join(dir, name), 'utf8').split('\n')) {
      if (!line) continue;
      const { kind, value } = JSON.parse(line) as { kind: string; value: string };
      index.add(value, kind);
    }
  }
  return index;
}

/** The pattern kinds that occur in `line`, marked made-up values aside. */
function patternKinds(line: string): string[] {
  const kinds: string[] = [];
  for (const p of PATTERNS) {
    if (!line.includes(p.hint)) continue;
    if ([...line.matchAll(p.re)].some((m) => !m[0].includes(FAKE_SECRET_MARK))) kinds.push(p.kind);
  }
  return kinds;
}

/** Every log and audit line captured in `dir` holding a recorded secret or something shaped like a credential. */
export function scanLeaks(dir: string): LeakFinding[] {
  const secrets = readSecrets(dir);
  const findings: LeakFinding[] = [];
  const captured = readdirSync(dir)
    .filter((n) => n.startsWith(CAPTURE_FILES.log) || n.startsWith(CAPTURE_FILES.audit))
    .sort();
  for (const name of captured) {
    const lines = readFileSync(join(dir, name), 'utf8').split('\n');
    lines.forEach((line, i) => {
      for (const kind of secrets.kindsIn(line)) findings.push({ file: name, line: i + 1, kind: `recorded ${kind}` });
      for (const kind of patternKinds(line)) findings.push({ file: name, line: i + 1, kind });
    });
  }
  return findings;
}

/** The report of a failed scan: where and what, never the secret. */
export function describeLeaks(dir: string, findings: readonly LeakFinding[]): string {
  const shown = findings.slice(0, 20).map((f) => `  ${join(dir, f.file)}:${f.line}: ${f.kind}`);
  const more = findings.length > shown.length ? [`  ... and ${findings.length - shown.length} more`] : [];
  return [`${findings.length} secret(s) in plaintext in the run's logs or audit files:`, ...shown, ...more].join('\n');
}

/** Throws the report when the capture in `dir` holds any secret (the run then fails; the capture stays for a look). */
export function assertNoLeaks(dir: string): void {
  const findings = scanLeaks(dir);
  if (findings.length > 0) throw new Error(describeLeaks(dir, findings));
}
