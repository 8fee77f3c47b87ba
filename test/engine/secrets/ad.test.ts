import { startSecrets, SecretsTestServer } from './helpers';
import { rfc3339 } from '../../../src/engine/secrets/core/durations';
import { COMPLEXITY_PREFIX } from '../../../src/engine/secrets/engines/directory/rotation';
import { secretsCore } from '../../../src/engine/secrets/service';
import { storedText } from '../../helpers/raw-db';
import { adAccount, haveSlapd, openldapAccount, Slapd, startSlapd } from '../../helpers/slapd';
import { STORAGE_KINDS } from '../../helpers/storage';

const HOUR = 3_600_000;
const run = haveSlapd() ? describe : describe.skip;

/** The directory engine against a private slapd: passwords observed with ldapwhoami. */
run('directory accounts engine (ad)', () => {
  let ldap: Slapd;
  const people = () => `ou=people,${ldap.suffix}`;
  const uidDn = (uid: string) => `uid=${uid},${people()}`;
  let n = 0;
  /** A fresh OpenLDAP account with a known first password; returns its uid. */
  const account = async () => {
    const uid = `svc${++n}`;
    await ldap.add(openldapAccount(ldap.suffix, uid, `initial-${uid}`));
    return uid;
  };
  const config = (extra: Record<string, unknown> = {}) => ({
    url: ldap.url,
    binddn: ldap.managerDn,
    bindpass: ldap.managerPw,
    userdn: people(),
    schema: 'openldap',
    ...extra,
  });

  beforeAll(async () => {
    ldap = await startSlapd();
  });
  afterAll(() => ldap?.stop());

  describe.each(STORAGE_KINDS)('on %s', (kind) => {
    let s: SecretsTestServer;
    beforeAll(async () => {
      s = await startSecrets(kind);
      expect((await s.v('POST', 'ad/config', config({ length: 20, ttl: 3600 }))).status).toBe(204);
    });
    afterAll(() => s.close());

    test('config: defaults, no bind password on read, checks naming the field', async () => {
      await s.v('POST', 'sys/mounts/adc', { type: 'ad' });
      expect((await s.v('GET', 'adc/config')).status).toBe(404);
      // Credentials are not tried when stored (spec): a wrong password is accepted.
      expect((await s.v('POST', 'adc/config', { binddn: 'cn=x', bindpass: 'wrong' })).status).toBe(204);
      const read = await s.v('GET', 'adc/config');
      expect(read.body.data).toEqual({
        ttl: 32 * 24 * 3600,
        max_ttl: 32 * 24 * 3600,
        length: 64,
        formatter: '',
        url: 'ldap://127.0.0.1',
        starttls: false,
        insecure_tls: false,
        certificate: '',
        binddn: 'cn=x',
        userdn: '',
        upndomain: '',
        last_rotation_tolerance: 5,
        tls_min_version: 'tls12',
        tls_max_version: 'tls12',
      });
      expect(read.text).not.toContain('wrong');
      // Hangar's own settings (not the public plugin's) read back when a write gave them.
      expect((await s.v('POST', 'adc/config', { binddn: 'cn=x', bindpass: 'wrong', request_timeout: 30, schema: 'openldap' })).status).toBe(204);
      expect((await s.v('GET', 'adc/config')).body.data).toMatchObject({ request_timeout: 30, schema: 'openldap' });
      expect((await s.v('POST', 'adc/config', { binddn: 'cn=x', bindpass: 'wrong' })).status).toBe(204);
      const bad: Array<[Record<string, unknown>, RegExp]> = [
        [{ bindpass: 'x' }, /binddn is required/],
        [{ binddn: 'cn=x' }, /bindpass is required/],
        [{ binddn: 'cn=x', bindpass: 'x', length: 13 }, /length: must be at least 14/],
        [{ binddn: 'cn=x', bindpass: 'x', formatter: 'a{{PASSWORD}}b{{PASSWORD}}' }, /formatter: must contain \{\{PASSWORD\}\} exactly once/],
        [{ binddn: 'cn=x', bindpass: 'x', formatter: 'no placeholder' }, /formatter/],
        [{ binddn: 'cn=x', bindpass: 'x', url: 'http://x' }, /url: "http:\/\/x" must be an ldap/],
        [{ binddn: 'cn=x', bindpass: 'x', ttl: 'soon' }, /ttl: "soon" is not a duration/],
        [{ binddn: 'cn=x', bindpass: 'x', ttl: 7200, max_ttl: 3600 }, /ttl \(7200\) must not exceed max_ttl/],
        [{ binddn: 'cn=x', bindpass: 'x', certificate: 'not a pem' }, /certificate: not a PEM/],
        [{ binddn: 'cn=x', bindpass: 'x', schema: 'novell' }, /schema: must be ad/],
        [{ binddn: 'cn=x', bindpass: 'x', starttls: 'maybe' }, /starttls/],
      ];
      for (const [body, message] of bad) {
        const res = await s.v('POST', 'adc/config', body);
        expect([res.status, res.body.errors.join()]).toEqual([400, expect.stringMatching(message)]);
      }
      expect((await s.v('DELETE', 'adc/config')).status).toBe(204);
      expect((await s.v('GET', 'adc/config')).status).toBe(404);
    });

    test('roles: the account must exist; creds rotate lazily after ttl, proven by binds', async () => {
      const uid = await account();
      // An empty list is a 404, as the public service answers it.
      await s.v('POST', 'sys/mounts/adempty', { type: 'ad' });
      expect((await s.v('LIST', 'adempty/roles')).status).toBe(404);
      expect((await s.v('LIST', 'adempty/library')).status).toBe(404);
      const missing = await s.v('POST', 'ad/roles/ghost', { service_account_name: 'nobody-here' });
      expect([missing.status, missing.body.errors[0]]).toEqual([400, expect.stringMatching(/service_account_name: "nobody-here" was not found/)]);
      expect((await s.v('POST', 'ad/roles/bad', {})).body.errors[0]).toMatch(/service_account_name is required/);
      expect((await s.v('POST', 'ad/roles/app', { service_account_name: uid, ttl: '30m' })).status).toBe(204);
      expect((await s.v('LIST', 'ad/roles')).body.data.keys).toContain('app');
      expect((await s.v('GET', 'ad/roles/app')).body.data).toEqual({ service_account_name: uid, ttl: 1800 });

      const first = await s.v('GET', 'ad/creds/app');
      expect(first.status).toBe(200);
      const pw1 = first.body.data.current_password as string;
      expect(first.body.data).toEqual({ username: uid, current_password: pw1 });
      expect(pw1).toHaveLength(20);
      expect(pw1.startsWith(COMPLEXITY_PREFIX)).toBe(true);
      expect(await ldap.canBind(uidDn(uid), pw1)).toBe(true);
      expect(await ldap.canBind(uidDn(uid), `initial-${uid}`)).toBe(false);
      const role = (await s.v('GET', 'ad/roles/app')).body.data;
      expect(role).toMatchObject({ last_vault_rotation: expect.stringMatching(/^2026-.*Z$/), password_last_set: expect.stringMatching(/Z$/) });

      // Within ttl: the same password.
      s.clock.advance(29 * 60_000);
      expect((await s.v('GET', 'ad/creds/app')).body.data.current_password).toBe(pw1);
      // After ttl: rotated, the previous one as last_password.
      s.clock.advance(2 * 60_000);
      const second = (await s.v('GET', 'ad/creds/app')).body.data;
      expect(second.last_password).toBe(pw1);
      expect(second.current_password).not.toBe(pw1);
      expect(await ldap.canBind(uidDn(uid), second.current_password)).toBe(true);
      expect(await ldap.canBind(uidDn(uid), pw1)).toBe(false);
      // rotate-role: a new password now, within ttl.
      expect((await s.v('POST', 'ad/rotate-role/app', {})).status).toBe(204);
      const third = (await s.v('GET', 'ad/creds/app')).body.data;
      expect(third.last_password).toBe(second.current_password);
      expect(third.current_password).not.toBe(second.current_password);
      expect(await ldap.canBind(uidDn(uid), third.current_password)).toBe(true);
      expect(await ldap.canBind(uidDn(uid), second.current_password)).toBe(false);
      expect((await s.v('POST', 'ad/rotate-role/ghost', {})).status).toBe(404);
      // Sealed by the barrier: a copy of the database shows neither password nor the bind password.
      const stored = await storedText(s.engine.storage, s.dataDir);
      for (const secret of [third.current_password, second.current_password, pw1, ldap.managerPw]) expect(stored).not.toContain(secret);

      // A role ttl above the config's max_ttl is refused.
      const tooLong = await s.v('POST', 'ad/roles/app', { ttl: '800h' });
      expect([tooLong.status, tooLong.body.errors[0]]).toEqual([400, expect.stringMatching(/ttl \(2880000\) must not exceed the config's max_ttl \(2764800\)/)]);
      expect((await s.v('DELETE', 'ad/roles/app')).status).toBe(204);
      expect((await s.v('GET', 'ad/roles/app')).status).toBe(404);
      expect((await s.v('GET', 'ad/creds/app')).status).toBe(404);
    });

    test('the formatter shapes passwords', async () => {
      await s.v('POST', 'sys/mounts/adf', { type: 'ad' });
      await s.v('POST', 'adf/config', config({ length: 24, formatter: 'pre-{{PASSWORD}}!' }));
      const uid = await account();
      await s.v('POST', 'adf/roles/f', { service_account_name: uid });
      const pw = (await s.v('GET', 'adf/creds/f')).body.data.current_password as string;
      expect(pw).toMatch(/^pre-[A-Za-z0-9]{19}!$/);
      expect(await ldap.canBind(uidDn(uid), pw)).toBe(true);
    });

    test('Active Directory dialect: unicodePwd written, pwdLastSet beyond the tolerance re-rotates', async () => {
      await s.v('POST', 'sys/mounts/msad', { type: 'ad' });
      await s.v('POST', 'msad/config', config({ schema: 'ad', upndomain: 'example.com', length: 16 }));
      const sam = `adsvc${++n}`;
      const dn = `cn=${sam},${people()}`;
      await ldap.add(adAccount(ldap.suffix, sam, 'example.com'));
      // A bare name gets @upndomain; the UPN and the sAMAccountName both find the account.
      expect((await s.v('POST', 'msad/roles/r', { service_account_name: sam })).status).toBe(204);
      expect((await s.v('POST', 'msad/roles/r2', { service_account_name: `${sam}@example.com` })).status).toBe(204);
      const unicode = async () => Buffer.from((await ldap.attribute(dn, 'unicodePwd')) ?? '', 'latin1').toString('utf16le');
      const pw1 = (await s.v('GET', 'msad/creds/r')).body.data.current_password;
      expect(await unicode()).toBe(`"${pw1}"`);
      // Active Directory sets pwdLastSet itself; this slapd does not, so the test plays its part.
      const filetime = (ms: number) => (BigInt(ms) * 10_000n + 116_444_736_000_000_000n).toString();
      const t = Date.now();
      await ldap.modify(`dn: ${dn}\nchangetype: modify\nreplace: pwdLastSet\npwdLastSet: ${filetime(t)}\n`);
      s.clock.advance(33 * 24 * HOUR);
      const pw2 = (await s.v('GET', 'msad/creds/r')).body.data; // ttl passed: rotated, pwdLastSet recorded
      expect(pw2.last_password).toBe(pw1);
      expect((await s.v('GET', 'msad/creds/r')).body.data.current_password).toBe(pw2.current_password);
      expect((await s.v('GET', 'msad/roles/r')).body.data.password_last_set).toBe(rfc3339(t));
      // Someone else set the password later than Hangar's rotation, beyond last_rotation_tolerance:
      // the next read rotates although ttl has not passed.
      await ldap.modify(`dn: ${dn}\nchangetype: modify\nreplace: pwdLastSet\npwdLastSet: ${filetime(t + 60_000)}\n`);
      const pw3 = (await s.v('GET', 'msad/creds/r')).body.data;
      expect(pw3.current_password).not.toBe(pw2.current_password);
      expect(pw3.last_password).toBe(pw2.current_password);
      expect(await unicode()).toBe(`"${pw3.current_password}"`);
    });

    test('OpenLDAP dialect: a password changed elsewhere (pwdChangedTime) re-rotates', async () => {
      const uid = await account();
      await s.v('POST', 'ad/roles/tol', { service_account_name: uid });
      const pw1 = (await s.v('GET', 'ad/creds/tol')).body.data.current_password;
      expect(await ldap.attribute(uidDn(uid), 'pwdChangedTime')).toMatch(/^\d{14}Z$/);
      // ppolicy's pwdChangedTime is not user-modifiable: the relax control moves it a minute ahead.
      const later = new Date(Date.now() + 60_000).toISOString().replace(/[-:T]/g, '').slice(0, 14) + 'Z';
      await ldap.modify(`dn: ${uidDn(uid)}\nchangetype: modify\nreplace: pwdChangedTime\npwdChangedTime: ${later}\n`, ['-e', 'relax']);
      const next = (await s.v('GET', 'ad/creds/tol')).body.data;
      expect(next.last_password).toBe(pw1);
      expect(await ldap.canBind(uidDn(uid), next.current_password)).toBe(true);
    });

    test('library: create rules, check-out, enforced check-in, status, expiry with rotation', async () => {
      const [a, b, c] = [await account(), await account(), await account()];
      await s.v('POST', 'ad/roles/taken', { service_account_name: c });
      expect((await s.v('POST', 'ad/library/set1', { service_account_names: [a, 'ghost'] })).body.errors[0]).toMatch(/"ghost" was not found/);
      expect((await s.v('POST', 'ad/library/set1', { service_account_names: [a, c] })).body.errors[0]).toMatch(/service account of role "taken"/);
      expect((await s.v('POST', 'ad/library/set1', {})).body.errors[0]).toMatch(/service_account_names is required/);
      expect((await s.v('POST', 'ad/library/set1', { service_account_names: `${a},${b}`, ttl: '1h', max_ttl: '2h' })).status).toBe(204);
      // Hangar set passwords only it knows: the first ones no longer bind.
      expect(await ldap.canBind(uidDn(a), `initial-${a}`)).toBe(false);
      expect((await s.v('POST', 'ad/library/set2', { service_account_names: [b] })).body.errors[0]).toMatch(/"svc\d+" already belongs to library set "set1"/);
      expect((await s.v('POST', 'ad/roles/r', { service_account_name: a })).body.errors[0]).toMatch(/belongs to library set "set1"/);
      expect((await s.v('POST', 'ad/roles/second', { service_account_name: c })).body.errors[0]).toMatch(/is the account of role "taken"/);
      expect((await s.v('GET', 'ad/library/set1')).body.data).toEqual({ service_account_names: [a, b], ttl: 3600, max_ttl: 7200, disable_check_in_enforcement: false });
      expect((await s.v('LIST', 'ad/library')).body.data.keys).toEqual(['set1']);
      expect((await s.v('GET', 'ad/library/set1/status')).body.data).toEqual({ [a]: { available: true }, [b]: { available: true } });

      const policy = 'path "ad/library/set1/*" { capabilities = ["update", "read"] }\npath "sys/leases/*" { capabilities = ["update"] }';
      const alice = await s.tokenWith(policy);
      const bob = await s.tokenWith(policy);
      const out1 = await s.v('POST', 'ad/library/set1/check-out', { ttl: '3h' }, alice);
      expect(out1.status).toBe(200);
      // A ttl above the set's is reduced to it.
      expect(out1.body).toMatchObject({ renewable: true, lease_duration: 3600, lease_id: expect.stringMatching(/^ad\/library\/set1\/check-out\//) });
      const lent1 = out1.body.data as { service_account_name: string; password: string };
      expect(await ldap.canBind(uidDn(lent1.service_account_name), lent1.password)).toBe(true);
      const status = (await s.v('GET', 'ad/library/set1/status')).body.data;
      expect(status[lent1.service_account_name]).toEqual({ available: false, borrower_client_token: expect.any(String) });
      expect(JSON.stringify(status)).not.toContain(alice);

      const out2 = await s.v('POST', 'ad/library/set1/check-out', {}, alice);
      const lent2 = out2.body.data as { service_account_name: string; password: string };
      expect(out2.body.lease_duration).toBe(3600);
      const none = await s.v('POST', 'ad/library/set1/check-out', {}, bob);
      expect([none.status, none.body.errors[0]]).toEqual([400, 'No service accounts available for check-out.']);

      // Enforcement: bob may not check in alice's account; alice must name one of her two.
      const notHis = await s.v('POST', 'ad/library/set1/check-in', { service_account_names: [lent1.service_account_name] }, bob);
      expect([notHis.status, notHis.body.errors[0]]).toEqual([400, `"${lent1.service_account_name}" can't be checked in because it wasn't checked out by the caller`]);
      expect((await s.v('POST', 'ad/library/set1/check-in', {}, alice)).body.errors[0]).toMatch(/when multiple service accounts are checked out/);
      // Bob holds none: checking in without names is a success with nothing.
      expect((await s.v('POST', 'ad/library/set1/check-in', {}, bob)).body.data).toEqual({ check_ins: [] });
      const back = await s.v('POST', 'ad/library/set1/check-in', { service_account_names: lent1.service_account_name }, alice);
      expect(back.body.data).toEqual({ check_ins: [lent1.service_account_name] });
      // Check-in rotates: the borrowed password is dead.
      expect(await ldap.canBind(uidDn(lent1.service_account_name), lent1.password)).toBe(false);
      const again = await s.v('POST', 'ad/library/set1/check-in', { service_account_names: [lent1.service_account_name] }, alice);
      expect(again.body.data).toEqual({ check_ins: [] });
      // The checked-in lease cannot be renewed.
      expect((await s.v('PUT', 'sys/leases/renew', { lease_id: out1.body.lease_id }, alice)).body.errors[0]).toMatch(/checked in/);

      // Renewal up to max_ttl (2h).
      s.clock.advance(HOUR / 2);
      const renewed = await s.v('PUT', 'sys/leases/renew', { lease_id: out2.body.lease_id, increment: 7200 }, alice);
      expect(renewed.body.lease_duration).toBe(5400);

      // Expiry checks the account in and rotates its password.
      s.clock.advance(2 * HOUR);
      await s.engine.scheduler.runOnce();
      expect((await s.v('GET', 'ad/library/set1/status')).body.data[lent2.service_account_name]).toEqual({ available: true });
      expect(await ldap.canBind(uidDn(lent2.service_account_name), lent2.password)).toBe(false);
      const fresh = await s.v('POST', 'ad/library/set1/check-out', {}, bob);
      expect(await ldap.canBind(uidDn(fresh.body.data.service_account_name), fresh.body.data.password)).toBe(true);

      // The manage path checks in anyone's account.
      const forced = await s.v('POST', 'ad/library/manage/set1/check-in', { service_account_names: [fresh.body.data.service_account_name] });
      expect(forced.body.data).toEqual({ check_ins: [fresh.body.data.service_account_name] });
      // A policy without the manage path may not use it.
      expect((await s.v('POST', 'ad/library/manage/set1/check-in', {}, alice)).status).toBe(403);
      expect((await s.v('POST', 'ad/library/set1/check-in', { service_account_names: ['stranger'] }, alice)).body.errors[0]).toMatch(/"stranger" is not in library set "set1"/);

      expect((await s.v('DELETE', 'ad/library/set1')).status).toBe(204);
      expect((await s.v('GET', 'ad/library/set1')).status).toBe(404);
      // Its accounts are free for another set.
      expect((await s.v('POST', 'ad/library/set3', { service_account_names: [a] })).status).toBe(204);
    });

    test('library: enforcement disabled, unlimited ttl, removing a checked-out account', async () => {
      const [a, b] = [await account(), await account()];
      await s.v('POST', 'ad/library/open', { service_account_names: [a, b], ttl: 0, max_ttl: 0, disable_check_in_enforcement: true });
      const alice = await s.tokenWith('path "ad/library/open/*" { capabilities = ["update"] }');
      const bob = await s.tokenWith('path "ad/library/open/*" { capabilities = ["update"] }');
      const out = await s.v('POST', 'ad/library/open/check-out', { ttl: '100h' }, alice);
      expect(out.body.lease_duration).toBe(100 * 3600);
      const name = out.body.data.service_account_name;
      const removing = await s.v('POST', 'ad/library/open', { service_account_names: [name === a ? b : a] });
      expect([removing.status, removing.body.errors[0]]).toEqual([400, expect.stringMatching(/is checked out; check it in before removing/)]);
      const deleting = await s.v('DELETE', 'ad/library/open');
      expect([deleting.status, deleting.body.errors[0]]).toEqual([400, `"${name}" can't be deleted because it is currently checked out; check it in first`]);
      // Enforcement is off: bob checks in alice's account, also without naming it.
      expect((await s.v('POST', 'ad/library/open/check-in', {}, bob)).body.data).toEqual({ check_ins: [name] });
      // Set names are lowercased, as the public service does.
      expect((await s.v('GET', 'ad/library/OPEN/status')).body.data[name]).toEqual({ available: true });
      // Concurrent check-outs never lend one account twice.
      const racing = await Promise.all([1, 2, 3].map(() => s.v('POST', 'ad/library/open/check-out', {}, alice)));
      expect(racing.map((r) => r.status).sort()).toEqual([200, 200, 400]);
      expect(new Set(racing.filter((r) => r.status === 200).map((r) => r.body.data.service_account_name))).toEqual(new Set([a, b]));
      await s.v('POST', 'ad/library/manage/open/check-in', { service_account_names: [a, b] });
      expect((await s.v('DELETE', 'ad/library/open')).status).toBe(204);
    });

    test('permissions: a token without the path gets 403 everywhere', async () => {
      const nobody = await s.tokenWith('path "ad/roles/" { capabilities = ["list"] }');
      for (const [method, path] of [
        ['GET', 'ad/config'],
        ['POST', 'ad/config'],
        ['GET', 'ad/creds/app'],
        ['POST', 'ad/roles/x'],
        ['POST', 'ad/library/x/check-out'],
        ['GET', 'ad/library/x/status'],
        ['GET', 'ad/rotate-root'],
        ['POST', 'ad/rotate-role/app'],
      ]) {
        expect([path, (await s.v(method, path, method === 'POST' ? {} : undefined, nobody)).status]).toEqual([path, 403]);
      }
      expect((await s.v('LIST', 'ad/roles', undefined, nobody)).status).toBe(200);
    });

    test('TLS: StartTLS and ldaps with the configured CA; URLs tried in order; failures are 502s', async () => {
      await s.v('POST', 'sys/mounts/adtls', { type: 'ad' });
      const uid = await account();
      const dead = 'ldap://127.0.0.1:1';
      await s.v('POST', 'adtls/config', config({ url: `${dead},${ldap.url}`, starttls: true, certificate: ldap.caPem }));
      expect((await s.v('POST', 'adtls/roles/t', { service_account_name: uid })).status).toBe(204);
      await s.v('POST', 'adtls/config', config({ url: ldap.ldapsUrl, certificate: ldap.caPem, tls_max_version: 'tls13' }));
      expect((await s.v('GET', 'adtls/creds/t')).status).toBe(200);
      // Without the CA the server's certificate is not trusted ...
      await s.v('POST', 'adtls/config', config({ url: ldap.url, starttls: true }));
      const untrusted = await s.v('GET', 'adtls/creds/t');
      expect([untrusted.status, untrusted.body.errors[0]]).toEqual([502, expect.stringMatching(/^directory: /)]);
      // ... unless insecure_tls says so.
      await s.v('POST', 'adtls/config', config({ url: ldap.url, starttls: true, insecure_tls: true }));
      expect((await s.v('GET', 'adtls/creds/t')).status).toBe(200);
      // A wrong bind password: 502, never the password in the message.
      await s.v('POST', 'adtls/config', config({ bindpass: 'not-the-password' }));
      const wrong = await s.v('GET', 'adtls/creds/t');
      expect(wrong.status).toBe(502);
      expect(wrong.text).not.toContain('not-the-password');
    });

    test('bad input: names and fields are named, never a 500', async () => {
      expect((await s.v('POST', 'ad/roles/bad%20name', { service_account_name: 'x' })).body.errors[0]).toMatch(/role name "bad name" is invalid/);
      expect((await s.v('POST', 'ad/roles/x', { service_account_name: 5 })).body.errors[0]).toMatch(/service_account_name/);
      expect((await s.v('POST', 'ad/roles/x', { service_account_name: 'a\u0000b' })).body.errors[0]).toMatch(/service_account_name: .* is not a service account name/);
      expect((await s.v('POST', 'ad/library/x', { service_account_names: 'a', ttl: 'later' })).body.errors[0]).toMatch(/ttl: "later" is not a duration/);
      expect((await s.v('POST', 'ad/library/x', { service_account_names: 'a,a' })).body.errors[0]).toMatch(/listed twice/);
      expect((await s.v('POST', 'ad/library/x', { service_account_names: 'a', ttl: 7200, max_ttl: 3600 })).body.errors[0]).toMatch(/ttl \(7200\) must not exceed max_ttl/);
      expect((await s.v('POST', 'ad/library/manage', { service_account_names: 'a' })).status).toBe(400);
      expect((await s.v('POST', 'ad/library/nope/check-out', {})).body.errors).toEqual(['"nope" doesn\'t exist']);
      expect((await s.v('GET', 'ad/library/nope/status')).status).toBe(400);
      expect((await s.v('GET', 'ad/library/nope')).status).toBe(404);
      // A name full of filter syntax matches nothing (values are escaped).
      expect((await s.v('POST', 'ad/roles/inj', { service_account_name: '*)(uid=*' })).body.errors[0]).toMatch(/was not found/);
    });

    test('rotate-root: a bind password only Hangar knows, the engine keeps working', async () => {
      await s.v('POST', 'sys/mounts/adroot', { type: 'ad' });
      // Its own manager, so the other tests keep theirs.
      const dn = `uid=manager${++n},ou=system,${ldap.suffix}`;
      await ldap.add(`dn: ${dn}\nobjectClass: inetOrgPerson\nuid: manager${n}\ncn: m\nsn: m\nuserPassword: first-manager-pw\n\n`);
      await s.v('POST', 'adroot/config', config({ binddn: dn, bindpass: 'first-manager-pw' }));
      expect((await s.v('GET', 'adroot/rotate-root')).status).toBe(204);
      expect(await ldap.canBind(dn, 'first-manager-pw')).toBe(false);
      expect((await s.v('GET', 'adroot/config')).text).not.toMatch(/bindpass/);
      const uid = await account();
      // The rotated password binds: the engine reads its own directory again (self-service change).
      expect((await s.v('POST', 'adroot/roles/r', { service_account_name: uid })).status).toBe(204);
      expect((await s.v('POST', 'adroot/rotate-root', {})).status).toBe(204);
      const first = (await s.v('GET', 'adroot/creds/r')).body.data.current_password;

      // A rotation in flight leaves its pending mark (sealed with the entry): a second call gets
      // 200 and a warning; a mark older than request_timeout (a crashed server's) blocks nothing
      // and makes the next credentials read rotate although ttl has not passed.
      const core = await secretsCore(s.engine);
      const mount = (await s.engine.storage.tx((db) => core.mounts.get(db, 'adroot/')))!;
      const mark = (key: string) =>
        core.context(mount).tx(async (store) => {
          const entry = await store.get<Record<string, unknown>>(key);
          await store.put(key, { ...entry, pending: { password: 'in-flight', startedAt: s.clock.now() } });
        });
      await mark('config');
      const busy = await s.v('GET', 'adroot/rotate-root');
      expect([busy.status, busy.body.warnings]).toEqual([200, ['a root credential rotation is already in progress']]);
      await mark('creds/r');
      expect((await s.v('GET', 'adroot/creds/r')).body.data.current_password).toBe(first);
      s.clock.advance(91_000);
      expect((await s.v('GET', 'adroot/rotate-root')).status).toBe(204);
      const next = (await s.v('GET', 'adroot/creds/r')).body.data;
      expect([next.last_password, next.current_password === first]).toEqual([first, false]);
      expect(await ldap.canBind(uidDn(uid), next.current_password)).toBe(true);
    });
  });
});
