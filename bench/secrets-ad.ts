/**
 * Throughput of the directory accounts engine against a private slapd: library check-out + check-in
 * pairs per second (a check-in sets a new password in the directory) and role rotations per second
 * (`creds` read once its ttl has passed: the engine's clock is advanced before each read), next to
 * raw ldapts password modifies on the same slapd, measured in the same run: on one bound
 * connection, and with a connection opened and bound per modify (what the engine does per rotation).
 * Everything on loopback; each phase runs for a fixed time and stops by itself.
 *
 *   npx ts-node --transpile-only bench/secrets-ad.ts [--seconds 5] [--concurrency 4] [--storage sqlite|postgres]
 */
import { parseArgs } from 'node:util';
import { Attribute, Change, Client } from 'ldapts';
import { line, load, secretsCaller } from './http-load';
import { ManualClock } from '../src/engine/clock';
import { Engine } from '../src/engine/engine';
import { listen } from '../src/engine/http/server';
import { openldapAccount, startSlapd } from '../test/helpers/slapd';
import { tempDir } from '../test/helpers/storage';

const ROOT = 'bench-root-token';

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '4' }, storage: { type: 'string', default: 'sqlite' } },
  });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  console.log(`node ${process.version}, ${concurrency} concurrent clients, ${seconds} s per phase, storage ${values.storage}`);

  const ldap = await startSlapd();
  const people = `ou=people,${ldap.suffix}`;
  const dataDir = tempDir();
  const storage = values.storage === 'postgres'
    ? { kind: 'postgres' as const, url: process.env.HANGAR_BENCH_POSTGRES_URL ?? '' }
    : { kind: 'sqlite' as const, dataDir };
  if (storage.kind === 'postgres' && !storage.url) throw new Error('set HANGAR_BENCH_POSTGRES_URL for --storage postgres');
  const clock = new ManualClock(Date.now());
  const engine = await Engine.open({ storage, dataDir, devRootToken: ROOT, clock });
  const urls = await listen(engine, { registry: '127.0.0.1:0', secrets: '127.0.0.1:0', catalog: '127.0.0.1:0' });
  const { call, close } = secretsCaller(urls.secrets, ROOT, concurrency);

  try {
    // One account per client for each phase, so clients never wait on each other's account.
    const uids = (kind: string) => Array.from({ length: concurrency }, (_, i) => `bench-${kind}-${i}`);
    for (const uid of [...uids('raw'), ...uids('lib'), ...uids('role')]) await ldap.add(openldapAccount(ldap.suffix, uid, 'initial'));

    // Baselines: raw ldapts replaces of userPassword, as the bound manager.
    const manager = async () => {
      const c = new Client({ url: ldap.url });
      await c.bind(ldap.managerDn, ldap.managerPw);
      return c;
    };
    const modify = (c: Client, uid: string) =>
      c.modify(`uid=${uid},${people}`, new Change({ operation: 'replace', modification: new Attribute({ type: 'userPassword', values: [`pw-${Math.random()}`] }) }));
    const clients = await Promise.all(uids('raw').map(() => manager()));
    let next = 0;
    const persistent = await load(seconds, concurrency, async () => {
      const i = next++ % concurrency;
      await modify(clients[i], uids('raw')[i]);
    });
    await Promise.all(clients.map((c) => c.unbind()));
    const perOp = await load(seconds, concurrency, async () => {
      const i = next++ % concurrency;
      const c = await manager();
      await modify(c, uids('raw')[i]);
      await c.unbind();
    });

    await call('POST', 'ad/config', { url: ldap.url, binddn: ldap.managerDn, bindpass: ldap.managerPw, userdn: people, schema: 'openldap', length: 24, request_timeout: 3600 });
    await call('POST', 'ad/library/bench', { service_account_names: uids('lib'), ttl: '1h' });
    const pairs = await load(seconds, concurrency, async () => {
      const out = await call('POST', 'ad/library/bench/check-out', {});
      await call('POST', 'ad/library/bench/check-in', { service_account_names: [out.data.service_account_name] });
    });
    for (const [i, uid] of uids('role').entries()) await call('POST', `ad/roles/r${i}`, { service_account_name: uid, ttl: 60 });
    // request_timeout outlasts the clock's jumps: a rotation in flight is never taken for a crashed one.
    let role = 0;
    const rotations = await load(seconds, concurrency, async () => {
      clock.advance(61_000);
      await call('GET', `ad/creds/r${role++ % concurrency}`);
    });

    line('ldapts modify, one bound connection (baseline)', persistent);
    line('ldapts connect+bind+modify (baseline)', perOp);
    line('check-out + check-in pairs (1 rotation each)', pairs, perOp);
    line('role rotations (creds after ttl)', rotations, perOp);
  } finally {
    await close();
    await engine.close();
    await ldap.stop();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
