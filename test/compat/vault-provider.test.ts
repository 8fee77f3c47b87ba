import { join } from 'node:path';
import { COMPAT_DIR } from '../helpers/compat';
import { havePostgres, startTargetPostgres, TargetPostgres } from '../helpers/postgres-target';
import { providerCases } from '../helpers/provider-cases';
import { tfProviderDir } from '../helpers/public-tools';
import { haveRabbit, startRabbit, TestRabbit } from '../helpers/rabbitmq';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';
import { adAccount, haveSlapd, Slapd, startSlapd } from '../helpers/slapd';
import { terraformEnv } from '../helpers/terraform';

/**
 * The public service's Terraform provider, unchanged, applies the configurations of its own
 * documentation (test/compat/vault-provider/*.tf, see its README) against Hangar: apply, an empty
 * second plan, imports, destroy.
 */
/** PostgreSQL users that exist for `# needs: postgres` cases (a static role manages an existing user). */
const STATIC_USERS = ['example', 'example-schedule', 'example-password'];
/** Directory accounts that exist for `# needs: ldap` cases, under `var.ldap_userdn`. */
const LDAP_ACCOUNTS = ['Bob', 'Mary', 'alice'];
const providerDir = tfProviderDir('vault');
const tf = providerDir ? terraformEnv() : undefined;
if (!providerDir) console.log('vault provider cases skipped: run scripts/build-terraform-provider vault (see docs/compatibility.md)');

(providerDir && tf && havePostgres() ? describe : describe.skip)('the vault Terraform provider against Hangar', () => {
  let server: TestServer;
  let postgres: TargetPostgres | undefined;
  let rabbit: TestRabbit | undefined;
  let slapd: Slapd | undefined;

  beforeAll(async () => {
    server = await startTestServer('sqlite');
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await postgres?.stop();
    await rabbit?.stop();
    await slapd?.stop();
  });

  providerCases({
    provider: 'vault',
    providerDir: providerDir!,
    terraform: tf!,
    casesDir: join(COMPAT_DIR, 'vault-provider'),
    unmet: (needs) => needs.filter((n) => (n === 'rabbitmq' && !haveRabbit()) || (n === 'ldap' && !haveSlapd())),
    async provide(need) {
      if (need === 'postgres' && !postgres) {
        postgres = await startTargetPostgres();
        // The users the documentation's static roles manage.
        for (const user of STATIC_USERS) await postgres.admin(`CREATE ROLE "${user}" LOGIN PASSWORD 'initial-password'`);
      } else if (need === 'rabbitmq' && !rabbit) {
        rabbit = await startRabbit();
      } else if (need === 'ldap' && !slapd) {
        slapd = await startSlapd();
        // The accounts the documentation's roles and library sets name (cn=alice,ou=people,… for the static role's DN).
        for (const name of LDAP_ACCOUNTS) await slapd.add(adAccount(slapd.suffix, name, 'example.com'));
      }
    },
    /** The provider's address and token, and the variables of the `# needs:` (README.md) as TF_VAR_s. */
    env() {
      const vars: Record<string, string> = {};
      if (postgres) {
        Object.assign(vars, { pg_url_template: postgres.urlTemplate, pg_username: postgres.adminUser, pg_password: postgres.adminPassword });
      }
      if (rabbit) Object.assign(vars, { rabbitmq_url: rabbit.managementUrl, rabbitmq_username: rabbit.username, rabbitmq_password: rabbit.password });
      if (slapd) {
        Object.assign(vars, { ldap_url: slapd.url, ldap_binddn: slapd.managerDn, ldap_bindpass: slapd.managerPw, ldap_userdn: `ou=people,${slapd.suffix}` });
      }
      return {
        VAULT_ADDR: server.urls.secrets,
        VAULT_TOKEN: ROOT_TOKEN,
        ...Object.fromEntries(Object.entries(vars).map(([k, v]) => [`TF_VAR_${k}`, v])),
      };
    },
  });
});
