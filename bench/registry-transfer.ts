/**
 * Box file transfer: upload (PUT to upload_path) and download (GET download_url) of one large file
 * through `hangar server`, with the server's peak RSS, next to `cp` of the same file on the same disk.
 *
 *   npx ts-node --transpile-only bench/registry-transfer.ts [--size-mb 2048]
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { request } from 'undici';
import { cpuTimeUs, record } from './autocannon';
import { peakRssMiB, resetPeakRss, rssMiB } from './catalog-load';
import { hangar, startServerProcess } from '../test/helpers/cli';
import { tempDir } from '../test/helpers/storage';

function mbps(bytes: number, ms: number): string {
  return `${((bytes / 1024 / 1024) / (ms / 1000)).toFixed(0).padStart(5)} MiB/s`;
}


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

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { 'size-mb': { type: 'string', default: '2048' } } });
  const size = Number(values['size-mb']) * 1024 * 1024;
  const dir = tempDir('hangar-bench-transfer-');
  const file = join(dir, 'big.box');
  spawnSync('sh', ['-c', `head -c ${size} /dev/urandom > '${file}'`]);
  const sum = spawnSync('sha256sum', [file], { encoding: 'utf8' }).stdout.split(' ')[0];
  console.log(`file ${statSync(file).size} bytes in ${dir}`);
  // The baseline: `cp` of the file on the same disk, flushed. A disk's write rate moves from one
  // minute to the next (page cache, write-back), so cp runs just before the upload and again just
  // after it, and the faster of the two counts.
  const copyMs = () => {
    const began = Date.now();
    spawnSync('cp', [file, join(dir, 'copy.box')]);
    spawnSync('sync');
    const ms = Date.now() - began;
    rmSync(join(dir, 'copy.box'));
    return ms;
  };

  const data = join(dir, 'data');
  const server = await startServerProcess(['--data', data], {});
  try {
    const base = server.urls.registry;
    hangar(['registry', 'create-user', 'bench', '--password', 'password123', '--address', base, '--token', readFileSync(join(data, 'root-token'), 'utf8').trim()]);
    const login = await request(`${base}/api/v1/authenticate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ user: { login: 'bench', password: 'password123' } }),
    });
    const token = ((await login.body.json()) as { token: string }).token;
    await api(base, 'POST', '/api/v1/boxes', token, { box: { name: 'big', is_private: false } });
    await api(base, 'POST', '/api/v1/box/bench/big/versions', token, { version: { version: '1.0.0' } });
    await api(base, 'POST', '/api/v1/box/bench/big/version/1.0.0/providers', token, { provider: { name: 'virtualbox', checksum: sum, checksum_type: 'sha256' } });
    const { upload_path } = await api(base, 'GET', '/api/v1/box/bench/big/version/1.0.0/provider/virtualbox/upload', token);
    // The server's own RSS before any transfer: the peaks below include it. The peak is counted
    // from here: the login before hashed a password with scrypt, whose 32 MiB are not the transfer's.
    const atRest = rssMiB(server.process.pid!);
    const setupPeak = peakRssMiB(server.process.pid!);
    resetPeakRss(server.process.pid!);
    console.log(`server RSS at rest                 ${atRest.toFixed(0)} MiB (peak before the transfers ${setupPeak.toFixed(0)} MiB)`);

    const cpBefore = copyMs();
    let cpuBefore = cpuTimeUs(server.process.pid!);
    let start = Date.now();
    const put = await request(upload_path, { method: 'PUT', body: createReadStream(file), headers: { 'content-length': String(size) } });
    await put.body.text();
    const upMs = Date.now() - start;
    const upCpu = cpuTimeUs(server.process.pid!) - cpuBefore;
    if (put.statusCode !== 200) throw new Error(`upload: ${put.statusCode}`);
    const cpAfter = copyMs();
    const cpMs = Math.min(cpBefore, cpAfter);
    console.log(`cp (baseline)                      ${mbps(size, cpMs)}  (before the upload ${cpBefore} ms, after ${cpAfter} ms)`);
    console.log(`upload (stream, sha256 verified)   ${mbps(size, upMs)}  (${upMs} ms)  ${(upMs / cpMs).toFixed(1)}x cp`);
    const group = `registry transfer, ${(size / 1024 / 1024).toFixed(0)} MiB box`;
    // The server's CPU time per GiB moved: steadier than the rate on a shared machine.
    const cpuPerGiB = (us: number) => `${(us / 1e6 / (size / 2 ** 30)).toFixed(2)} s CPU/GiB`;
    const row = (name: string, ms: number, cpuUs: number) => record({
      group, name, figure: `${mbps(size, ms).trim()}, server ${cpuPerGiB(cpuUs)}`, baseline: `cp ${mbps(size, cpMs).trim()}`, ratio: cpMs / ms, goal: '>= 70% of cp', met: cpMs / ms >= 0.7,
    });
    row('upload (stream, sha256 verified)', upMs, upCpu);
    const uploadPeak = peakRssMiB(server.process.pid!);

    await api(base, 'PUT', '/api/v1/box/bench/big/version/1.0.0/release', token);
    const { download_url } = await api(base, 'GET', '/api/v1/box/bench/big/version/1.0.0/provider/virtualbox', token);
    cpuBefore = cpuTimeUs(server.process.pid!);
    start = Date.now();
    const get = await request(download_url);
    let got = 0;
    for await (const chunk of get.body) got += (chunk as Buffer).length;
    const downMs = Date.now() - start;
    const downCpu = cpuTimeUs(server.process.pid!) - cpuBefore;
    if (got !== size) throw new Error(`download: ${got} of ${size} bytes`);
    console.log(`download (stream)                  ${mbps(size, downMs)}  (${downMs} ms)  ${(downMs / cpMs).toFixed(1)}x cp`);
    row('download (stream)', downMs, downCpu);
    const peak = peakRssMiB(server.process.pid!);
    const detail = `at rest ${atRest.toFixed(0)} MiB, after the upload ${uploadPeak.toFixed(0)} MiB`;
    console.log(`server peak RSS                    ${peak.toFixed(0)} MiB  (${detail}; file: ${(size / 1024 / 1024).toFixed(0)} MiB)`);
    record({ group, name: 'server peak RSS', figure: `${peak.toFixed(0)} MiB (${detail})`, goal: '<= 150 MB', met: peak * 1.048576 <= 150 });
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
