import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSuite } from './compat';

/**
 * The runner of a public service's Terraform provider cases (test/compat/<provider>-provider/*.tf,
 * see the README there): each case is applied against Hangar, then a second plan must be empty,
 * then its imports are checked, then it is destroyed. The provider test files start the server and
 * what the cases need, and call providerCases inside their describe.
 */

export interface ProviderCase {
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

export interface ProviderCasesOptions {
  /** The provider's name (`vault`, `consul`): its dev override `hashicorp/<name>`. */
  readonly provider: string;
  /** The directory holding the provider's binary (scripts/build-terraform-provider). */
  readonly providerDir: string;
  /** terraformEnv(): the terraform binary and its offline environment. */
  readonly terraform: Record<string, string>;
  readonly casesDir: string;
  /** The environment of every terraform command: the provider's address and token, the cases' TF_VAR_s. */
  readonly env: () => Record<string, string>;
  /** The needs this machine cannot meet (the case is skipped, naming them). */
  readonly unmet?: (needs: readonly string[]) => string[];
  /** Starts what a case needs, on first use (`-t` on one case starts only what it needs). */
  readonly provide?: (need: string) => Promise<void>;
}

export function readProviderCases(dir: string): ProviderCase[] {
  return readdirSync(dir).filter((f) => f.endsWith('.tf')).sort().map((file) => {
    const text = readFileSync(join(dir, file), 'utf8');
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

/** The JSON document a `-json` command printed (one line; warnings may surround it). */
function jsonOf(output: string): any {
  return JSON.parse(output.split('\n').find((l) => l.startsWith('{')) ?? '{}');
}

/** Registers one test per case in the calling describe. */
export function providerCases(options: ProviderCasesOptions): void {
  const { provider, casesDir } = options;
  let cliConfig: string;

  beforeAll(() => {
    cliConfig = join(mkdtempSync(join(tmpdir(), `${provider}-provider-`)), 'terraformrc');
    writeFileSync(cliConfig, `disable_checkpoint = true\nprovider_installation {\n  dev_overrides {\n    "hashicorp/${provider}" = ${JSON.stringify(options.providerDir)}\n  }\n  direct {}\n}\n`);
  });

  /**
   * Runs terraform in a case's directory without blocking this process (the server lives here): the
   * command's words (`['state', 'rm']`), then its options, then its arguments (flags after an
   * argument would be taken for arguments).
   */
  async function terraform(dir: string, command: string[], args: string[] = [], allowStatus: number[] = [0]) {
    const flags = ['-no-color', ...(['apply', 'plan', 'import', 'destroy'].includes(command[0]) ? ['-input=false'] : [])];
    const run = await runSuite(options.terraform.HANGAR_TERRAFORM, [...command, ...flags, ...args], dir, {
      ...options.terraform,
      TF_CLI_CONFIG_FILE: cliConfig,
      TF_IN_AUTOMATION: '1',
      ...options.env(),
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

  for (const c of readProviderCases(casesDir)) {
    if (c.knownFailure) {
      test.skip(`${c.name} (known failure: ${c.knownFailure})`, () => undefined);
      continue;
    }
    const missing = options.unmet?.(c.needs) ?? [];
    if (missing.length > 0) {
      test.skip(`${c.name} (needs ${missing.join(', ')}, not installed)`, () => undefined);
      continue;
    }
    test(c.name, async () => {
      for (const need of c.needs) await options.provide?.(need);
      const dir = mkdtempSync(join(tmpdir(), `${provider}-provider-${c.name}-`));
      copyFileSync(join(casesDir, `${c.name}.tf`), join(dir, 'main.tf'));
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
}
