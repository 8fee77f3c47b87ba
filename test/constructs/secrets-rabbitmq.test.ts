import { TerraformStack } from 'cdktf';
import { RabbitmqRole, RabbitmqSecretBackend, SecretsMount } from '../../src';
import { decodePayload } from '../../src/reconcile/payload';
import { byPath, Synth, synth } from '../helpers/synth';

function payloads(s: Synth) {
  return Object.values(s.resource.null_resource)
    .filter((r) => r.triggers?.identity !== undefined)
    .map((r) => decodePayload(r.triggers.payload));
}

const stack = (st: TerraformStack) => {
  const mount = new SecretsMount(st, 'Broker', { path: 'team/rabbitmq', type: 'rabbitmq', maxLeaseTtl: '24h' });
  const backend = new RabbitmqSecretBackend(st, 'Connection', {
    mount,
    connectionUri: 'http://rabbit.internal:15672',
    username: 'vault-admin',
    passwordEnv: 'RABBITMQ_ADMIN_PASSWORD',
    leaseTtl: '1h',
    leaseMaxTtl: '8h',
  });
  new RabbitmqRole(st, 'Orders', {
    backend,
    name: 'orders',
    tags: ['management', 'policymaker'],
    vhosts: [
      { vhost: '/', configure: '^orders-.*', write: '^orders-.*', read: '.*' },
      { vhost: 'audit', read: '.*' },
    ],
    vhostTopics: [{ vhost: '/', exchange: 'amq.topic', write: '^orders\\.' }],
  });
};

describe('rabbitmq constructs', () => {
  test('backend and role render their kinds with the API-shaped desired state', () => {
    const all = payloads(synth(stack));
    expect(all.find((p) => p.kind === 'secrets.rabbitmq-config')).toMatchObject({
      key: 'team/rabbitmq',
      desired: { connectionUri: 'http://rabbit.internal:15672', username: 'vault-admin', passwordEnv: 'RABBITMQ_ADMIN_PASSWORD', verifyConnection: true, leaseTtl: 3600, leaseMaxTtl: 28800 },
    });
    expect(all.find((p) => p.kind === 'secrets.rabbitmq-role')).toMatchObject({
      key: 'team/rabbitmq/orders',
      desired: {
        tags: 'management,policymaker',
        vhosts: { '/': { configure: '^orders-.*', write: '^orders-.*', read: '.*' }, 'audit': { configure: '', write: '', read: '.*' } },
        vhostTopics: { '/': { 'amq.topic': { write: '^orders\\.', read: '' } } },
      },
    });
  });

  test('the role waits for the backend, the backend for its mount', () => {
    const s = synth(stack);
    expect(JSON.stringify(byPath(s, 'Connection/Resource/Identity').depends_on)).toMatch(/Broker_.*Config/);
    expect(JSON.stringify(byPath(s, 'Orders/Resource/Identity').depends_on)).toMatch(/Connection_.*Config/);
  });

  test('no password in the configuration: only the name of its environment variable', () => {
    process.env.RABBITMQ_ADMIN_PASSWORD = 'very-secret-broker-password';
    try {
      const raw = JSON.stringify(synth(stack)) + payloads(synth(stack)).map((p) => JSON.stringify(p)).join('\n');
      expect(raw).toContain('RABBITMQ_ADMIN_PASSWORD');
      expect(raw).not.toContain('very-secret-broker-password');
    } finally {
      delete process.env.RABBITMQ_ADMIN_PASSWORD;
    }
  });

  test('validation at construction names the bad value and the fix', () => {
    const backend = (st: TerraformStack) => new RabbitmqSecretBackend(st, 'B', { connectionUri: 'http://r:15672', username: 'admin', passwordEnv: 'PW' });
    const cases: Array<[(st: TerraformStack) => void, RegExp]> = [
      [(st) => new RabbitmqSecretBackend(st, 'B', { connectionUri: 'r:15672', username: 'a', passwordEnv: 'PW' }), /connectionUri "r:15672" is not an http\(s\) URL/],
      [(st) => new RabbitmqSecretBackend(st, 'B', { connectionUri: 'http://r', username: 'a', passwordEnv: 'the password' }), /not an environment variable name/],
      [(st) => new RabbitmqSecretBackend(st, 'B', { connectionUri: 'http://r', username: '', passwordEnv: 'PW' }), /username is empty/],
      [(st) => new RabbitmqSecretBackend(st, 'B', { connectionUri: 'http://r', username: 'a', passwordEnv: 'PW', leaseTtl: '2h', leaseMaxTtl: '1h' }), /longer than leaseMaxTtl/],
      [(st) => new RabbitmqSecretBackend(st, 'B', { mount: new SecretsMount(st, 'M', { path: 'pki', type: 'pki' }), connectionUri: 'http://r', username: 'a', passwordEnv: 'PW' }), /"pki" mount/],
      [(st) => new RabbitmqRole(st, 'R', { backend: backend(st), name: 'bad name', tags: ['management'] }), /RabbitmqRole name "bad name" is invalid/],
      [(st) => new RabbitmqRole(st, 'R', { backend: backend(st), name: 'r' }), /give tags or vhosts/],
      [(st) => new RabbitmqRole(st, 'R', { backend: backend(st), name: 'r', tags: ['a,b'] }), /tag "a,b" is invalid/],
      [(st) => new RabbitmqRole(st, 'R', { backend: backend(st), name: 'r', vhosts: [{ vhost: '/' }, { vhost: '/' }] }), /vhost "\/" is listed twice/],
    ];
    for (const [build, message] of cases) expect(() => synth(build)).toThrow(message);
  });
});
