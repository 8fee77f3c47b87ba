import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMPAT_DIR, runSuite } from '../helpers/compat';
import { havePostgres, startTargetPostgres, TargetPostgres } from '../helpers/postgres-target';
import { tfProviderVaultDir } from '../helpers/public-tools';
import { haveRabbit, startRabbit, TestRabbit } from '../helpers/rabbitmq';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';
import { adAccount, haveSlapd, Slapd, startSlapd } from '../helpers/slapd';
import { terraformEnv } from '../helpers/terraform';

/**
 * The public service's Terraform provider, unchanged, applies the configurations of its own
 * documentation (test/compat/vault-provider/*.tf, see its README) against Hangar: apply, an empty
 * second plan, imports, destroy.
 */
const CASES_DIR = join(COMPAT_DIR, 'vault-provider');
/** PostgreSQL users that exist for `# needs: postgres` cases (a static role manages an existing user). */
const STATIC_USERS = ['example', 'example-schedule', 'example-password'];
/** Directory accounts that exist for `# needs: ldap` cases, under `var.ldap_userdn`. */
const LDAP_ACCOUNTS = ['Bob', 'Mary', 'alice'];
const providerDir = tfProviderVaultDir();
const tf = providerDir ? terraformEnv() : undefined;
if (!providerDir) console.log('vault provider cases skipped: run scripts/build-terraform-provider-vault (see docs/compatibility.md)');

interface Case {
  readonly name: string;
  readonly text: string;
  readonly needs: readonly string[];
  /** Address and import ID; without an ID, the ID the resource has in the state after apply. */
  readonly imports: readonly (readonly [string, string | undefined])[];
  /**
   * Top-level attributes the provider does not read back (`# import-ignore:`, as its own acceptance
   * tests' ImportStateVerifyIgnore): after an import, a plan may update these and nothing else.
   */
  readonly importIgnore: ReadonlySet<string>;
  /** Why the case fails against Hangar today (`# known-failure:`): it is skipped with the reason in its title. */
  readonly knownFailure?: string;
}

function cases(): Case[] {
  return readdirSync(CASES_DIR).filter((f) => f.endsWith('.tf')).sort().map((file) => {
    const text = readFileSync(join(CASES_DIR, file), 'utf8');
    const header = (key: string) => [...text.matchAll(new RegExp(`^# ${key}: (.+)$`, 'gm'))].map((m) => m[1].trim());
    return {
      name: file.replace(/\.tf$/, ''),
      text,
      needs: header('needs').flatMap((n) => n.split(/[ ,]+/)),
      imports: header('import').map((line) => line.split(/\s+/, 2) as [string, string | undefined]),
      importIgnore: new Set(header('import-ignore').flatMap((n) => n.split(/[ ,]+/))),
      knownFailure: header('known-failure')[0],
    };
  });
}

(providerDir && tf && havePostgres() ? describe : describe.skip)('the vault Terraform provider against Hangar', () => {
  let server: TestServer;
  let postgres: TargetPostgres | undefined;
  let rabbit: TestRabbit | undefined;
  let slapd: Slapd | undefined;
  let cliConfig: string;

  /** Starts what a case needs on first use (`-t` on one case starts only what it needs). */
  async function provide(need: string): Promise<void> {
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
  }

  beforeAll(async () => {
    server = await startTestServer('sqlite');
    cliConfig = join(mkdtempSync(join(tmpdir(), 'vault-provider-')), 'terraformrc');
    writeFileSync(cliConfig, `disable_checkpoint = true\nprovider_installation {\n  dev_overrides {\n    "hashicorp/vault" = ${JSON.stringify(providerDir)}\n  }\n  direct {}\n}\n`);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await postgres?.stop();
    await rabbit?.stop();
    await slapd?.stop();
  });

  /** The variables of the `# needs:` (README.md), as TF_VAR_ environment variables. */
  function variables(): Record<string, string> {
    const vars: Record<string, string> = {};
    if (postgres) {
      Object.assign(vars, { pg_url_template: postgres.urlTemplate, pg_username: postgres.adminUser, pg_password: postgres.adminPassword });
    }
    if (rabbit) Object.assign(vars, { rabbitmq_url: rabbit.managementUrl, rabbitmq_username: rabbit.username, rabbitmq_password: rabbit.password });
    if (slapd) {
      Object.assign(vars, { ldap_url: slapd.url, ldap_binddn: slapd.managerDn, ldap_bindpass: slapd.managerPw, ldap_userdn: `ou=people,${slapd.suffix}` });
    }
    return Object.fromEntries(Object.entries(vars).map(([k, v]) => [`TF_VAR_${k}`, v]));
  }

  /** The JSON document a `-json` command printed (one line; warnings may surround it). */
  function jsonOf(output: string): any {
    return JSON.parse(output.split('\n').find((l) => l.startsWith('{')) ?? '{}');
  }

  /**
   * Runs terraform in a case's directory without blocking this process (the server lives here): the
   * command's words (`['state', 'rm']`), then its options, then its arguments (flags after an
   * argument would be taken for arguments).
   */
  async function terraform(dir: string, command: string[], args: string[] = [], allowStatus: number[] = [0]) {
    const options = ['-no-color', ...(['apply', 'plan', 'import', 'destroy'].includes(command[0]) ? ['-input=false'] : [])];
    const run = await runSuite(tf!.HANGAR_TERRAFORM, [...command, ...options, ...args], dir, {
      ...tf!,
      TF_CLI_CONFIG_FILE: cliConfig,
      TF_IN_AUTOMATION: '1',
      VAULT_ADDR: server.urls.secrets,
      VAULT_TOKEN: ROOT_TOKEN,
      ...variables(),
    });
    if (!allowStatus.includes(run.status ?? -1)) throw new Error(`terraform ${[...command, ...args].join(' ')} exited ${run.status}:\n${run.output}`);
    return run;
  }

  /** A second plan changes nothing (`-detailed-exitcode`: 0 empty, 2 changes). */
  async function expectEmptyPlan(dir: string, when: string) {
    const plan = await terraform(dir, ['plan'], ['-detailed-exitcode'], [0, 2]);
    if (plan.status !== 0) throw new Error(`the plan ${when} is not empty:\n${plan.output}`);
  }

  /**
   * After an import, the plan changes nothing but the attributes the provider does not read back
   * (in place): `plan -out` and `show -json` of that plan.
   */
  async function expectImportedPlan(dir: string, address: string, ignore: ReadonlySet<string>) {
    if (ignore.size === 0) return expectEmptyPlan(dir, `after importing ${address}`);
    await terraform(dir, ['plan'], ['-out=imported.plan']);
    const show = await terraform(dir, ['show'], ['-json', 'imported.plan']);
    const plan = jsonOf(show.output);
    type Change = {
      address: string;
      change: { actions: string[]; before?: Record<string, unknown>; after?: Record<string, unknown>; replace_paths?: string[][] };
    };
    for (const { address: changed, change } of (plan.resource_changes ?? []) as Change[]) {
      if (change.actions.every((a) => a === 'no-op' || a === 'read')) continue;
      // An update: the attributes whose value changes. A replacement: the attributes forcing it (the
      // provider reads some identity attributes only from its configuration, not back from the server).
      const keys = change.actions.join() === 'update'
        ? Object.keys({ ...change.before, ...change.after }).filter((k) => JSON.stringify(change.before?.[k]) !== JSON.stringify(change.after?.[k]))
        : (change.replace_paths ?? [['(replace)']]).map((path) => String(path[0]));
      const unexpected = keys.filter((k) => !ignore.has(k));
      if (unexpected.length > 0) throw new Error(`the plan after importing ${address} changes ${changed}: ${unexpected.join(', ')}\n${(await terraform(dir, ['show'], ['imported.plan'])).output}`);
    }
  }

  /** The ID a resource has in the state (`terraform show -json`), for imports whose ID Hangar chose. */
  async function stateId(dir: string, address: string): Promise<string> {
    const show = await terraform(dir, ['show'], ['-json']);
    const resources: { address: string; values: { id?: string } }[] = jsonOf(show.output).values?.root_module?.resources ?? [];
    const id = resources.find((r) => r.address === address)?.values.id;
    if (!id) throw new Error(`${address} has no ID in the state`);
    return id;
  }

  for (const c of cases()) {
    if (c.knownFailure) {
      test.skip(`${c.name} (known failure: ${c.knownFailure})`, () => undefined);
      continue;
    }
    const missing = c.needs.filter((n) => (n === 'rabbitmq' && !haveRabbit()) || (n === 'ldap' && !haveSlapd()));
    if (missing.length > 0) {
      test.skip(`${c.name} (needs ${missing.join(', ')}, not installed)`, () => undefined);
      continue;
    }
    test(c.name, async () => {
      for (const need of c.needs) await provide(need);
      const dir = mkdtempSync(join(tmpdir(), `vault-provider-${c.name}-`));
      copyFileSync(join(CASES_DIR, `${c.name}.tf`), join(dir, 'main.tf'));
      await terraform(dir, ['apply'], ['-auto-approve']);
      await expectEmptyPlan(dir, 'after apply');
      for (const [address, given] of c.imports) {
        const id = given ?? (await stateId(dir, address));
        await terraform(dir, ['state', 'rm'], [address]);
        await terraform(dir, ['import'], [address, id]);
        await expectImportedPlan(dir, address, c.importIgnore);
      }
      await terraform(dir, ['destroy'], ['-auto-approve']);
    }, 300_000);
  }
});
