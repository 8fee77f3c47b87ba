import { startSecrets, SecretsTestServer } from './helpers';
import { newKey, sign } from './jwt-helpers';
import { parseLdif } from '../../../src/engine/secrets/engines/directory/ldif';
import { storedText } from '../../helpers/raw-db';
import { adAccount, haveSlapd, openldapAccount, racfAccount, Slapd, startSlapd } from '../../helpers/slapd';
import { STORAGE_KINDS } from '../../helpers/storage';

const HOUR = 3_600_000;
const run = haveSlapd() ? describe : describe.skip;

/** The ldap engine's LDIF reader, alone. */
describe('LDIF change records', () => {
  test('add (with or without changetype), modify parts, delete, base64 and folded lines', () => {
    const records = parseLdif(
      [
        'version: 1',
        '# a comment',
        'dn: cn=a,dc=x',
        'objectClass: person',
        'objectClass: top',
        'description: folded',
        '  and continued',
        'cn:: YQ==',
        '',
        'dn: cn=a,dc=x',
        'changetype: modify',
        'replace: sn',
        'sn: b',
        '-',
        'delete: mail',
        '-',
        '',
        'dn: cn=b,dc=x',
        'changetype: delete',
      ].join('\n'),
    );
    expect(records).toEqual([
      {
        kind: 'add',
        dn: 'cn=a,dc=x',
        attributes: [
          { type: 'objectClass', values: ['person', 'top'] },
          { type: 'description', values: ['folded and continued'] },
          { type: 'cn', values: [Buffer.from('a')] },
        ],
      },
      {
        kind: 'modify',
        dn: 'cn=a,dc=x',
        changes: [
          { operation: 'replace', attribute: { type: 'sn', values: ['b'] } },
          { operation: 'delete', attribute: { type: 'mail', values: [] } },
        ],
      },
      { kind: 'delete', dn: 'cn=b,dc=x' },
    ]);
  });

  test('bad records say which line', () => {
    expect(() => parseLdif('cn: a')).toThrow(/line 1: a record starts with "dn:"/);
    expect(() => parseLdif('dn: cn=a\nchangetype: modrdn\nnewrdn: cn=b')).toThrow(/changetype "modrdn" is not supported/);
    expect(() => parseLdif('dn: cn=a\nchangetype: modify\nsn: b')).toThrow(/line 3: a modify part starts with/);
    expect(() => parseLdif('dn: cn=a\nnot a line')).toThrow(/line 2: expected "attribute: value"/);
  });
});

/** The ldap engine against a private slapd: passwords and entries observed with ldapwhoami and ldapsearch. */
run('ldap secrets engine', () => {
  let ldap: Slapd;
  const people = () => `ou=people,${ldap.suffix}`;
  const uidDn = (uid: string) => `uid=${uid},${people()}`;
  let n = 0;
  /** A fresh OpenLDAP account with a known first password; returns its uid. */
  const account = async () => {
    const uid = `lsvc${++n}`;
    await ldap.add(openldapAccount(ldap.suffix, uid, `initial-${uid}`));
    return uid;
  };
  const config = (extra: Record<string, unknown> = {}) => ({
    url: ldap.url,
    binddn: ldap.managerDn,
    bindpass: ldap.managerPw,
    userdn: people(),
    userattr: 'uid',
    ...extra,
  });
  const creationLdif = () =>
    [
      `dn: uid={{.Username}},${people()}`,
      'objectClass: inetOrgPerson',
      'uid: {{.Username}}',
      'cn: {{.Username}}',
      'sn: {{.RoleName}}',
      'description: until {{.ExpirationTime}}',
      'userPassword: {{.Password}}',
      '',
    ].join('\n');
  const deletionLdif = () => `dn: uid={{.Username}},${people()}\nchangetype: delete\n`;

  beforeAll(async () => {
    ldap = await startSlapd();
  });
  afterAll(() => ldap?.stop());

  describe.each(STORAGE_KINDS)('on %s', (kind) => {
    let s: SecretsTestServer;
    beforeAll(async () => {
      s = await startSecrets(kind);
      expect((await s.v('POST', 'sys/mounts/ldap', { type: 'ldap' })).status).toBe(204);
      expect((await s.v('POST', 'ldap/config', config())).status).toBe(204);
    });
    afterAll(() => s.close());

    test('config: every field of the public service with its default, merged updates, checks naming the field', async () => {
      // The public service's older name for the engine is a type too.
      expect((await s.v('POST', 'sys/mounts/oldldap', { type: 'openldap' })).status).toBe(204);
      expect((await s.v('GET', 'oldldap/config')).status).toBe(404);
      expect((await s.v('POST', 'oldldap/config', { binddn: 'cn=x', bindpass: 'FAKEXSECRET-bind', url: 'ldaps://dir.example' })).status).toBe(204);
      const read = await s.v('GET', 'oldldap/config');
      expect(read.body.data).toEqual({
        anonymous_group_search: false,
        binddn: 'cn=x',
        case_sensitive_names: false,
        certificate: '',
        connection_timeout: 30,
        credential_type: 'password',
        deny_null_bind: true,
        dereference_aliases: 'never',
        disable_automated_rotation: false,
        discoverdn: false,
        enable_samaccountname_login: false,
        groupattr: 'cn',
        groupdn: '',
        groupfilter: '(|(memberUid={{.Username}})(member={{.UserDN}})(uniqueMember={{.UserDN}}))',
        insecure_tls: false,
        max_page_size: 0,
        request_timeout: 90,
        rotation_period: 0,
        rotation_schedule: '',
        rotation_window: 0,
        schema: 'openldap',
        skip_static_role_import_rotation: false,
        starttls: false,
        tls_max_version: 'tls12',
        tls_min_version: 'tls12',
        upndomain: '',
        url: 'ldaps://dir.example',
        use_token_groups: false,
        userattr: 'cn',
        userdn: '',
        userfilter: '({{.UserAttr}}={{.Username}})',
        username_as_alias: false,
      });
      expect(read.text).not.toContain('FAKEXSECRET');
      // An update changes what it names and keeps the rest (the bind password included: providers send it only when it changes).
      expect((await s.v('POST', 'oldldap/config', { userdn: 'ou=x', password_policy: 'nope', schema: 'ad', groupdn: 'ou=g' })).status).toBe(204);
      expect((await s.v('GET', 'oldldap/config')).body.data).toMatchObject({
        binddn: 'cn=x',
        url: 'ldaps://dir.example',
        userdn: 'ou=x',
        schema: 'ad',
        userattr: 'cn',
        password_policy: 'nope',
        groupdn: 'ou=g',
      });
      // As the public plugin, credential_type (and length) are not kept from an earlier write.
      expect((await s.v('POST', 'oldldap/config', { credential_type: 'phrase' })).status).toBe(204);
      expect((await s.v('GET', 'oldldap/config')).body.data.credential_type).toBe('phrase');
      expect((await s.v('POST', 'oldldap/config', { userdn: 'ou=y' })).status).toBe(204);
      expect((await s.v('GET', 'oldldap/config')).body.data).toMatchObject({ credential_type: 'password', userdn: 'ou=y', password_policy: 'nope' });
      // On creation the user attribute follows the schema.
      await s.v('POST', 'sys/mounts/adldap', { type: 'ldap' });
      await s.v('POST', 'adldap/config', { binddn: 'cn=x', bindpass: 'x', schema: 'ad' });
      expect((await s.v('GET', 'adldap/config')).body.data.userattr).toBe('userPrincipalName');
      const bad: Array<[Record<string, unknown>, RegExp]> = [
        [{ schema: 'novell' }, /schema: must be openldap, ad or racf/],
        [{ url: 'http://x' }, /url: "http:\/\/x" must be an ldap/],
        [{ length: 20 }, /cannot set both 'password_policy' and 'length'/],
        [{ tls_min_version: 'tls13', tls_max_version: 'tls12' }, /tls_min_version \(tls13\) must not be above/],
        [{ certificate: 'not a pem' }, /certificate: not a PEM/],
        [{ request_timeout: 'soon' }, /request_timeout: "soon" is not a duration/],
        [{ dereference_aliases: 'sometimes' }, /dereference_aliases: must be never/],
        [{ credential_type: 'pin' }, /credential_type: must be password or phrase/],
      ];
      for (const [body, message] of bad) {
        const res = await s.v('POST', 'oldldap/config', body);
        expect([res.status, res.body.errors.join()]).toEqual([400, expect.stringMatching(message)]);
      }
      await s.v('POST', 'sys/mounts/emptyldap', { type: 'ldap' });
      expect((await s.v('POST', 'emptyldap/config', { url: 'ldap://x' })).body.errors[0]).toMatch(/binddn and bindpass are required/);
      expect((await s.v('DELETE', 'oldldap/config')).status).toBe(204);
      expect((await s.v('GET', 'oldldap/config')).status).toBe(404);
    });

    test('static roles: the import rotation, rotate-role and the schedule, proven by binds', async () => {
      const uid = await account();
      expect((await s.v('LIST', 'ldap/static-role')).status).toBe(404);
      expect((await s.v('POST', 'ldap/static-role/app', { username: uid })).body.errors[0]).toBe('rotation_period is required to create static accounts');
      expect((await s.v('POST', 'ldap/static-role/app', { rotation_period: 60 })).body.errors[0]).toBe('username is a required field to manage a static account');
      expect((await s.v('POST', 'ldap/static-role/app', { username: uid, rotation_period: 2 })).body.errors[0]).toBe('rotation_period must be 5 seconds or more');
      const ghost = await s.v('POST', 'ldap/static-role/ghost', { username: 'nobody-here', rotation_period: 60 });
      expect([ghost.status, ghost.body.errors[0]]).toEqual([400, expect.stringMatching(/username: "nobody-here" was not found/)]);
      expect((await s.v('GET', 'ldap/static-role/ghost')).status).toBe(404);

      // Created: the password is rotated at once (the import rotation).
      expect((await s.v('POST', 'ldap/static-role/App', { username: uid, rotation_period: '1h' })).status).toBe(204);
      expect(await ldap.canBind(uidDn(uid), `initial-${uid}`)).toBe(false);
      const role = (await s.v('GET', 'ldap/static-role/app')).body.data;
      expect(role).toEqual({ dn: '', username: uid, rotation_period: 3600, last_vault_rotation: expect.stringMatching(/Z$/) });
      const cred1 = (await s.v('GET', 'ldap/static-cred/app')).body.data;
      expect(cred1).toEqual({
        dn: '',
        username: uid,
        password: expect.stringMatching(/^[A-Za-z0-9]{64}$/),
        last_password: '',
        ttl: 3600,
        rotation_period: 3600,
        last_vault_rotation: role.last_vault_rotation,
      });
      expect(await ldap.canBind(uidDn(uid), cred1.password)).toBe(true);
      // The account is managed once.
      const twice = await s.v('POST', 'ldap/static-role/other', { username: uid, rotation_period: 60 });
      expect(twice.body.errors[0]).toBe(`"${uid}" is already managed by the secrets engine`);
      expect((await s.v('POST', 'ldap/library/taken', { service_account_names: [uid] })).body.errors[0]).toMatch(/is the service account of role "app"/);
      expect((await s.v('POST', 'ldap/static-role/app', { username: 'someone-else' })).body.errors[0]).toBe('cannot update static account username');
      expect((await s.v('POST', 'ldap/static-role/app', { skip_import_rotation: true })).body.errors[0]).toBe('skip_import_rotation has no effect on updates');

      // rotate-role: a new password now.
      expect((await s.v('POST', 'ldap/rotate-role/app', {})).status).toBe(204);
      const cred2 = (await s.v('GET', 'ldap/static-cred/app')).body.data;
      expect(cred2.last_password).toBe(cred1.password);
      expect(await ldap.canBind(uidDn(uid), cred2.password)).toBe(true);
      expect(await ldap.canBind(uidDn(uid), cred1.password)).toBe(false);
      expect((await s.v('POST', 'ldap/rotate-role/ghost', {})).body.errors[0]).toBe("role doesn't exist: ghost");
      expect((await s.v('GET', 'ldap/static-cred/ghost')).body.errors[0]).toBe('unknown role: ghost');

      // The schedule: nothing before rotation_period, a new password after it.
      s.clock.advance(HOUR / 2);
      await s.engine.scheduler.runOnce();
      expect((await s.v('GET', 'ldap/static-cred/app')).body.data).toMatchObject({ password: cred2.password, ttl: 1800 });
      s.clock.advance(HOUR / 2 + 1000);
      await s.engine.scheduler.runOnce();
      const cred3 = (await s.v('GET', 'ldap/static-cred/app')).body.data;
      expect(cred3.password).not.toBe(cred2.password);
      expect(cred3.last_password).toBe(cred2.password);
      expect(await ldap.canBind(uidDn(uid), cred3.password)).toBe(true);
      expect(await ldap.canBind(uidDn(uid), cred2.password)).toBe(false);

      // Sealed: a copy of the database shows no password.
      const stored = await storedText(s.engine.storage, s.dataDir);
      for (const secret of [cred1.password, cred2.password, cred3.password, ldap.managerPw]) expect(stored).not.toContain(secret);
      expect((await s.v('DELETE', 'ldap/static-role/app')).status).toBe(204);
      expect((await s.v('GET', 'ldap/static-role/app')).status).toBe(404);
    });

    test('static roles: by DN, skip_import_rotation, hierarchical names', async () => {
      const uid = await account();
      expect((await s.v('POST', 'ldap/static-role/org/team/byDn', { username: 'anything', dn: uidDn(uid), rotation_period: 60, skip_import_rotation: true })).status).toBe(204);
      // Skipped: the directory still has the old password, Hangar knows none yet.
      expect(await ldap.canBind(uidDn(uid), `initial-${uid}`)).toBe(true);
      expect((await s.v('GET', 'ldap/static-cred/org/team/bydn')).body.data).toMatchObject({ dn: uidDn(uid), password: '', last_vault_rotation: '0001-01-01T00:00:00Z' });
      expect((await s.v('GET', 'ldap/static-role/org/team/bydn')).body.data).toEqual({ dn: uidDn(uid), username: 'anything', rotation_period: 60 });
      expect((await s.v('LIST', 'ldap/static-role')).body.data.keys).toContain('org/');
      expect((await s.v('LIST', 'ldap/static-role/org')).body.data.keys).toEqual(['team/']);
      expect((await s.v('LIST', 'ldap/static-role/org/team/')).body.data.keys).toEqual(['bydn']);
      expect((await s.v('POST', 'ldap/rotate-role/org/team/bydn', {})).status).toBe(204);
      const cred = (await s.v('GET', 'ldap/static-cred/org/team/bydn')).body.data;
      expect(await ldap.canBind(uidDn(uid), cred.password)).toBe(true);
      expect((await s.v('POST', 'ldap/static-role/org/team/bydn', { dn: `uid=other,${people()}` })).body.errors[0]).toBe('cannot update static account distinguished name (dn)');
      expect((await s.v('POST', 'ldap/static-role/-bad', { username: uid, rotation_period: 60 })).body.errors[0]).toMatch(/role name "-bad" is invalid/);
      expect((await s.v('DELETE', 'ldap/static-role/org/team/bydn')).status).toBe(204);
    });

    test('dynamic roles: creds create an entry that binds; revocation deletes it', async () => {
      expect((await s.v('LIST', 'ldap/role')).status).toBe(404);
      const badLdif = await s.v('POST', 'ldap/role/dyn', { creation_ldif: 'cn: no dn', deletion_ldif: deletionLdif() });
      expect([badLdif.status, badLdif.body.errors[0]]).toEqual([400, expect.stringMatching(/^invalid creation_ldif: line 1/)]);
      expect((await s.v('POST', 'ldap/role/dyn', { creation_ldif: creationLdif() })).body.errors[0]).toBe('missing deletion_ldif');
      const badTemplate = await s.v('POST', 'ldap/role/dyn', { creation_ldif: 'dn: {{.Nope}}', deletion_ldif: deletionLdif() });
      expect(badTemplate.body.errors[0]).toMatch(/^invalid creation_ldif: unknown field .Nope/);
      // LDIF may be given base64-encoded, as the public service accepts it.
      const body = {
        creation_ldif: Buffer.from(creationLdif()).toString('base64'),
        deletion_ldif: deletionLdif(),
        username_template: 'dyn_{{.RoleName}}_{{random 6 | lowercase}}',
        default_ttl: '1h',
        max_ttl: '2h',
      };
      expect((await s.v('POST', 'ldap/role/team/dyn', body)).status).toBe(204);
      expect((await s.v('GET', 'ldap/role/team/dyn')).body.data).toEqual({
        creation_ldif: creationLdif(),
        deletion_ldif: deletionLdif(),
        rollback_ldif: '',
        username_template: 'dyn_{{.RoleName}}_{{random 6 | lowercase}}',
        default_ttl: 3600,
        max_ttl: 7200,
      });
      expect((await s.v('LIST', 'ldap/role')).body.data.keys).toEqual(['team/']);
      expect((await s.v('LIST', 'ldap/role/team')).body.data.keys).toEqual(['dyn']);

      const creds = await s.v('GET', 'ldap/creds/team/dyn');
      expect(creds.status).toBe(200);
      const { username, password, distinguished_names } = creds.body.data;
      expect(username).toMatch(/^dyn_team\/dyn_[a-z0-9]{6}$/);
      expect(distinguished_names).toEqual([uidDn(username)]);
      expect(creds.body).toMatchObject({ lease_duration: 3600, renewable: true, lease_id: expect.stringMatching(/^ldap\/creds\/team\/dyn\//) });
      expect(await ldap.canBind(uidDn(username), password)).toBe(true);
      expect(await ldap.attribute(uidDn(username), 'sn')).toBe('team/dyn');
      expect(await ldap.attribute(uidDn(username), 'description')).toMatch(/^until 2026-.*Z$/);

      // Renewal up to max_ttl; revocation applies the deletion LDIF.
      expect((await s.v('PUT', 'sys/leases/renew', { lease_id: creds.body.lease_id, increment: 3 * 3600 })).body.lease_duration).toBe(7200);
      expect((await s.v('PUT', 'sys/leases/revoke', { lease_id: creds.body.lease_id })).status).toBe(204);
      await s.engine.scheduler.runOnce();
      expect(await ldap.attribute(uidDn(username), 'uid')).toBeUndefined();
      expect(await ldap.canBind(uidDn(username), password)).toBe(false);

      // Expiry deletes too, through the background revocation.
      const second = (await s.v('GET', 'ldap/creds/team/dyn')).body.data;
      expect(await ldap.canBind(uidDn(second.username), second.password)).toBe(true);
      s.clock.advance(HOUR + 1000);
      await s.engine.scheduler.runOnce();
      expect(await ldap.attribute(uidDn(second.username), 'uid')).toBeUndefined();

      // A failed creation runs the rollback LDIF: the first entry of a two-entry creation goes away.
      const rollback = {
        creation_ldif: `${creationLdif()}\ndn: uid={{.Username}},ou=nowhere,${ldap.suffix}\nobjectClass: inetOrgPerson\nuid: x\ncn: x\nsn: x\n`,
        deletion_ldif: deletionLdif(),
        rollback_ldif: deletionLdif(),
        username_template: 'rb-{{.RoleName}}',
      };
      expect((await s.v('POST', 'ldap/role/rb', rollback)).status).toBe(204);
      const failed = await s.v('GET', 'ldap/creds/rb');
      expect([failed.status, failed.body.errors[0]]).toEqual([502, expect.stringMatching(/^failed to create user: .*ou=nowhere/)]);
      // Without the rollback, the first entry would remain.
      expect(await ldap.attribute(uidDn('rb-rb'), 'uid')).toBeUndefined();
      expect((await s.v('GET', 'ldap/creds/ghost')).status).toBe(404);
      // A display name with a line break (a JWT login's, from its claim) never reaches the LDIF.
      const key = await newKey('ldif');
      expect((await s.v('POST', 'auth/jwt/config', { jwt_validation_pubkeys: [key.publicPem] })).status).toBe(204);
      await s.v('POST', 'sys/policies/acl/ldap-creds', { policy: 'path "ldap/creds/*" { capabilities = ["read"] }' });
      await s.v('POST', 'auth/jwt/role/ldif', { role_type: 'jwt', user_claim: 'sub', bound_audiences: ['hangar'], token_policies: 'ldap-creds' });
      const jwt = await sign(key, { sub: `x\ndn: cn=injected,${ldap.suffix}`, aud: 'hangar' }, s.clock.now());
      const login = (await s.v('POST', 'auth/jwt/login', { role: 'ldif', jwt }, null)).body.auth.client_token;
      const injected = await s.v('GET', 'ldap/creds/rb', undefined, login);
      expect([injected.status, injected.body.errors[0]]).toEqual([400, 'DisplayName contains a line break and cannot go into an LDIF template']);

      const stored = await storedText(s.engine.storage, s.dataDir);
      for (const secret of [password, second.password]) expect(stored).not.toContain(secret);
      expect((await s.v('DELETE', 'ldap/role/team/dyn')).status).toBe(204);
      expect((await s.v('GET', 'ldap/role/team/dyn')).status).toBe(404);
    });

    test('schemas: ad writes unicodePwd (also from LDIF with utf16le), racf racfPassword or racfPassPhrase', async () => {
      const n2 = ++n;
      const utf16 = async (dn: string, attr: string) => Buffer.from((await ldap.attribute(dn, attr)) ?? '', 'latin1').toString('utf16le');
      // Active Directory: accounts by userPrincipalName (the default userattr of the schema), bare names get @upndomain.
      const sam = `lad${n2}`;
      await ldap.add(adAccount(ldap.suffix, sam, 'corp.example'));
      await s.v('POST', 'sys/mounts/ldap-ad', { type: 'ldap' });
      expect((await s.v('POST', 'ldap-ad/config', config({ schema: 'ad', userattr: null, upndomain: 'corp.example' }))).status).toBe(204);
      expect((await s.v('POST', 'ldap-ad/static-role/svc', { username: sam, rotation_period: 60 })).status).toBe(204);
      const adCred = (await s.v('GET', 'ldap-ad/static-cred/svc')).body.data;
      expect(await utf16(`cn=${sam},${people()}`, 'unicodePwd')).toBe(`"${adCred.password}"`);
      // The public service's documented LDIF for AD passwords.
      const adLdif = [
        `dn: cn={{.Username}},${people()}`,
        'changetype: add',
        'objectClass: inetOrgPerson',
        'objectClass: hangarAdAccount',
        'cn: {{.Username}}',
        'sn: x',
        'userPrincipalName: {{.Username}}@corp.example',
        '',
        `dn: cn={{.Username}},${people()}`,
        'changetype: modify',
        'replace: unicodePwd',
        'unicodePwd::{{ printf "%q" .Password | utf16le | base64 }}',
        '-',
        '',
      ].join('\n');
      expect((await s.v('POST', 'ldap-ad/role/dyn', { creation_ldif: adLdif, deletion_ldif: `dn: cn={{.Username}},${people()}\nchangetype: delete\n`, username_template: 'ad{{random 8 | lowercase}}' })).status).toBe(204);
      const dyn = await s.v('GET', 'ldap-ad/creds/dyn');
      expect(dyn.body.data.distinguished_names).toEqual([`cn=${dyn.body.data.username},${people()}`, `cn=${dyn.body.data.username},${people()}`]);
      expect(await utf16(`cn=${dyn.body.data.username},${people()}`, 'unicodePwd')).toBe(`"${dyn.body.data.password}"`);
      await s.v('PUT', 'sys/leases/revoke', { lease_id: dyn.body.lease_id });
      expect(await ldap.attribute(`cn=${dyn.body.data.username},${people()}`, 'cn')).toBeUndefined();

      // RACF: accounts by racfid; the password (or pass phrase) with racfAttributes: noexpired.
      const id = `RACF${n2}`;
      await ldap.add(racfAccount(ldap.suffix, id));
      await s.v('POST', 'sys/mounts/ldap-racf', { type: 'ldap' });
      expect((await s.v('POST', 'ldap-racf/config', config({ schema: 'racf', userattr: null, length: 8 }))).status).toBe(204);
      expect((await s.v('GET', 'ldap-racf/config')).body.data).toMatchObject({ schema: 'racf', userattr: 'racfid', length: 8 });
      expect((await s.v('POST', 'ldap-racf/static-role/svc', { username: id, rotation_period: 60 })).status).toBe(204);
      const racfDn = `racfid=${id},${people()}`;
      const racfCred = (await s.v('GET', 'ldap-racf/static-cred/svc')).body.data;
      expect(racfCred.password).toMatch(/^[A-Za-z0-9]{8}$/);
      expect(await ldap.attribute(racfDn, 'racfPassword')).toBe(racfCred.password);
      expect(await ldap.attribute(racfDn, 'racfAttributes')).toBe('noexpired');
      expect((await s.v('POST', 'ldap-racf/config', { credential_type: 'phrase', length: 20 })).status).toBe(204);
      expect((await s.v('POST', 'ldap-racf/rotate-role/svc', {})).status).toBe(204);
      const phrase = (await s.v('GET', 'ldap-racf/static-cred/svc')).body.data.password;
      expect(await ldap.attribute(racfDn, 'racfPassPhrase')).toBe(phrase);
    });

    test('library sets: check-out, check-in with rotation, status, hierarchical names', async () => {
      const [a, b] = [await account(), await account()];
      expect((await s.v('POST', 'ldap/library/ops/Team', { service_account_names: [a, b], ttl: '1h', max_ttl: '2h' })).status).toBe(204);
      expect((await s.v('GET', 'ldap/library/ops/team')).body.data).toEqual({ service_account_names: [a, b], ttl: 3600, max_ttl: 7200, disable_check_in_enforcement: false });
      expect((await s.v('LIST', 'ldap/library')).body.data.keys).toEqual(['ops/']);
      expect((await s.v('LIST', 'ldap/library/ops')).body.data.keys).toEqual(['team']);
      // Creating the set gave both accounts passwords only Hangar knows.
      for (const uid of [a, b]) expect(await ldap.canBind(uidDn(uid), `initial-${uid}`)).toBe(false);

      const alice = await s.tokenWith('path "ldap/library/ops/team/*" { capabilities = ["update", "read"] }');
      const out = await s.v('POST', 'ldap/library/ops/team/check-out', {}, alice);
      expect(out.body).toMatchObject({ lease_duration: 3600, renewable: true, lease_id: expect.stringMatching(/^ldap\/library\/ops\/team\/check-out\//) });
      const lent = out.body.data as { service_account_name: string; password: string };
      expect(await ldap.canBind(uidDn(lent.service_account_name), lent.password)).toBe(true);
      expect((await s.v('GET', 'ldap/library/ops/team/status', undefined, alice)).body.data[lent.service_account_name]).toEqual({
        available: false,
        borrower_client_token: expect.any(String),
      });
      expect((await s.v('POST', 'ldap/library/ops/team/check-in', {}, alice)).body.data).toEqual({ check_ins: [lent.service_account_name] });
      expect(await ldap.canBind(uidDn(lent.service_account_name), lent.password)).toBe(false);
      // Expiry checks in too (the lease's revocation).
      const again = (await s.v('POST', 'ldap/library/ops/team/check-out', {}, alice)).body.data;
      s.clock.advance(HOUR + 1000);
      await s.engine.scheduler.runOnce();
      expect((await s.v('GET', 'ldap/library/ops/team/status')).body.data[again.service_account_name]).toEqual({ available: true });
      expect(await ldap.canBind(uidDn(again.service_account_name), again.password)).toBe(false);
      // The manage path needs its own grant.
      expect((await s.v('POST', 'ldap/library/manage/ops/team/check-in', {}, alice)).status).toBe(403);
      expect((await s.v('POST', 'ldap/library/manage/ops/team/check-in', {})).body.data).toEqual({ check_ins: [] });
      expect((await s.v('DELETE', 'ldap/library/ops/team')).status).toBe(204);
      expect((await s.v('GET', 'ldap/library/ops/team')).status).toBe(404);
    });

    test('rotate-root: a bind password only Hangar knows; permissions are enforced', async () => {
      const uid = await account();
      await s.v('POST', 'sys/mounts/rootldap', { type: 'ldap' });
      // The engine binds as an administrator of its own, whose password it then rotates.
      const admin = `cn=root-${uid},ou=system,${ldap.suffix}`;
      await ldap.add(`dn: ${admin}\nobjectClass: inetOrgPerson\ncn: root-${uid}\nsn: x\nuserPassword: FAKEXSECRET-root\n\n`);
      expect((await s.v('POST', 'rootldap/config', config({ binddn: admin, bindpass: 'FAKEXSECRET-root' }))).status).toBe(204);
      expect((await s.v('GET', 'rootldap/rotate-root')).status).toBe(405);
      expect((await s.v('POST', 'rootldap/rotate-root', {})).status).toBe(204);
      expect(await ldap.canBind(admin, 'FAKEXSECRET-root')).toBe(false);
      expect((await s.v('GET', 'rootldap/config')).body.data.last_bind_password_rotation).toMatch(/Z$/);
      // The engine still works with the new password.
      expect((await s.v('POST', 'rootldap/static-role/r', { username: uid, rotation_period: 60 })).status).toBe(204);

      const nobody = await s.tokenWith('path "ldap/static-cred/*" { capabilities = ["read"] }');
      for (const [method, path] of [
        ['GET', 'ldap/config'],
        ['POST', 'ldap/static-role/x'],
        ['GET', 'ldap/creds/team/dyn'],
        ['POST', 'ldap/rotate-root'],
        ['POST', 'ldap/library/x/check-out'],
      ]) {
        expect([path, (await s.v(method, path, {}, nobody)).status]).toEqual([path, 403]);
      }
    });
  });
});
