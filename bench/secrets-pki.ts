/**
 * Certificates issued per second by the PKI engine (`pki/issue/:role`): EC P-256 with `no_store`,
 * EC P-256 stored (sealed, one write transaction each), and RSA-2048 with `no_store`, next to the
 * raw cost of the same crypto measured in the same run: a node:crypto loop that generates a key pair
 * of the same type and signs 600 bytes (a certificate's to-be-signed size) with a P-256 CA key, at
 * the same concurrency. Each issue is measured twice:
 *  - in process: the secrets request pipeline without HTTP (token, ACL, validation, handler, JSON
 *    envelope; SQLite in a temporary directory). The goal is judged on this one: P-256 `no_store`
 *    at >= 50% of the raw loop;
 *  - over HTTP: `hangar server --dev` in its own process, autocannon in another.
 * Loopback only; each phase runs for a fixed time.
 *
 *   npx ts-node --transpile-only bench/secrets-pki.ts [--seconds 5] [--concurrency 8]
 */
import { generateKeyPair, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { parseArgs, promisify } from 'node:util';
import { autocannon, LoadResult as HttpResult, record, reqs, startHangar } from './autocannon';
import { load, LoadResult, runBenchmark } from './http-load';
import { Engine } from '../src/engine/engine';
import { dispatch } from '../src/engine/secrets/core/request';
import { secretsCore } from '../src/engine/secrets/service';
import { tempDir } from '../test/helpers/storage';

const ROOT = 'bench-root-token';
const generate = promisify(generateKeyPair) as (type: string, options: object) => Promise<unknown>;
const ROLE = { allowed_domains: 'bench.test', allow_subdomains: true, ttl: '1h' };
const ISSUE = { common_name: 'www.bench.test' };

/** The roles measured, each with the key pair its raw loop generates. */
const CASES = [
  { name: 'EC P-256, no_store', role: 'fast', body: { ...ROLE, key_type: 'ec', key_bits: 256, no_store: true }, raw: 'P-256' },
  { name: 'EC P-256, stored', role: 'stored', body: { ...ROLE, key_type: 'ec', key_bits: 256 }, raw: 'P-256' },
  { name: 'RSA-2048, no_store', role: 'rsa', body: { ...ROLE, key_type: 'rsa', key_bits: 2048, no_store: true }, raw: 'RSA-2048' },
] as const;

const KEYS = { 'P-256': ['ec', { namedCurve: 'prime256v1' }], 'RSA-2048': ['rsa', { modulusLength: 2048 }] } as const;

/** Requests to one API path, as the mount would be set up by a user; throws on an error status. */
type Setup = (path: string, body: unknown) => Promise<void>;

async function configure(call: Setup): Promise<void> {
  await call('sys/mounts/pki/tune', { max_lease_ttl: '87600h' });
  await call('pki/root/generate/internal', { common_name: 'Bench Root', key_type: 'ec', key_bits: 256, ttl: '8760h' });
  for (const c of CASES) await call(`pki/roles/${c.role}`, c.body);
}

const perSecond = (r: { rps: number }) => `${Math.round(r.rps).toLocaleString('en-US')}/s`;

/** A phase's rate with the CPU time it took per operation: of the main thread, and of the whole process (thread pool included). */
interface Measured extends LoadResult {
  readonly mainUs: number;
  readonly allUs: number;
}

/**
 * `load` plus CPU time per operation. On a shared machine the rates swing with the neighbours' load;
 * the CPU cost per operation does not, and the main thread's bounds the rate an idle machine reaches.
 */
async function measure(seconds: number, concurrency: number, once: () => Promise<void>): Promise<Measured> {
  const cpu = (u: NodeJS.CpuUsage) => u.user + u.system;
  const all0 = process.cpuUsage();
  const main0 = process.threadCpuUsage();
  const r = await load(seconds, concurrency, once);
  return { ...r, mainUs: cpu(process.threadCpuUsage(main0)) / r.count, allUs: cpu(process.cpuUsage(all0)) / r.count };
}

const cpuNote = (m: Measured) => `CPU ${Math.round(m.mainUs)} µs main thread, ${Math.round(m.allUs)} µs all threads per op`;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '8' } } });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  console.log(`node ${process.version}, ${concurrency} concurrent callers (autocannon -c ${concurrency} over HTTP), ${seconds} s per phase, storage sqlite`);

  // Baselines: key generation and one signature with a P-256 CA key, nothing else.
  const ca = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const tbs = randomBytes(600);
  const raw: Record<string, Measured> = {};
  for (const [name, [type, options]] of Object.entries(KEYS)) {
    raw[name] = await measure(seconds, concurrency, async () => {
      await generate(type, options);
      sign('sha256', tbs, ca.privateKey);
    });
    record({ group: 'pki', name: `raw node:crypto ${name} keygen + sign (baseline)`, figure: perSecond(raw[name]) });
    console.log(`  ${cpuNote(raw[name])}`);
  }
  const row = (how: string, c: (typeof CASES)[number], r: { rps: number }) => {
    const ratio = r.rps / raw[c.raw].rps;
    const goal = c.role === 'fast' && how === 'in process' ? { goal: '>= 50% of the raw loop', met: ratio >= 0.5 } : {};
    record({ group: 'pki', name: `issue ${c.name}, ${how}`, figure: perSecond(r), baseline: `raw ${c.raw} ${perSecond(raw[c.raw])}`, ratio, ...goal });
  };

  // In process: the request pipeline the HTTP route calls, without the socket.
  const dataDir = tempDir();
  const engine = await Engine.open({ storage: { kind: 'sqlite', dataDir }, dataDir, devRootToken: ROOT });
  try {
    const core = await secretsCore(engine);
    const call = async (path: string, body: unknown) => {
      const res = await dispatch(core, { method: 'POST', url: `/v1/${path}`, headers: {}, body, ip: '127.0.0.1', id: '', baseUrl: 'http://127.0.0.1', token: ROOT, localAdmin: false });
      if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    };
    await configure(call);
    // Warm-up (JIT, the CA and roles opened once).
    await load(1, concurrency, () => call('pki/issue/fast', ISSUE));
    for (const c of CASES) {
      const m = await measure(seconds, concurrency, () => call(`pki/issue/${c.role}`, ISSUE));
      row('in process', c, m);
      console.log(`  ${cpuNote(m)}`);
    }
  } finally {
    await engine.close();
  }

  // Over HTTP: the server and the load generator each in their own process.
  const server = await startHangar(ROOT);
  try {
    const url = (path: string) => `${server.urls.secrets}/v1/${path}`;
    const headers = { 'x-vault-token': ROOT, 'content-type': 'application/json' };
    await configure(async (path, body) => {
      const res = await fetch(url(path), { method: 'POST', headers, body: JSON.stringify(body) });
      if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    });
    const issue = (role: string, s: number) =>
      autocannon({ url: url(`pki/issue/${role}`), method: 'POST', headers, body: JSON.stringify(ISSUE) }, { connections: concurrency, seconds: s });
    await issue('fast', 1);
    for (const c of CASES) {
      const r: HttpResult = await issue(c.role, seconds);
      if (r.non2xx || r.errors) throw new Error(`issue ${c.name}: ${r.non2xx} non-2xx answers, ${r.errors} errors (${reqs(r)})`);
      row('over HTTP', c, r);
    }
  } finally {
    await server.close();
  }
}

runBenchmark(main);
