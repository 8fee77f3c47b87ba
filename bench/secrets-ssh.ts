/**
 * SSH certificate signatures per second, for an Ed25519 and an RSA CA: the certificate code alone
 * (in process) and `ssh/sign/:role` over HTTP, next to a raw node:crypto sign loop with the same
 * key over a certificate-sized message, measured in the same run. Each phase runs for a fixed time
 * on loopback and stops by itself.
 *
 *   npx ts-node --transpile-only bench/secrets-ssh.ts [--seconds 3] [--concurrency 8] [--rsa-bits 4096]
 */
import { randomBytes, sign } from 'node:crypto';
import { parseArgs } from 'node:util';
import { inProcessEngine, line, load, runBenchmark, secretsCaller } from './http-load';
import { signCertificate, USER_CERT } from '../src/engine/secrets/engines/ssh/certificate';
import { generateKeys, KeyPair, signatureAlgorithm, signerOf } from '../src/engine/secrets/engines/ssh/keys';
import { parsePublicKey } from '../src/engine/secrets/engines/ssh/wire';

const ROOT = 'bench-root-token';

/** Operations per second of a synchronous loop run for `seconds`. */
function loop(seconds: number, once: () => void): { rps: number; p50: number; p99: number } {
  const deadline = Date.now() + seconds * 1000;
  let count = 0;
  while (Date.now() < deadline) {
    for (let i = 0; i < 10; i++) once();
    count += 10;
  }
  const perOp = (seconds * 1000) / count;
  return { rps: count / seconds, p50: perOp, p99: perOp };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { 'seconds': { type: 'string', default: '3' }, 'concurrency': { type: 'string', default: '8' }, 'rsa-bits': { type: 'string', default: '4096' } },
  });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  const rsaBits = Number(values['rsa-bits']);
  console.log(`node ${process.version}, ${seconds} s per phase, ${concurrency} concurrent HTTP clients, RSA CA ${rsaBits} bits`);

  const { engine, urls } = await inProcessEngine(ROOT);
  const api = secretsCaller(urls.secrets, ROOT, concurrency);
  const call = (path: string, body: unknown) => api.call('POST', path, body);

  try {
    const subject = await generateKeys({ family: 'ed25519', bits: 256 });
    const subjectKey = parsePublicKey(subject.publicKey)!;
    const cases: Array<[string, KeyPair]> = [
      ['ed25519', await generateKeys({ family: 'ed25519', bits: 256 })],
      [`rsa-${rsaBits}`, await generateKeys({ family: 'rsa', bits: rsaBits })],
    ];
    for (const [name, ca] of cases) {
      const mount = `ssh-${name}`;
      await call(`sys/mounts/${mount}`, { type: 'ssh' });
      // Imported, so the raw loop below signs with the very same key.
      await call(`${mount}/config/ca`, { generate_signing_key: false, private_key: ca.privateKey, public_key: ca.publicKey });
      await call(`${mount}/roles/bench`, { key_type: 'ca', allow_user_certificates: true, allowed_users: '*', default_user: 'bench', ttl: '1h' });

      const signer = signerOf(ca);
      const algorithm = signatureAlgorithm(signer, 'default');
      const now = Math.floor(Date.now() / 1000);
      const spec = {
        publicKey: subjectKey,
        certType: USER_CERT,
        keyId: 'bench',
        principals: ['bench'],
        validAfter: now - 30,
        validBefore: now + 3600,
        criticalOptions: {},
        extensions: { 'permit-pty': '' },
        algorithm,
      } as const;
      const message = randomBytes(200 + (signer.publicKey.type === 'ssh-rsa' ? rsaBits / 8 : 32));
      const hash = signer.publicKey.type === 'ssh-rsa' ? 'sha256' : null;
      const raw = loop(seconds, () => void sign(hash, message, signer.key));
      line(`${name}: raw node:crypto sign (baseline)`, raw);
      line(`${name}: certificate, in process`, loop(seconds, () => void signCertificate(signer, spec)), raw);
      line(
        `${name}: POST ssh/sign over HTTP`,
        await load(seconds, concurrency, async () => void (await call(`${mount}/sign/bench`, { public_key: subject.publicKey }))),
        raw,
      );
    }
  } finally {
    await api.close();
    await engine.close();
  }
}

runBenchmark(main);
