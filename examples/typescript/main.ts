import { App, TerraformStack } from 'cdktf';
import { Construct } from 'constructs';
// In your own app: import { Box, Hangar } from 'hangar-cdktf';
import { Box, Hangar } from '../../src';

export interface ExampleOptions {
  /** A running server's registry URL; unset: the embedded engine. */
  readonly registryUrl?: string;
  /** The embedded engine's data directory; unset: HANGAR_DATA at deploy time, else the default. */
  readonly dataDir?: string;
  /** Name of the environment variable with the token at deploy time (HTTP mode). */
  readonly tokenEnvVar?: string;
  /** The organization that owns the boxes; it must exist (`hangar registry create-org`). */
  readonly owner?: string;
  readonly webDescription?: string;
  /** Whether the stack declares the db box (removing it from the stack deletes the box). */
  readonly withDb?: boolean;
}

/** What Hangar supports so far: boxes in the registry. */
export class ExampleStack extends TerraformStack {
  constructor(scope: Construct, id: string, options: ExampleOptions = {}) {
    super(scope, id);
    const hangar = new Hangar(this, 'Hangar', {
      registryUrl: options.registryUrl,
      dataDir: options.dataDir,
      tokenEnvVar: options.tokenEnvVar,
    });
    const owner = options.owner ?? 'acme';
    new Box(this, 'Web', {
      hangar,
      owner,
      name: 'web',
      shortDescription: options.webDescription ?? 'Nginx on Debian 12',
      description: '# web\n\nA box with nginx, built nightly.',
      private: false,
    });
    if (options.withDb ?? true) new Box(this, 'Db', { hangar, owner, name: 'db', shortDescription: 'PostgreSQL 15' });
  }
}

// `cdktf synth` / `cdktf deploy` (cdktf.json runs this file). With HANGAR_REGISTRY_URL set the
// stack manages that server, with the token from HANGAR_TOKEN at deploy time.
if (require.main === module) {
  const app = new App();
  new ExampleStack(app, 'hangar-example', {
    registryUrl: process.env.HANGAR_REGISTRY_URL || undefined,
    owner: process.env.HANGAR_EXAMPLE_OWNER,
  });
  app.synth();
}
