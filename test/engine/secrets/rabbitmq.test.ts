import * as amqp from 'amqplib';
import { embeddedSecrets } from './embedded-reconcile';
import { ROOT_TOKEN, startSecrets, SecretsTestServer } from './helpers';
import { apply, destroy } from '../../../src/reconcile';
import { detectDrift } from '../../../src/reconcile/drift';
import { captureLog, CapturedLog } from '../../helpers/log-capture';
import { haveRabbit, startRabbit, TestRabbit } from '../../helpers/rabbitmq';
import { storedText } from '../../helpers/raw-db';
import { STORAGE_KINDS } from '../../helpers/storage';

/** An AMQP connection with issued credentials to a virtual host (`/` by default). */
function connect(rabbit: TestRabbit, user: string, password: string, vhost = '/'): Promise<amqp.ChannelModel> {
  return amqp.connect({ hostname: '127.0.0.1', port: rabbit.amqpPort, username: user, password, vhost, heartbeat: 0 });
}

/** Publishes on a confirm channel and waits for the broker's verdict (a refusal closes the channel). */
async function publish(conn: amqp.ChannelModel, exchange: string, key: string): Promise<void> {
  const ch = await conn.createConfirmChannel();
  ch.on('error', () => undefined);
  ch.publish(exchange, key, Buffer.from('hello'));
  await ch.waitForConfirms();
  await ch.close();
}

const describeRabbit = haveRabbit() ? describe : describe.skip;

describeRabbit('rabbitmq secrets engine on a real RabbitMQ', () => {
  let rabbit: TestRabbit;
  beforeAll(async () => {
    rabbit = await startRabbit();
    // A second virtual host the roles grant nothing in.
    expect((await rabbit.api('PUT', 'vhosts/other')).status).toBe(201);
  }, 120_000);
  afterAll(() => rabbit?.stop(), 60_000);

  const brokerUser = async (name: string) => rabbit.api('GET', `users/${encodeURIComponent(name)}`);

  describe.each(STORAGE_KINDS)('%s storage', (kind) => {
    let s: SecretsTestServer;
    let log: CapturedLog;
    const connection = () => ({ connection_uri: rabbit.managementUrl, username: rabbit.username, password: rabbit.password });
    beforeAll(async () => {
      log = captureLog();
      s = await startSecrets(kind, { logger: log.logger });
    });
    afterAll(() => s.close());

    test('config/connection: fields checked, the connection verified, the password sealed and never shown', async () => {
      const missing = await s.v('POST', 'rabbitmq/config/connection', { connection_uri: rabbit.managementUrl, username: 'x' });
      expect(missing.status).toBe(400);
      expect(missing.body.errors.join()).toMatch(/password/);
      const badUri = await s.v('POST', 'rabbitmq/config/connection', { ...connection(), connection_uri: 'localhost 15672' });
      expect(badUri.status).toBe(400);
      expect(badUri.body.errors.join()).toMatch(/connection_uri/);
      const wrong = await s.v('POST', 'rabbitmq/config/connection', { ...connection(), password: 'wrong-password' });
      expect(wrong.status).toBe(400);
      expect(wrong.body.errors.join()).toMatch(/failed to validate the connection: .*401/);
      expect(wrong.text).not.toContain('wrong-password');
      const down = await s.v('POST', 'rabbitmq/config/connection', { ...connection(), connection_uri: 'http://127.0.0.1:1' });
      expect(down.status).toBe(400);
      expect(down.body.errors.join()).toMatch(/failed to validate the connection: GET \/api\/users: .*ECONNREFUSED/);
      // Without verification a wrong password is stored as given.
      expect((await s.v('POST', 'rabbitmq/config/connection', { ...connection(), password: 'wrong-password', verify_connection: false })).status).toBe(204);
      expect((await s.v('POST', 'rabbitmq/config/connection', connection())).status).toBe(204);
      const read = await s.v('GET', 'rabbitmq/config/connection');
      expect(read.body.data).toEqual({ connection_uri: rabbit.managementUrl, username: rabbit.username, verify_connection: true, password_policy: '', username_template: '' });
      expect(read.text).not.toContain(rabbit.password);
      expect(await storedText(s.engine.storage, s.dataDir)).not.toContain(rabbit.password);
    });

    test('config/lease: seconds or durations, read back as seconds', async () => {
      expect((await s.v('GET', 'rabbitmq/config/lease')).status).toBe(404);
      expect((await s.v('POST', 'rabbitmq/config/lease', { ttl: '2h', max_ttl: '1h' })).status).toBe(400);
      const bad = await s.v('POST', 'rabbitmq/config/lease', { ttl: 'soon' });
      expect(bad.status).toBe(400);
      expect(bad.body.errors.join()).toMatch(/ttl/);
      expect((await s.v('POST', 'rabbitmq/config/lease', { ttl: '1h', max_ttl: 7200 })).status).toBe(204);
      expect((await s.v('GET', 'rabbitmq/config/lease')).body.data).toEqual({ ttl: 3600, max_ttl: 7200 });
    });

    test('roles: JSON-encoded vhosts and vhost_topics, malformed JSON a clear 400, read, list, delete', async () => {
      expect((await s.v('LIST', 'rabbitmq/roles')).status).toBe(404);
      const neither = await s.v('POST', 'rabbitmq/roles/r', { vhost_topics: '{}' });
      expect(neither.status).toBe(400);
      expect(neither.body.errors).toEqual(['both tags and vhosts not specified']);
      const malformed = await s.v('POST', 'rabbitmq/roles/r', { vhosts: '{"/": {"read": ".*"' });
      expect(malformed.status).toBe(400);
      expect(malformed.body.errors.join()).toMatch(/failed to unmarshal vhosts/);
      const shape = await s.v('POST', 'rabbitmq/roles/r', { tags: 'management', vhost_topics: '{"/": {"amq.topic": {"write": 5}}}' });
      expect(shape.status).toBe(400);
      expect(shape.body.errors.join()).toMatch(/vhost_topics\.\/\.amq\.topic\.write/);
      const notString = await s.v('POST', 'rabbitmq/roles/r', { vhosts: { '/': { read: '.*' } } });
      expect(notString.status).toBe(400);
      expect(notString.body.errors.join()).toMatch(/vhosts: must be a JSON-encoded string/);
      expect((await s.v('POST', 'rabbitmq/roles/bad%20name', { tags: 'management' })).status).toBe(400);

      expect((await s.v('POST', 'rabbitmq/roles/tagged', { tags: 'management' })).status).toBe(204);
      expect((await s.v('GET', 'rabbitmq/roles/tagged')).body.data).toEqual({ tags: 'management', vhosts: null, vhost_topics: null });
      expect((await s.v('POST', 'rabbitmq/roles/app', {
        tags: 'management,policymaker',
        vhosts: JSON.stringify({ '/': { configure: '^app-.*', write: '^(app-.*|amq\\.default|amq\\.topic)$', read: '^app-.*' } }),
        vhost_topics: JSON.stringify({ '/': { 'amq.topic': { write: '^orders\\.', read: '.*' } } }),
      })).status).toBe(204);
      expect((await s.v('GET', 'rabbitmq/roles/app')).body.data).toEqual({
        tags: 'management,policymaker',
        vhosts: { '/': { configure: '^app-.*', write: '^(app-.*|amq\\.default|amq\\.topic)$', read: '^app-.*' } },
        vhost_topics: { '/': { 'amq.topic': { write: '^orders\\.', read: '.*' } } },
      });
      expect((await s.v('LIST', 'rabbitmq/roles')).body.data.keys).toEqual(['app', 'tagged']);
      expect((await s.v('DELETE', 'rabbitmq/roles/tagged')).status).toBe(204);
      expect((await s.v('GET', 'rabbitmq/roles/tagged')).status).toBe(404);
      expect((await s.v('DELETE', 'rabbitmq/roles/tagged')).status).toBe(204);
    });

    test('creds: a broker user with the role\'s tags, vhost and topic permissions; AMQP allowed and refused as granted; revocation deletes it', async () => {
      const unknown = await s.v('GET', 'rabbitmq/creds/nope');
      expect(unknown.status).toBe(400);
      expect(unknown.body.errors).toEqual(['unknown role: nope']);

      const creds = await s.v('GET', 'rabbitmq/creds/app');
      expect(creds.status).toBe(200);
      const { username, password } = creds.body.data;
      expect(username).toMatch(/^root-[0-9a-f-]{36}$/);
      expect(password).toMatch(/^[A-Za-z0-9]{36}$/);
      expect(creds.body).toMatchObject({ renewable: true, lease_duration: 3600, lease_id: expect.stringMatching(/^rabbitmq\/creds\/app\//) });

      // The management API shows the tags, the permissions in `/` and the topic permissions.
      expect((await brokerUser(username)).body.tags).toEqual(['management', 'policymaker']);
      const perms = await rabbit.api('GET', `users/${username}/permissions`);
      expect(perms.body).toEqual([{ user: username, vhost: '/', configure: '^app-.*', write: '^(app-.*|amq\\.default|amq\\.topic)$', read: '^app-.*' }]);
      const topics = await rabbit.api('GET', `users/${username}/topic-permissions`);
      expect(topics.body).toEqual([{ user: username, vhost: '/', exchange: 'amq.topic', write: '^orders\\.', read: '.*' }]);

      // AMQP: what the vhost permissions allow works, the rest is refused.
      const conn = await connect(rabbit, username, password);
      const ch = await conn.createChannel();
      await ch.assertQueue('app-in', { autoDelete: true });
      ch.sendToQueue('app-in', Buffer.from('x'));
      let got: amqp.GetMessage | false = false;
      for (let i = 0; i < 50 && !got; i++) got = await ch.get('app-in', { noAck: true });
      expect(got && got.content.toString()).toBe('x');
      const denied = await conn.createChannel();
      denied.on('error', () => undefined);
      await expect(denied.assertQueue('other-queue')).rejects.toThrow(/ACCESS_REFUSED/);
      // Topic permissions: routing keys under `orders.` only.
      await publish(conn, 'amq.topic', 'orders.created');
      await expect(publish(conn, 'amq.topic', 'billing.paid')).rejects.toThrow();
      await expect(connect(rabbit, username, password, 'other')).rejects.toThrow(/ConnectionClose|NOT_ALLOWED/);
      await conn.close();

      // Revocation deletes the user: the management API no longer knows it, AMQP refuses the login.
      expect((await s.v('PUT', 'sys/leases/revoke', { lease_id: creds.body.lease_id })).status).toBe(204);
      expect((await brokerUser(username)).status).toBe(404);
      await expect(connect(rabbit, username, password)).rejects.toThrow(/ACCESS.REFUSED/);
      expect((await rabbit.api('GET', 'whoami', undefined, { username, password })).status).toBe(401);
    });

    test('leases: renewal within config/lease max_ttl; expiry deletes the user (engine clock, background job)', async () => {
      const creds = await s.v('GET', 'rabbitmq/creds/app');
      const renewed = await s.v('PUT', 'sys/leases/renew', { lease_id: creds.body.lease_id, increment: '3h' });
      expect(renewed.status).toBe(200);
      expect(renewed.body.lease_duration).toBe(7200);
      s.clock.advance(7199_000);
      await s.engine.scheduler.runOnce();
      expect((await brokerUser(creds.body.data.username)).status).toBe(200);
      s.clock.advance(2_000);
      await s.engine.scheduler.runOnce();
      expect((await brokerUser(creds.body.data.username)).status).toBe(404);
    });

    test('revoking the token that obtained the creds deletes its users', async () => {
      const token = await s.tokenWith('path "rabbitmq/creds/*" { capabilities = ["read"] }');
      const creds = await s.v('GET', 'rabbitmq/creds/tagged', undefined, token);
      expect(creds.status).toBe(400); // deleted above
      const app = await s.v('GET', 'rabbitmq/creds/app', undefined, token);
      expect(app.status).toBe(200);
      expect(app.body.data.username).toMatch(/^token-/);
      expect((await brokerUser(app.body.data.username)).status).toBe(200);
      expect((await s.v('POST', 'auth/token/revoke', { token })).status).toBe(204);
      expect((await brokerUser(app.body.data.username)).status).toBe(404);
    });

    test('permissions: every endpoint needs its capability', async () => {
      const reader = await s.tokenWith('path "rabbitmq/roles/*" { capabilities = ["read"] }');
      const calls: Array<[string, string, unknown?]> = [
        ['POST', 'rabbitmq/config/connection', connection()],
        ['GET', 'rabbitmq/config/connection'],
        ['POST', 'rabbitmq/config/lease', { ttl: 1 }],
        ['GET', 'rabbitmq/config/lease'],
        ['POST', 'rabbitmq/roles/x', { tags: 'management' }],
        ['DELETE', 'rabbitmq/roles/app'],
        ['LIST', 'rabbitmq/roles'],
        ['GET', 'rabbitmq/creds/app'],
      ];
      for (const [method, path, body] of calls) {
        const res = await s.v(method, path, body, reader);
        expect([path, res.status]).toEqual([path, 403]);
      }
      expect((await s.v('GET', 'rabbitmq/roles/app', undefined, reader)).status).toBe(200);
      expect((await s.v('GET', 'rabbitmq/creds/app', undefined, null)).status).toBe(403);
    });

    test('no password in the log: the administrator\'s nor an issued one', async () => {
      const creds = await s.v('GET', 'rabbitmq/creds/app');
      expect((await s.v('PUT', 'sys/leases/revoke', { lease_id: creds.body.lease_id })).status).toBe(204);
      expect(log.text()).not.toContain(rabbit.password);
      expect(log.text()).not.toContain(creds.body.data.password);
      expect(log.text()).toContain('rabbitmq/creds/app');
    });

    test('a permission the broker refuses (unknown vhost): 502, and no half-made user stays behind', async () => {
      expect((await s.v('POST', 'rabbitmq/roles/ghost', { vhosts: JSON.stringify({ missing: { read: '.*' } }) })).status).toBe(204);
      const before = (await rabbit.api('GET', 'users')).body.length;
      const res = await s.v('GET', 'rabbitmq/creds/ghost');
      expect(res.status).toBe(502);
      expect(res.body.errors.join()).toMatch(/vhost_or_user_not_found/);
      expect((await rabbit.api('GET', 'users')).body.length).toBe(before);
      expect((await s.v('LIST', 'sys/leases/lookup/rabbitmq/creds/ghost', undefined, ROOT_TOKEN)).status).toBe(404);
    });

    test('a mount elsewhere, without a connection: a clear 400', async () => {
      expect((await s.v('POST', 'sys/mounts/broker', { type: 'rabbitmq' })).status).toBe(204);
      expect((await s.v('POST', 'broker/roles/r', { tags: 'management' })).status).toBe(204);
      const res = await s.v('GET', 'broker/creds/r');
      expect(res.status).toBe(400);
      expect(res.body.errors.join()).toMatch(/config\/connection/);
    });

    test('password_policy: a policy of sys/policies/password, looked up when issuing', async () => {
      expect((await s.v('POST', 'broker/config/connection', { ...connection(), password_policy: 'digits' })).status).toBe(204);
      const missingPolicy = await s.v('GET', 'broker/creds/r');
      expect(missingPolicy.status).toBe(400);
      expect(missingPolicy.body.errors.join()).toMatch(/password_policy: no password policy found \(password policy "digits" does not exist\)/);
      expect((await s.v('PUT', 'sys/policies/password/digits', { policy: 'length = 12\nrule "charset" { charset = "0123456789" }' })).status).toBe(204);
      const creds = await s.v('GET', 'broker/creds/r');
      expect(creds.body.data.password).toMatch(/^\d{12}$/);
      expect((await rabbit.api('GET', 'whoami', undefined, creds.body.data)).status).toBe(200);
    });

    test('username_template: Vault\'s template language (the database engine\'s), with DisplayName and RoleName', async () => {
      const bad = await s.v('POST', 'broker/config/connection', { ...connection(), username_template: '{{ .Nope }}' });
      expect([bad.status, bad.body.errors[0]]).toEqual([400, expect.stringMatching(/^username_template: unable to initialize username template: unknown field \.Nope/)]);
      const template = '{{ printf "rmq-%s-%s-%s" (.RoleName) (.DisplayName | truncate 8) (random 6) | lowercase }}';
      expect((await s.v('POST', 'broker/config/connection', { ...connection(), username_template: template })).status).toBe(204);
      expect((await s.v('GET', 'broker/config/connection')).body.data.username_template).toBe(template);
      const creds = await s.v('GET', 'broker/creds/r');
      expect(creds.status).toBe(200);
      expect(creds.body.data.username).toMatch(/^rmq-r-root-[a-z0-9]{6}$/);
      expect((await brokerUser(creds.body.data.username)).status).toBe(200);
      expect((await rabbit.api('GET', 'whoami', undefined, creds.body.data)).status).toBe(200);
      expect((await s.v('POST', 'sys/leases/revoke', { lease_id: creds.body.lease_id })).status).toBe(204);
      expect((await brokerUser(creds.body.data.username)).status).toBe(404);
      expect((await s.v('POST', 'broker/config/connection', connection())).status).toBe(204);
    });

    test('a broker that is down keeps the mount until its users are revoked', async () => {
      expect((await s.v('POST', 'sys/mounts/flaky', { type: 'rabbitmq' })).status).toBe(204);
      expect((await s.v('POST', 'flaky/config/connection', connection())).status).toBe(204);
      expect((await s.v('POST', 'flaky/roles/r', { tags: 'management' })).status).toBe(204);
      const user = (await s.v('GET', 'flaky/creds/r')).body.data.username;
      expect((await s.v('POST', 'flaky/config/connection', { ...connection(), connection_uri: 'http://127.0.0.1:1', verify_connection: false })).status).toBe(204);
      const refused = await s.v('DELETE', 'sys/mounts/flaky');
      expect(refused.status).toBe(400);
      expect(refused.body.errors.join()).toMatch(/failed to revoke 1 lease\(s\) of flaky\/; the mount stays/);
      expect((await s.v('GET', 'sys/mounts/flaky')).status).toBe(200);
      expect((await brokerUser(user)).status).toBe(200);
      expect((await s.v('POST', 'flaky/config/connection', connection())).status).toBe(204);
      expect((await s.v('DELETE', 'sys/mounts/flaky')).status).toBe(204);
      expect((await brokerUser(user)).status).toBe(404);
      expect((await s.v('GET', 'sys/mounts/flaky')).status).toBe(404);
    });

    test('disabling the mount deletes the users it issued', async () => {
      expect((await s.v('POST', 'broker/config/connection', connection())).status).toBe(204);
      const creds = await s.v('GET', 'broker/creds/r');
      expect((await brokerUser(creds.body.data.username)).status).toBe(200);
      expect((await s.v('DELETE', 'sys/mounts/broker')).status).toBe(204);
      expect((await brokerUser(creds.body.data.username)).status).toBe(404);
    });
  });

  describe('reconcile kinds (embedded engine)', () => {
    const { payload, secrets } = embeddedSecrets();

    test('connection from an environment variable, lease, role: created, updated in place, drift, deleted', async () => {
      expect(await apply(payload('secrets.mount', 'mq', { type: 'rabbitmq', description: '', defaultLeaseTtl: 0, maxLeaseTtl: 0 }))).toBe('created');
      const desired = { connectionUri: rabbit.managementUrl, username: rabbit.username, passwordEnv: 'TEST_RABBIT_PASSWORD', verifyConnection: true, leaseTtl: 600, leaseMaxTtl: 3600 };
      const config = payload('secrets.rabbitmq-config', 'mq', desired);
      await expect(apply(config)).rejects.toThrow(/environment variable TEST_RABBIT_PASSWORD \(passwordEnv\) is not set/);
      process.env.TEST_RABBIT_PASSWORD = 'wrong';
      await expect(apply(config)).rejects.toThrow(/failed to validate the connection/);
      process.env.TEST_RABBIT_PASSWORD = rabbit.password;
      try {
        expect(await apply(config)).toBe('created');
        // The password cannot be read back: the connection is written again.
        expect(await apply({ ...config, desired: { ...desired, leaseTtl: 900 } })).toBe('updated');
        expect((await secrets((c) => c.read('mq/config/lease')))?.data).toEqual({ ttl: 900, max_ttl: 3600 });

        const roleDesired = { tags: 'management', vhosts: { '/': { configure: '', write: '.*', read: '.*' } }, vhostTopics: null };
        const role = payload('secrets.rabbitmq-role', 'mq/app', roleDesired);
        expect(await apply(role)).toBe('created');
        expect(await apply(role)).toBe('unchanged');
        expect(await apply({ ...role, desired: { ...roleDesired, tags: 'monitoring' } })).toBe('updated');
        expect((await secrets((c) => c.read('mq/roles/app')))?.data?.tags).toBe('monitoring');
        const [drift] = await detectDrift([role]);
        expect(drift.fields.map((f) => f.field)).toEqual(['tags']);
        const creds = await secrets((c) => c.read('mq/creds/app'));
        expect((await brokerUser(creds?.data?.username)).status).toBe(200);

        expect(await destroy(role)).toBe(true);
        expect(await destroy(role)).toBe(false);
        expect(await destroy(config)).toBe(true);
      } finally {
        delete process.env.TEST_RABBIT_PASSWORD;
      }
    });
  });
});
