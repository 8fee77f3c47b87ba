import { generateKeyPairSync } from 'node:crypto';
import { startSecrets, SecretsTestServer } from './helpers';
import { mountTestEngine } from './test-engine';
import { Capability } from '../../../src/engine/secrets/core/types';
import { STORAGE_KINDS } from '../../helpers/storage';

const ALL: Capability[] = ['create', 'read', 'update', 'delete', 'list', 'sudo'];

interface Endpoint {
  readonly method: string;
  readonly path: string;
  readonly body?: unknown;
  /** The capabilities the request needs on its ACL path. */
  readonly needs: Capability[];
  /** The ACL path when it differs from the request path (lists end in a slash). */
  readonly acl?: string;
}

/**
 * Every endpoint of the core, with a request that the right token could make. A token lacking any
 * one needed capability gets 403 and nothing in storage changes; so does a token that would have
 * them all but is expired, revoked, used up or bound to other networks.
 */
function endpoints(ctx: { lease: string; token: string; accessor: string; pem: string; group: string; alias: string; auth: string }): Endpoint[] {
  const role = { role_type: 'jwt', user_claim: 'sub', bound_subject: 's' };
  return [
    { method: 'GET', path: 'sys/mounts', needs: ['read'] },
    { method: 'POST', path: 'sys/mounts/newmount', body: { type: 'hangar-test' }, needs: ['create'] },
    { method: 'POST', path: 'sys/mounts/test', body: { type: 'hangar-test' }, needs: ['update'] },
    { method: 'GET', path: 'sys/mounts/test', needs: ['read'] },
    { method: 'GET', path: 'sys/mounts/test/tune', needs: ['read'] },
    { method: 'POST', path: 'sys/mounts/test/tune', body: { default_lease_ttl: '2h' }, needs: ['update'] },
    { method: 'DELETE', path: 'sys/mounts/test', needs: ['delete'] },
    { method: 'GET', path: 'sys/auth', needs: ['read'] },
    { method: 'POST', path: 'sys/auth/jwt2', body: { type: 'jwt' }, needs: ['create', 'sudo'] },
    { method: 'GET', path: 'sys/auth/token/tune', needs: ['read', 'sudo'] },
    { method: 'POST', path: 'sys/auth/token/tune', body: { default_lease_ttl: '2h' }, needs: ['update', 'sudo'] },
    { method: 'DELETE', path: 'sys/auth/jwt', needs: ['delete', 'sudo'] },
    { method: 'LIST', path: 'sys/policies/acl', needs: ['list'], acl: 'sys/policies/acl/' },
    { method: 'PUT', path: 'sys/policies/acl/newpolicy', body: { policy: '' }, needs: ['create'] },
    { method: 'PUT', path: 'sys/policies/acl/existing', body: { policy: '' }, needs: ['update'] },
    { method: 'GET', path: 'sys/policies/acl/existing', needs: ['read'] },
    { method: 'DELETE', path: 'sys/policies/acl/existing', needs: ['delete'] },
    { method: 'GET', path: 'sys/policy', needs: ['read'] },
    { method: 'PUT', path: 'sys/policy/newlegacy', body: { rules: '' }, needs: ['create'] },
    { method: 'GET', path: 'sys/policy/existing', needs: ['read'] },
    { method: 'DELETE', path: 'sys/policy/existing', needs: ['delete'] },
    { method: 'POST', path: 'sys/capabilities-self', body: { paths: ['x'] }, needs: ['update'] },
    { method: 'POST', path: 'sys/capabilities', body: { token: ctx.token, paths: ['x'] }, needs: ['update'] },
    { method: 'POST', path: 'sys/capabilities-accessor', body: { accessor: ctx.accessor, paths: ['x'] }, needs: ['update'] },
    { method: 'PUT', path: 'sys/leases/lookup', body: { lease_id: ctx.lease }, needs: ['update'] },
    { method: 'LIST', path: 'sys/leases/lookup/test/creds', needs: ['list', 'sudo'], acl: 'sys/leases/lookup/test/creds/' },
    { method: 'PUT', path: 'sys/leases/renew', body: { lease_id: ctx.lease }, needs: ['update'] },
    { method: 'PUT', path: 'sys/renew', body: { lease_id: ctx.lease }, needs: ['update'] },
    { method: 'PUT', path: 'sys/leases/revoke', body: { lease_id: ctx.lease }, needs: ['update'] },
    { method: 'PUT', path: `sys/revoke/${ctx.lease}`, needs: ['update'] },
    { method: 'PUT', path: 'sys/leases/revoke-prefix/test', needs: ['update', 'sudo'] },
    { method: 'PUT', path: 'sys/revoke-prefix/test', needs: ['update', 'sudo'] },
    { method: 'PUT', path: 'sys/leases/revoke-force/test', needs: ['update', 'sudo'] },
    { method: 'PUT', path: 'sys/rotate', needs: ['update', 'sudo'] },
    { method: 'POST', path: 'sys/remount', body: { from: 'test', to: 'test-moved' }, needs: ['update', 'sudo'] },
    { method: 'GET', path: 'sys/remount/status/some-id', needs: ['read'] },
    { method: 'GET', path: 'sys/ha-status', needs: ['read'] },
    { method: 'LIST', path: 'sys/version-history', needs: ['list'], acl: 'sys/version-history/' },
    { method: 'PUT', path: 'sys/step-down', needs: ['update', 'sudo'] },
    { method: 'PUT', path: 'sys/seal', needs: ['update', 'sudo'] },
    { method: 'GET', path: 'sys/key-status', needs: ['read'] },
    { method: 'POST', path: 'auth/token/create', body: { policies: ['default'] }, needs: ['update'] },
    { method: 'POST', path: 'auth/token/create-orphan', body: { policies: ['default'] }, needs: ['update'] },
    { method: 'POST', path: 'auth/token/lookup', body: { token: ctx.token }, needs: ['update'] },
    { method: 'GET', path: 'auth/token/lookup-self', needs: ['read'] },
    { method: 'POST', path: 'auth/token/lookup-accessor', body: { accessor: ctx.accessor }, needs: ['update'] },
    { method: 'POST', path: 'auth/token/renew', body: { token: ctx.token }, needs: ['update'] },
    { method: 'POST', path: 'auth/token/renew-self', body: {}, needs: ['update'] },
    { method: 'POST', path: 'auth/token/renew-accessor', body: { accessor: ctx.accessor }, needs: ['update'] },
    { method: 'POST', path: 'auth/token/revoke', body: { token: ctx.token }, needs: ['update'] },
    { method: 'POST', path: 'auth/token/revoke-self', needs: ['update'] },
    { method: 'POST', path: 'auth/token/revoke-accessor', body: { accessor: ctx.accessor }, needs: ['update'] },
    { method: 'POST', path: 'auth/token/revoke-orphan', body: { token: ctx.token }, needs: ['update', 'sudo'] },
    { method: 'LIST', path: 'auth/token/accessors', needs: ['list', 'sudo'], acl: 'auth/token/accessors/' },
    { method: 'POST', path: 'auth/jwt/config', body: { jwt_validation_pubkeys: [ctx.pem] }, needs: ['update'] },
    { method: 'GET', path: 'auth/jwt/config', needs: ['read'] },
    { method: 'POST', path: 'auth/jwt/role/newrole', body: role, needs: ['create'] },
    { method: 'POST', path: 'auth/jwt/role/existing', body: role, needs: ['update'] },
    { method: 'GET', path: 'auth/jwt/role/existing', needs: ['read'] },
    { method: 'DELETE', path: 'auth/jwt/role/existing', needs: ['delete'] },
    { method: 'LIST', path: 'auth/jwt/role', needs: ['list'], acl: 'auth/jwt/role/' },
    { method: 'POST', path: 'identity/group', body: { name: 'newgroup' }, needs: ['update'] },
    { method: 'LIST', path: 'identity/group/id', needs: ['list'], acl: 'identity/group/id/' },
    { method: 'GET', path: `identity/group/id/${ctx.group}`, needs: ['read'] },
    { method: 'POST', path: `identity/group/id/${ctx.group}`, body: { policies: ['x'] }, needs: ['update'] },
    { method: 'LIST', path: 'identity/group/name', needs: ['list'], acl: 'identity/group/name/' },
    { method: 'POST', path: 'identity/group/name/newname', body: {}, needs: ['create'] },
    { method: 'POST', path: 'identity/group/name/existing', body: { policies: ['y'] }, needs: ['update'] },
    { method: 'GET', path: 'identity/group/name/existing', needs: ['read'] },
    { method: 'POST', path: 'identity/group-alias', body: { name: 'g2', mount_accessor: ctx.auth, canonical_id: ctx.group }, needs: ['update'] },
    { method: 'LIST', path: 'identity/group-alias/id', needs: ['list'], acl: 'identity/group-alias/id/' },
    { method: 'GET', path: `identity/group-alias/id/${ctx.alias}`, needs: ['read'] },
    { method: 'POST', path: `identity/group-alias/id/${ctx.alias}`, body: { name: 'g3' }, needs: ['update'] },
    { method: 'DELETE', path: `identity/group-alias/id/${ctx.alias}`, needs: ['delete'] },
    { method: 'DELETE', path: `identity/group/id/${ctx.group}`, needs: ['delete'] },
    { method: 'DELETE', path: 'identity/group/name/existing', needs: ['delete'] },
    { method: 'GET', path: 'test/creds/app', needs: ['read'] },
    { method: 'PUT', path: 'test/items/newitem', body: { value: 'x' }, needs: ['create'] },
    { method: 'PUT', path: 'test/items/existing', body: { value: 'x' }, needs: ['update'] },
    { method: 'GET', path: 'test/items/existing', needs: ['read'] },
    { method: 'DELETE', path: 'test/items/existing', needs: ['delete'] },
    { method: 'LIST', path: 'test/items', needs: ['list'], acl: 'test/items/' },
  ];
}

const policyText = (path: string, caps: readonly Capability[]) =>
  `path "${path}" { capabilities = [${caps.map((c) => `"${c}"`).join(', ')}] }\n`;

describe.each(STORAGE_KINDS)('permission matrix (%s)', (kind) => {
  let s: SecretsTestServer;
  let list: Endpoint[];
  beforeAll(async () => {
    s = await startSecrets(kind);
    await mountTestEngine(s.engine, s.v);
    await s.v('PUT', 'sys/policies/acl/existing', { policy: '' });
    await s.v('PUT', 'test/items/existing', { value: 'v' });
    const lease = (await s.v('GET', 'test/creds/app')).body.lease_id;
    const other = (await s.v('POST', 'auth/token/create', { ttl: '1h' })).body.auth;
    const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    await s.v('POST', 'auth/jwt/config', { jwt_validation_pubkeys: [pem] });
    await s.v('POST', 'auth/jwt/role/existing', { role_type: 'jwt', user_claim: 'sub', bound_subject: 's' });
    const group = (await s.v('POST', 'identity/group', { name: 'existing', type: 'external' })).body.data.id;
    // The token store's accessor: the matrix disables auth/jwt, which would take its aliases along.
    const auth = (await s.v('GET', 'sys/auth')).body.data['token/'].accessor;
    const alias = (await s.v('POST', 'identity/group-alias', { name: 'g1', mount_accessor: auth, canonical_id: group })).body.data.id;
    list = endpoints({ lease, token: other.client_token, accessor: other.accessor, pem, group, alias, auth });
  });
  afterAll(() => s.close());

  /** Everything the secrets service stores, to prove a refused request changed nothing. */
  const snapshot = () =>
    s.engine.storage.tx(
      async (db) => {
        const out: unknown[] = [];
        for (const table of ['secrets_keyring', 'secrets_entries', 'secrets_mounts', 'secrets_policies', 'secrets_tokens', 'secrets_leases']) {
          out.push(await db.all(`SELECT * FROM ${table} ORDER BY 1`));
        }
        return JSON.stringify(out);
      },
      { readOnly: true },
    );

  const expectRefused = async (e: Endpoint, token: string, why: string) => {
    const before = await snapshot();
    const res = await s.v(e.method, e.path, e.body, token);
    if (res.status !== 403) throw new Error(`${e.method} ${e.path} (${why}): expected 403, got ${res.status} ${res.text}`);
    expect(res.body).toEqual({ errors: ['permission denied'] });
    expect(await snapshot()).toBe(before);
  };

  test('a token without a needed capability gets 403 and nothing changes', async () => {
    for (const e of list) {
      const aclPath = e.acl ?? e.path;
      for (const missing of e.needs) {
        // Everything everywhere, and on this very path everything but the missing capability.
        const caps = ALL.filter((c) => c !== missing);
        const token = await s.tokenWith(policyText('*', ALL) + policyText(aclPath, caps));
        await expectRefused(e, token, `without ${missing}`);
      }
      await expectRefused(e, await s.tokenWith(policyText(aclPath, ['deny']) + policyText('*', ALL)), 'deny');
    }
  });

  test('expired, revoked, used-up and wrongly bound tokens get 403 everywhere', async () => {
    const everything = policyText('*', ALL);
    const expired = await s.tokenWith(everything, { ttl: 60 });
    const revoked = await s.tokenWith(everything);
    await s.v('POST', 'auth/token/revoke', { token: revoked });
    const usedUp = await s.tokenWith(everything, { num_uses: 1 });
    expect((await s.v('GET', 'auth/token/lookup-self', undefined, usedUp)).status).toBe(200);
    const elsewhere = await s.tokenWith(everything, { bound_cidrs: ['203.0.113.0/24'] });
    s.clock.advance(61_000);
    for (const e of list) {
      for (const [why, token] of Object.entries({ expired, revoked, usedUp, elsewhere })) await expectRefused(e, token, why);
    }
  });

  test('with every needed capability, no endpoint refuses', async () => {
    for (const e of list) {
      const token = await s.tokenWith(policyText(e.acl ?? e.path, e.needs) + policyText('sys/leases/lookup', ['update']), { ttl: '1h' });
      const res = await s.v(e.method, e.path, e.body, token);
      if (res.status === 403) throw new Error(`${e.method} ${e.path}: refused with ${e.needs.join('+')}: ${res.text}`);
    }
  });
});
