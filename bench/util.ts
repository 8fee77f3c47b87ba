import { spawnSync } from 'node:child_process';
import { RunningServer, startServerProcess } from '../test/helpers/cli';

/**
 * `hangar server --dev` as the benchmarks run it: --dev for a known root token and a temporary data
 * directory, at the log level a server runs at by default (info), not --dev's debug, which writes a
 * line per request that no production server writes (bench/logging.ts measures what that costs).
 */
export const startDevServer = (rootToken: string, args: readonly string[] = [], env: NodeJS.ProcessEnv = {}): Promise<RunningServer> =>
  startServerProcess(['--dev', '--dev-root-token', rootToken, '--log-level', 'info', ...args], env);

/** Runs a command `runs` times; returns the wall times in milliseconds, sorted. */
export function timeCommand(cmd: string, args: readonly string[], runs: number, env: NodeJS.ProcessEnv = {}): number[] {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    const res = spawnSync(cmd, args, { env: { ...process.env, NODE_OPTIONS: '', ...env }, stdio: 'pipe' });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (res.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed: ${res.stderr}`);
    times.push(ms);
  }
  return times.sort((a, b) => a - b);
}

export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export const median = (values: readonly number[]): number => percentile([...values].sort((a, b) => a - b), 50);

/** The median and, with several runs, every run's value: "450 ms (runs 420, 450, 527)". */
export function summary(values: readonly number[], unit: string): string {
  const each = values.length > 1 ? ` (runs ${values.map((v) => v.toFixed(0)).join(', ')})` : '';
  return `${median(values).toFixed(0)} ${unit}${each}`;
}

/** One line of a results table: name, figures, and the ratio to the baseline. */
export function report(name: string, sorted: readonly number[], baseline?: readonly number[]): void {
  const p50 = percentile(sorted, 50);
  const ratio = baseline ? `  ${(p50 / percentile(baseline, 50)).toFixed(1)}x baseline` : '';
  console.log(`${name.padEnd(44)} p50 ${p50.toFixed(1).padStart(7)} ms  p90 ${percentile(sorted, 90).toFixed(1).padStart(7)} ms${ratio}`);
}
