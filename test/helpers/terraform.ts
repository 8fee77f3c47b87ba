import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, LocalBackend, TerraformStack } from 'cdktf';
import { tempDir } from './storage';

const ROOT = join(__dirname, '..', '..');

/**
 * The environment that makes `terraform` (or a locally built `tofu`) and the null provider work
 * offline, from scripts/setup-terraform. Undefined when unavailable outside CI; a failure under CI.
 */
export function terraformEnv(): Record<string, string> | undefined {
  let out: string;
  try {
    out = execFileSync(join(ROOT, 'scripts', 'setup-terraform'), { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], timeout: 15 * 60_000 });
  } catch (err) {
    if (process.env.CI) throw err;
    return undefined;
  }
  const env: Record<string, string> = {};
  for (const line of out.split('\n')) {
    const m = /^export ([A-Z_]+)=(.*)$/.exec(line.trim());
    if (!m) continue;
    const value = m[2].replace(/^"|"$/g, '').replace(/"?\$PATH"?$/, process.env.PATH ?? '').replace(/\$\{?PATH\}?/, process.env.PATH ?? '');
    env[m[1]] = value;
  }
  return env;
}

/** How many provisioners (processes) a Terraform run's output says it started. */
export function provisionerRuns(output: string): number {
  return output.match(/\(local-exec\): Executing:/g)?.length ?? 0;
}

/** The two ways a stack's objects are applied (HangarProps.batch), for `test.each`. */
export const APPLY_MODES = [
  ['one process per object', false],
  ['batch', true],
] as const;

/**
 * A Terraform working directory fed by successive syntheses of one stack, as a pipeline would
 * run `cdktf deploy` after each change of the app.
 */
export class TerraformWorkspace {
  readonly dir = tempDir('hangar-tf-');
  private initialised = false;

  constructor(
    private readonly tfEnv: Record<string, string>,
    private readonly extraEnv: Record<string, string> = {},
  ) {}

  /** Synthesizes a stack that `build` fills in, and copies it into the working directory. */
  synth(build: (stack: TerraformStack) => void): Record<string, any> {
    return this.synthStack((app) => {
      const stack = new TerraformStack(app, 'stack');
      build(stack);
      return stack;
    });
  }

  /** Synthesizes the stack `create` makes (its id must be "stack") into the working directory. */
  synthStack(create: (app: App) => TerraformStack): Record<string, any> {
    const app = new App({ outdir: tempDir('hangar-synth-') });
    const stack = create(app);
    // cdktf's default local backend writes the state next to the app (the cwd); keep it here.
    new LocalBackend(stack, { path: 'terraform.tfstate' });
    app.synth();
    const stackDir = join(app.outdir, 'stacks', 'stack');
    mkdirSync(this.dir, { recursive: true });
    cpSync(stackDir, this.dir, { recursive: true });
    return JSON.parse(readFileSync(join(this.dir, 'cdk.tf.json'), 'utf8'));
  }

  /** Runs the Terraform binary; throws with its output on failure. */
  run(...args: string[]): string {
    const res = spawnSync(this.tfEnv.HANGAR_TERRAFORM, [...args, '-no-color'], {
      cwd: this.dir,
      env: { ...process.env, ...this.tfEnv, NODE_OPTIONS: '', HANGAR_NODE: process.execPath, ...this.extraEnv },
      encoding: 'utf8',
      timeout: 5 * 60_000,
    });
    const output = `${res.stdout}${res.stderr}`;
    if (res.status !== 0) throw new Error(`terraform ${args.join(' ')} failed (${res.status}):\n${output}`);
    return output;
  }

  /** `cdktf deploy`: init once, then apply. */
  deploy(): string {
    if (!this.initialised) {
      this.run('init', '-input=false');
      this.initialised = true;
    }
    return this.run('apply', '-auto-approve', '-input=false');
  }

  destroy(): string {
    return this.run('destroy', '-auto-approve', '-input=false');
  }

  /** Everything Terraform keeps: the configuration, the state, and the saved plan as JSON. */
  everythingStored(): string {
    this.run('plan', '-input=false', '-out=plan.out');
    const plan = this.run('show', '-json', 'plan.out');
    const state = readFileSync(join(this.dir, 'terraform.tfstate'), 'utf8');
    return [readFileSync(join(this.dir, 'cdk.tf.json'), 'utf8'), state, plan].join('\n');
  }
}
