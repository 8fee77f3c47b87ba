import { compatPython, goTest, haveGo, pytest } from '../helpers/compat';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';
import { haveSlapd, openldapAccount, Slapd, startSlapd } from '../helpers/slapd';

/**
 * The official clients, unchanged, against the directory engines `ad` and `ldap`: the Go client
 * (test/compat/vault-go/ad, .../ldap) and hvac (test/compat/python/test_vault_ad.py,
 * test_vault_ldap.py), each with its own mount, bind DN and accounts on one Hangar and one private
 * slapd. The suites prove passwords with `ldapwhoami` against that slapd.
 */
const python = compatPython();
const runnable = haveSlapd() && haveGo();
const describeClients = runnable ? describe : describe.skip;

describeClients('ad and ldap engines with the official clients', () => {
  let ldap: Slapd;
  let server: TestServer;
  /** The environment of one suite: its own manager (bind DN) and accounts `<prefix>-role`, `<prefix>-lib1..2`. */
  const envFor = async (prefix: string): Promise<Record<string, string>> => {
    const manager = `uid=${prefix}-manager,ou=system,${ldap.suffix}`;
    await ldap.add(`dn: ${manager}\nobjectClass: inetOrgPerson\nuid: ${prefix}-manager\ncn: m\nsn: m\nuserPassword: ${prefix}-manager-pw\n\n`);
    for (const uid of ['role', 'lib1', 'lib2']) await ldap.add(openldapAccount(ldap.suffix, `${prefix}-${uid}`, `initial-${prefix}-${uid}`));
    return {
      VAULT_ADDR: server.urls.secrets,
      VAULT_TOKEN: ROOT_TOKEN,
      LDAP_URL: ldap.url,
      LDAP_BINDDN: manager,
      LDAP_BINDPASS: `${prefix}-manager-pw`,
      LDAP_USERDN: `ou=people,${ldap.suffix}`,
      ACCOUNT_PREFIX: prefix,
    };
  };
  beforeAll(async () => {
    [ldap, server] = await Promise.all([startSlapd(), startTestServer('sqlite')]);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await ldap?.stop();
  }, 60_000);

  test.each(['ad', 'ldap'])('github.com/hashicorp/vault/api: %s', async (engine) => {
    const run = await goTest('vault-go', [`./${engine}/...`], await envFor(`go-${engine}`));
    if (run.status !== 0) console.log(run.output);
    expect(run.status).toBe(0);
  }, 300_000);

  (python ? test.each(['ad', 'ldap']) : test.skip.each(['ad', 'ldap']))('hvac: %s', async (engine) => {
    const run = await pytest(python!, [`test_vault_${engine}.py`], await envFor(`py-${engine}`));
    if (run.status !== 0) console.log(run.output);
    expect(run.status).toBe(0);
  }, 120_000);
});
