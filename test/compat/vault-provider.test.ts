import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMPAT_DIR, runSuite } from '../helpers/compat';
import { havePostgres, startTargetPostgres, TargetPostgres } from '../helpers/postgres-target';
import { tfProviderVaultDir } from '../helpers/public-tools';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';
import { terraformEnv } from '../helpers/terraform';

/**
 * The public service's Terraform provider, unchanged, applies the configurations of its own
 * documentation (test/compat/vault-provider/*.tf, see its README) against Hangar: apply, an empty
 * second plan, imports, destroy.
 */
const CASES_DIR = join(COMPAT_DIR, 'vault-provider');
const providerDir = tfProviderVaultDir();
const tf = providerDir ? terraformEnv() : undefined;
if (!providerDir) console.log('vault provider cases skipped: run scripts/build-terraform-provider-vault (see docs/compatibility.md)');

interface Case {
  readonly name: string;
  readonly text: string;
  readonly needs: readonly string[];
  readonly imports: readonly (readonly [string, string])[];
}

function cases(): Case[] {
  return readdirSync(CASES_DIR).filter((f) => f.endsWith('.tf')).sort().map((file) => {
    const text = readFileSync(join(CASES_DIR, file), 'utf8');
    const header = (key: string) => [...text.matchAll(new RegExp(`^# ${key}: (.+)$`, 'gm'))].map((m) => m[1].trim());
    return {
      name: file.replace(/\.tf$/, ''),
      text,
      needs: header('needs').flatMap((n) => n.split(/[ ,]+/)),
      imports: header('import').map((line) => line.split(/\s+/, 2) as [string, string]),
    };
  });
}

(providerDir && tf && havePostgres() ? describe : describe.skip)('the vault Terraform provider against Hangar', () => {
  let server: TestServer;
  let postgres: TargetPostgres | undefined;
  let cliConfig: string;

  beforeAll(async () => {
    server = await startTestServer('sqlite');
    if (cases().some((c) => c.needs.includes('postgres'))) postgres = await startTargetPostgres();
    cliConfig = join(mkdtempSync(join(tmpdir(), 'vault-provider-')), 'terraformrc');
    writeFileSync(cliConfig, `disable_checkpoint = true\nprovider_installation {\n  dev_overrides {\n    "hashicorp/vault" = ${JSON.stringify(providerDir)}\n  }\n  direct {}\n}\n`);
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    await postgres?.stop();
  });

  /** Runs terraform in a case's directory without blocking this process (the server lives here). */
  async function terraform(dir: string, args: string[], allowStatus: number[] = [0]) {
    const run = await runSuite(tf!.HANGAR_TERRAFORM, [...args, '-no-color', '-input=false'], dir, {
      ...tf!,
      TF_CLI_CONFIG_FILE: cliConfig,
      TF_IN_AUTOMATION: '1',
      VAULT_ADDR: server.urls.secrets,
      VAULT_TOKEN: ROOT_TOKEN,
      ...(postgres ? { TF_VAR_pg_url_template: postgres.urlTemplate, TF_VAR_pg_username: postgres.adminUser, TF_VAR_pg_password: postgres.adminPassword } : {}),
    });
    if (!allowStatus.includes(run.status ?? -1)) throw new Error(`terraform ${args.join(' ')} exited ${run.status}:\n${run.output}`);
    return run;
  }

  /** A second plan changes nothing (`-detailed-exitcode`: 0 empty, 2 changes). */
  async function expectEmptyPlan(dir: string, when: string) {
    const plan = await terraform(dir, ['plan', '-detailed-exitcode'], [0, 2]);
    if (plan.status !== 0) throw new Error(`the plan ${when} is not empty:\n${plan.output}`);
  }

  test.each(cases().map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const dir = mkdtempSync(join(tmpdir(), `vault-provider-${c.name}-`));
    copyFileSync(join(CASES_DIR, `${c.name}.tf`), join(dir, 'main.tf'));
    await terraform(dir, ['apply', '-auto-approve']);
    await expectEmptyPlan(dir, 'after apply');
    for (const [address, id] of c.imports) {
      await terraform(dir, ['state', 'rm', address]);
      await terraform(dir, ['import', address, id]);
      await expectEmptyPlan(dir, `after importing ${address}`);
    }
    await terraform(dir, ['destroy', '-auto-approve']);
  }, 300_000);
});
