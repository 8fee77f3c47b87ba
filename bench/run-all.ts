/**
 * `npm run bench`: every benchmark of the goals table, one after the other (each starts its own
 * servers and load generator), then bench/results.md with each row's command, figure, baseline,
 * ratio and goal, and the machine's facts, with each step's time. Under 10 minutes on an idle 2-core machine.
 *
 *   npx ts-node --transpile-only bench/run-all.ts [--only NAME]
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { machineFacts, Row } from './autocannon';
import { makeRunTmp } from '../test/setup/run-tmp';

const STEPS: readonly (readonly string[])[] = [
  ['bench/api-load.ts', '--skip-public-services'],
  ['bench/api-load.ts', '--workers', '2'],
  ['bench/api-load.ts', '--storage', 'postgres', '--seconds', '2'],
  ['bench/registry-search.ts'],
  ['bench/catalog-blocking.ts'],
  ['bench/catalog-dns.ts'],
  ['bench/catalog-checks.ts'],
  ['bench/cli-startup.ts', '--runs', '5'],
  ['bench/first-run.ts'],
  ['bench/registry-transfer.ts'],
  ['bench/backup.ts'],
  ['bench/secrets-kv.ts'],
  ['bench/tls.ts'],
  ['bench/secrets-pki.ts', '--seconds', '2'],
  ['bench/secrets-database.ts', '--runs', '2', '--seconds', '4'],
  ['bench/secrets-database.ts', '--runs', '2', '--seconds', '4', '--database-core', '0'],
];

const cell = (v: string | undefined) => (v ?? '').replace(/\|/g, '\\|');

/** The line naming the public services the rows "… vs …" ran against, when the environment gave any. */
function sideBySide(): string[] {
  const given = ['HANGAR_BENCH_VAULT', 'HANGAR_BENCH_CONSUL'].filter((name) => process.env[name]);
  if (given.length === 0) return [];
  return [`The rows "… vs" a public service ran with ${given.map((name) => `\`${name}\``).join(' and ')} set (binaries built by scripts/build-public-services): ` +
    'their dev servers keep everything in memory and use both cores; there, ratio = Hangar ÷ the service and CPU ratio = the service\'s CPU per request ÷ Hangar\'s.'];
}

function main(): number {
  const { values } = parseArgs({ options: { only: { type: 'string' } } });
  // The steps' temporary files (servers' data, PostgreSQL clusters, Terraform) go under one directory, removed at the end.
  const runTmp = makeRunTmp('hangar-bench-');
  const file = join(runTmp, 'rows.jsonl');
  writeFileSync(file, '');
  const started = Date.now();
  const failed: string[] = [];
  const durations: string[] = [];
  for (const step of STEPS) {
    if (values.only && !step[0].includes(values.only)) continue;
    console.log(`\n== ${step.join(' ')}`);
    const stepStarted = Date.now();
    const res = spawnSync(process.execPath, ['-r', 'ts-node/register/transpile-only', ...step], {
      stdio: 'inherit',
      env: { ...process.env, HANGAR_BENCH_RESULTS: file, TS_NODE_TRANSPILE_ONLY: 'true', TMPDIR: runTmp },
      // A safety net only: on an idle 2-core machine the longest step takes about 2 minutes.
      timeout: 10 * 60_000,
    });
    if (res.status !== 0) failed.push(step.join(' '));
    const seconds = Math.round((Date.now() - stepStarted) / 1000);
    console.log(`== ${step[0]}: ${seconds} s`);
    durations.push(`\`${step.join(' ')}\` ${seconds} s`);
  }
  const rows = readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row);
  rmSync(runTmp, { recursive: true, force: true });
  const minutes = ((Date.now() - started) / 60_000).toFixed(1);
  const lines = [
    '# Benchmark results',
    '',
    `Written by \`npm run bench\` (bench/run-all.ts) in ${minutes} min on: ${machineFacts()}.`,
    'ratio = figure ÷ baseline, both measured in the same run (for rates more is better; for times, less).',
    'CPU ratio = the baseline server\'s CPU time per request ÷ Hangar\'s: the req/s ratio that CPU cost alone allows, steadier than req/s on a busy machine.',
    'The machine may be shared: compare ratios, not absolute figures, between runs.',
    ...sideBySide(),
    `Steps: ${durations.join(', ')}.`,
    ...(failed.length ? ['', `**Failed steps:** ${failed.map((f) => `\`${f}\``).join(', ')}`] : []),
    '',
    '| row | figure | baseline | ratio | CPU ratio | goal | met? | command |',
    '|---|---|---|---|---|---|---|---|',
    ...rows.map((r) =>
      `| ${cell(`${r.group}: ${r.name}`)} | ${cell(r.figure)} | ${cell(r.baseline)} | ${r.ratio === undefined ? '' : r.ratio.toFixed(2)} | ${r.cpuRatio === undefined ? '' : r.cpuRatio.toFixed(2)} | ` +
      `${cell(r.goal)} | ${r.goal ? (r.met ? 'yes' : '**no**') : ''} | \`${cell(r.command)}\` |`,
    ),
    '',
  ];
  writeFileSync('bench/results.md', lines.join('\n'));
  console.log(`\nbench/results.md: ${rows.length} rows in ${minutes} min${failed.length ? `; failed: ${failed.join(', ')}` : ''}`);
  return failed.length ? 1 : 0;
}

process.exit(main());
