import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/**
 * The public services' own tools that judge Hangar: the `vault` and `consul` binaries (their CLIs) built by
 * scripts/build-public-services. `.ci/run` builds them before the tests (cached outside the clone);
 * a test never builds one (that takes 20-40 minutes). Undefined when it is not built; under CI a
 * missing binary is a failure.
 */
export function publicServiceBinary(name: 'vault' | 'consul'): string | undefined {
  const variable = name === 'vault' ? 'HANGAR_BENCH_VAULT' : 'HANGAR_BENCH_CONSUL';
  if (process.env[variable]) return process.env[variable];
  try {
    const out = execFileSync(join(ROOT, 'scripts', 'build-public-services'), ['--check', name], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return /='([^']+)'/.exec(out)?.[1];
  } catch (err) {
    if (process.env.CI) throw new Error(`the ${name} binary is not built: run scripts/build-public-services ${name} (${String(err)})`);
    return undefined;
  }
}

/**
 * The directory holding a public service's Terraform provider binary (hashicorp/vault or
 * hashicorp/consul), built by `scripts/build-terraform-provider <name>` from a clone of its
 * repository (the Go module proxy does not serve its source). Undefined when it is not built, under
 * CI too: a fresh machine cannot build it (docs/compatibility.md, "The public service's Terraform
 * provider").
 */
export function tfProviderDir(name: 'vault' | 'consul'): string | undefined {
  const variable = `HANGAR_TF_PROVIDER_${name.toUpperCase()}_DIR`;
  if (process.env[variable]) return process.env[variable];
  try {
    const out = execFileSync(join(ROOT, 'scripts', 'build-terraform-provider'), [name, '--check'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    return /='([^']+)'/.exec(out)?.[1];
  } catch {
    return undefined;
  }
}
