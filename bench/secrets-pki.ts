/**
 * Certificates issued per second by the PKI engine over HTTP (`pki/issue/:role`): EC P-256 with
 * `no_store`, EC P-256 stored (sealed, one transaction each), and RSA-2048, next to the raw cost of
 * the same crypto measured in the same run: a node:crypto loop that generates a P-256 key pair and
 * signs 600 bytes (a certificate's to-be-signed size) with a P-256 CA key. Loopback only; each
 * phase runs for a fixed time.
 *
 *   npx ts-node --transpile-only bench/secrets-pki.ts [--seconds 5] [--concurrency 8]
 */
import { generateKeyPair, generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { parseArgs, promisify } from 'node:util';
import { inProcessEngine, line, load, runBenchmark, secretsCaller } from './http-load';

const ROOT = 'bench-root-token';
const generate = promisify(generateKeyPair);

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '8' } } });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  console.log(`node ${process.version}, ${concurrency} concurrent clients, ${seconds} s per phase, storage sqlite`);

  // Baseline: key generation and one signature, nothing else.
  const ca = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const tbs = randomBytes(600);
  const raw = await load(seconds, concurrency, async () => {
    await generate('ec', { namedCurve: 'prime256v1' });
    sign('sha256', tbs, ca.privateKey);
  });

  const { engine, urls } = await inProcessEngine(ROOT);
  const api = secretsCaller(urls.secrets, ROOT, concurrency);
  const call = (path: string, body: unknown) => api.call('POST', path, body);
  try {
    await call('sys/mounts/pki/tune', { max_lease_ttl: '87600h' });
    await call('pki/root/generate/internal', { common_name: 'Bench Root', key_type: 'ec', key_bits: 256, ttl: '8760h' });
    const role = { allowed_domains: 'bench.test', allow_subdomains: true, ttl: '1h' };
    await call('pki/roles/fast', { ...role, key_type: 'ec', key_bits: 256, no_store: true });
    await call('pki/roles/stored', { ...role, key_type: 'ec', key_bits: 256 });
    await call('pki/roles/rsa', { ...role, key_type: 'rsa', key_bits: 2048, no_store: true });
    const issue = (r: string) => load(seconds, concurrency, async () => void (await call(`pki/issue/${r}`, { common_name: 'www.bench.test' })));

    line('raw P-256 keygen + sign (baseline)', raw);
    line('issue EC P-256, no_store', await issue('fast'), raw);
    line('issue EC P-256, stored', await issue('stored'), raw);
    line('issue RSA-2048, no_store', await issue('rsa'), raw);
  } finally {
    await api.close();
    await engine.close();
  }
}

runBenchmark(main);
