/**
 * Message broker credentials issued and revoked per second: one cycle is `GET rabbitmq/creds/app`
 * (a broker user, its vhost and topic permissions, a sealed lease) then `sys/leases/revoke` (the
 * user deleted), next to the same management-API calls made directly on the same private RabbitMQ
 * (PUT user, PUT permissions, PUT topic permissions, DELETE user) with the same concurrency and
 * duration, in the same run. Everything on loopback; each phase stops by itself.
 *
 *   npx ts-node --transpile-only bench/secrets-rabbitmq.ts [--seconds 5] [--concurrency 4]
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { inProcessEngine, line, load, runBenchmark, secretsCaller } from './http-load';
import { ManagementClient } from '../src/engine/secrets/engines/rabbitmq/management';
import { startRabbit } from '../test/helpers/rabbitmq';

const ROOT = 'bench-root-token';
const VHOSTS = { '/': { configure: '^app-', write: '^app-', read: '^app-' } };
const TOPICS = { '/': { 'amq.topic': { write: '^app\\.', read: '.*' } } };

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '5' }, concurrency: { type: 'string', default: '4' } } });
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  console.log(`node ${process.version}, ${concurrency} concurrent clients, ${seconds} s per phase; starting a private RabbitMQ...`);
  const rabbit = await startRabbit();
  const { engine, urls } = await inProcessEngine(ROOT);
  const api = secretsCaller(urls.secrets, ROOT, concurrency);
  const call = api.call;
  try {
    // Baseline: the management API directly, the same four calls per cycle.
    const direct = new ManagementClient({ connection_uri: rabbit.managementUrl, username: rabbit.username, password: rabbit.password });
    const baseline = await load(seconds, concurrency, async () => {
      const user = `bench-${randomUUID()}`;
      await direct.putUser(user, 'pw', 'management');
      await direct.putPermissions('/', user, VHOSTS['/']);
      await direct.putTopicPermissions('/', user, 'amq.topic', TOPICS['/']['amq.topic']);
      await direct.deleteUser(user);
    });

    await call('POST', 'rabbitmq/config/connection', { connection_uri: rabbit.managementUrl, username: rabbit.username, password: rabbit.password });
    await call('POST', 'rabbitmq/roles/app', { tags: 'management', vhosts: JSON.stringify(VHOSTS), vhost_topics: JSON.stringify(TOPICS) });
    const hangar = await load(seconds, concurrency, async () => {
      const creds = await call('GET', 'rabbitmq/creds/app');
      await call('PUT', 'sys/leases/revoke', { lease_id: creds.lease_id });
    });

    line('management API directly (baseline), cycles', baseline);
    line('Hangar creds + revoke, cycles', hangar, baseline);
    const left = (await rabbit.api('GET', 'users')).body.length;
    console.log(`broker users left after the run: ${left} (the administrator only: ${left === 1})`);
  } finally {
    await api.close();
    await engine.close();
    await rabbit.stop();
  }
}

runBenchmark(main);
