/** Go duration strings as the catalog writes them ("30s", "1m30s", "1h0m0s", "1.5s"), in milliseconds; undefined for "" or garbage. */
export function parseDuration(text: string | undefined | null): number | undefined {
  if (!text) return undefined;
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  let total = 0;
  let consumed = 0;
  for (const m of text.matchAll(re)) {
    total += Number(m[1]) * unit[m[2]];
    consumed += m[0].length;
  }
  return consumed === text.length ? total : undefined;
}

/** Nanoseconds (a session's LockDelay in responses) as "15s". */
export function formatNanos(ns: number | undefined | null): string {
  if (ns === undefined || ns === null) return '—';
  return formatSeconds(ns / 1e9);
}

/** 75 -> "1m15s", 15 -> "15s", 3600 -> "1h". */
export function formatSeconds(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const rest = s % 60;
  return [h && `${h}h`, m && `${m}m`, (rest || (!h && !m)) && `${rest}s`].filter(Boolean).join('');
}

/** A countdown's text: 599_000 -> "9:59", 3_600_000 -> "1:00:00". */
export function formatClock(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}
