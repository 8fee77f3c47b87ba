import { Readable, Transform } from 'node:stream';

/** Where progress lines go, and the clock they are timed by (tests pass their own). */
export interface ProgressOptions {
  readonly write?: (text: string) => void;
  /** Rewrites one line in place (`\r`) instead of printing a line per report: a terminal. */
  readonly inPlace?: boolean;
  readonly now?: () => number;
  /** Nothing is shown for a transfer that ends sooner; then a report at most this often (ms). */
  readonly intervalMs?: number;
}

/** HANGAR_PROGRESS_INTERVAL (ms, default 1000): how long a transfer runs before it is reported, and how often. */
function progressIntervalMs(env: NodeJS.ProcessEnv = process.env): number {
  const value = Number(env.HANGAR_PROGRESS_INTERVAL);
  return env.HANGAR_PROGRESS_INTERVAL && Number.isFinite(value) && value >= 0 ? value : 1000;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/** 1536 -> "1.5 KiB". */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

function formatSeconds(seconds: number): string {
  if (seconds < 60) return `${Math.ceil(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.ceil(seconds - minutes * 60)} s`;
}

/**
 * Counts the bytes of a transfer and reports them (bytes, share, rate, time left) once it has
 * taken longer than the interval, so quick transfers stay silent and long ones (a multi-gigabyte
 * box file under `cdktf deploy`) show that they move. Wraps the source stream; the bytes pass
 * through unchanged.
 */
export class TransferProgress {
  private done = 0;
  private readonly started: number;
  private lastReport: number;
  private reported = false;
  private readonly write: (text: string) => void;
  private readonly inPlace: boolean;
  private readonly now: () => number;
  private readonly intervalMs: number;

  constructor(
    private readonly label: string,
    private readonly total: number | undefined,
    options: ProgressOptions = {},
  ) {
    this.write = options.write ?? ((text) => process.stderr.write(text));
    this.inPlace = options.inPlace ?? process.stderr.isTTY === true;
    this.now = options.now ?? Date.now;
    this.intervalMs = options.intervalMs ?? progressIntervalMs();
    this.started = this.now();
    this.lastReport = this.started;
  }

  /** The source, counted: pipe this one where the source would have gone. */
  track(source: Readable): Readable {
    const counter = new Transform({
      transform: (chunk: Buffer, _encoding, callback) => {
        this.advance(chunk.length);
        callback(null, chunk);
      },
    });
    source.on('error', (err) => counter.destroy(err));
    counter.on('close', () => source.destroy());
    return source.pipe(counter);
  }

  /** Counts transferred bytes; reports when the interval has passed since the last report. */
  advance(bytes: number): void {
    this.done += bytes;
    const now = this.now();
    if (now - this.lastReport < this.intervalMs) return;
    this.lastReport = now;
    this.reported = true;
    this.emit(this.describe(now));
  }

  /** Ends the report with a summary line, if anything was reported. */
  finish(): void {
    if (!this.reported) return;
    const seconds = Math.max((this.now() - this.started) / 1000, 0.001);
    this.emit(`${this.label}: ${formatBytes(this.done)} in ${seconds.toFixed(1)} s (${formatBytes(this.done / seconds)}/s)`);
    if (this.inPlace) this.write('\n');
  }

  private describe(now: number): string {
    const seconds = Math.max((now - this.started) / 1000, 0.001);
    const rate = this.done / seconds;
    const parts = [`${this.label}: ${formatBytes(this.done)}`];
    if (this.total !== undefined && this.total > 0) {
      parts[0] += ` of ${formatBytes(this.total)} (${Math.floor((100 * this.done) / this.total)}%)`;
      parts.push(`${formatBytes(rate)}/s`);
      if (rate > 0) parts.push(`about ${formatSeconds(Math.max(this.total - this.done, 0) / rate)} left`);
    } else {
      parts.push(`${formatBytes(rate)}/s`);
    }
    return parts.join(', ');
  }

  private emit(line: string): void {
    this.write(this.inPlace ? `\r\u001b[K${line}` : `${line}\n`);
  }
}
