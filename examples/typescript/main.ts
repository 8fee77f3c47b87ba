import { App, TerraformStack } from 'cdktf';
import { Construct } from 'constructs';
// In your own app: import { Box, Hangar } from 'hangar-cdktf';
import { Box, Hangar } from '../../src';

/**
 * What Hangar supports so far: boxes in the registry. With HANGAR_REGISTRY_URL set the stack
 * manages a running server (token from HANGAR_TOKEN at deploy time); otherwise the embedded engine
 * on HANGAR_DATA. The owner must exist: `hangar registry create-org acme --owner alice`.
 */
export class ExampleStack extends TerraformStack {
  constructor(scope: Construct, id: string, env: NodeJS.ProcessEnv = process.env) {
    super(scope, id);
    new Hangar(this, 'Hangar', { registryUrl: env.HANGAR_REGISTRY_URL || undefined });
    const owner = env.HANGAR_EXAMPLE_OWNER ?? 'acme';
    new Box(this, 'Web', {
      owner,
      name: 'web',
      shortDescription: 'Nginx on Debian 12',
      description: '# web\n\nA box with nginx, built nightly.',
      private: false,
    });
    new Box(this, 'Db', { owner, name: 'db', shortDescription: 'PostgreSQL 15' });
  }
}

if (require.main === module) {
  const app = new App();
  new ExampleStack(app, 'hangar-example');
  app.synth();
}
