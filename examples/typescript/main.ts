import { App, TerraformStack } from 'cdktf';
import { Construct } from 'constructs';
import { Box, Hangar } from '../../src';

/**
 * A stack that declares what Hangar supports so far. With HANGAR_REGISTRY_URL set it manages a
 * running server (token from HANGAR_TOKEN); otherwise the embedded engine on HANGAR_DATA.
 */
export class RegistryStack extends Construct {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    if (process.env.HANGAR_REGISTRY_URL) {
      new Hangar(this, 'Hangar', { registryUrl: process.env.HANGAR_REGISTRY_URL });
    }
    const owner = process.env.HANGAR_EXAMPLE_OWNER ?? 'acme';
    new Box(this, 'Web', {
      owner,
      name: 'web',
      shortDescription: process.env.HANGAR_EXAMPLE_WEB_DESCRIPTION ?? 'Nginx on Debian 12',
      description: '# web\n\nA box with nginx, built nightly. Costs `${nothing}` to run.',
      private: false,
    });
    if (process.env.HANGAR_EXAMPLE_WITHOUT_DB !== '1') {
      new Box(this, 'Db', { owner, name: 'db', shortDescription: 'PostgreSQL 15' });
    }
  }
}

class ExampleStack extends TerraformStack {
  constructor(scope: Construct, id: string) {
    super(scope, id);
    new RegistryStack(this, 'Registry');
  }
}

const app = new App();
new ExampleStack(app, 'hangar-example');
app.synth();
