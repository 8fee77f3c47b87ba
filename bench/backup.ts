/**
 * `hangar operator backup` of a running server's data (box files and many rows) against `cp -r` of
 * the same data directory, with the backup process's peak RSS.
 *
 *   npx ts-node --transpile-only bench/backup.ts [--box-mb 512] [--rows 300000]
 */
import { spawn, spawnSync } from 'node:child_process';
import { createReadStream, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { record } from './autocannon';
import { peakRssMiB } from './catalog-load';
import { CLI, hangar, startServerProcess } from '../test/helpers/cli';
import { tempDir } from '../test/helpers/storage';

const mib = (bytes: number) => bytes / 1024 / 1024;

async function api(base: string, method: string, path: string, token: string, body?: unknown) {
  const res = await request(`${base}${path}`, {
    method: method as 'GET',
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.body.json() as any;
  if (res.statusCode !== 200) throw new Error(`${method} ${path}: ${res.statusCode} ${JSON.stringify(json)}`);
  return json;
}

/** Bytes of the files under a directory. */
function duBytes(dir: string): number {
  return Number(spawnSync('du', ['-sb', dir], { encoding: 'utf8' }).stdout.split('\t')[0]);
}

/** Runs the backup command, polling its peak RSS (VmHWM) until it exits; answers its time and peak. */
async function timedBackup(args: string[]): Promise<{ ms: number; peakMiB: number }> {
  const began = Date.now();
  const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, NODE_OPTIONS: '' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let peak = 0;
  const poll = setInterval(() => {
    try {
      const now = peakRssMiB(child.pid!);
      if (Number.isFinite(now)) peak = Math.max(peak, now);
    } catch {
      // exited
    }
  }, 20);
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  clearInterval(poll);
  if (code !== 0) throw new Error(`backup failed (${code}): ${stderr}`);
  spawnSync('sync');
  return { ms: Date.now() - began, peakMiB: peak };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'box-mb': { type: 'string', default: '512' }, 'rows': { type: 'string', default: '300000' } } });
  const boxBytes = Number(values['box-mb']) * 1024 * 1024;
  const rows = Number(values.rows);
  const dir = tempDir('hangar-bench-backup-');
  const data = join(dir, 'data');
  const box = join(dir, 'big.box');
  spawnSync('sh', ['-c', `head -c ${boxBytes} /dev/urandom > '${box}'`]);
  const server = await startServerProcess(['--data', data], {});
  try {
    const base = server.urls.registry;
    const root = readFileSync(join(data, 'root-token'), 'utf8').trim();
    hangar(['registry', 'create-user', 'bench', '--password', 'password123', '--address', base, '--token', root]);
    const login = await request(`${base}/api/v1/authenticate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: { login: 'bench', password: 'password123' } }),
    });
    const token = ((await login.body.json()) as { token: string }).token;
    await api(base, 'POST', '/api/v1/boxes', token, { box: { name: 'big', is_private: false } });
    await api(base, 'POST', '/api/v1/box/bench/big/versions', token, { version: { version: '1.0.0' } });
    await api(base, 'POST', '/api/v1/box/bench/big/version/1.0.0/providers', token, { provider: { name: 'virtualbox' } });
    const { upload_path } = await api(base, 'GET', '/api/v1/box/bench/big/version/1.0.0/provider/virtualbox/upload', token);
    const put = await request(upload_path, { method: 'PUT', body: createReadStream(box), headers: { 'content-length': String(boxBytes) } });
    await put.body.text();
    rmSync(box);
    // Many rows (here settings, a table without foreign keys), written beside the running server.
    const db = new DatabaseSync(join(data, 'hangar.db'));
    db.exec('PRAGMA busy_timeout = 10000');
    db.exec('BEGIN IMMEDIATE');
    const insert = db.prepare('INSERT INTO settings (name, value) VALUES (?, ?)');
    for (let i = 0; i < rows; i++) insert.run(`bench/${i}`, `${i}:${'x'.repeat(180)}`);
    db.exec('COMMIT');
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)');
    db.close();
    spawnSync('sync');
    const bytes = duBytes(data);
    console.log(`data directory: ${mib(bytes).toFixed(0)} MiB (a ${mib(boxBytes).toFixed(0)} MiB box file, ${rows.toLocaleString('en-US')} extra rows)`);

    // The baseline: cp -r of the directory, flushed, before and after the backup; the faster counts.
    const copy = () => {
      const began = Date.now();
      spawnSync('cp', ['-r', data, join(dir, 'copy')]);
      spawnSync('sync');
      const ms = Date.now() - began;
      rmSync(join(dir, 'copy'), { recursive: true, force: true });
      return ms;
    };
    const cpBefore = copy();
    const file = join(dir, 'backup.tar');
    const backup = await timedBackup(['operator', 'backup', '--to', file, '--data', data]);
    const cpAfter = copy();
    const cpMs = Math.min(cpBefore, cpAfter);
    const rate = (ms: number) => `${(mib(bytes) / (ms / 1000)).toFixed(0)} MiB/s`;
    console.log(`cp -r (baseline)   ${rate(cpMs)} (before ${cpBefore} ms, after ${cpAfter} ms)`);
    console.log(`backup             ${rate(backup.ms)} (${backup.ms} ms, file ${mib(statSync(file).size).toFixed(0)} MiB), peak RSS ${backup.peakMiB.toFixed(0)} MiB`);
    const group = `backup of a running server, ${mib(bytes).toFixed(0)} MiB data directory`;
    record({
      group,
      name: 'hangar operator backup (SQLite, box files)',
      figure: rate(backup.ms),
      baseline: `cp -r ${rate(cpMs)}`,
      ratio: cpMs / backup.ms,
      goal: '>= 50% of cp',
      met: cpMs / backup.ms >= 0.5,
    });
    record({ group, name: 'backup process peak RSS', figure: `${backup.peakMiB.toFixed(0)} MiB`, goal: '<= 150 MiB', met: backup.peakMiB <= 150 });
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
