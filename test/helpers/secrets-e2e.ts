import { RunningServer, startServerProcess } from './cli';
import { openTransport } from '../../src/client/open';
import { SecretsClient } from '../../src/client/secrets';

export interface DevSecretsServer {
  readonly server: RunningServer;
  /** A secrets client on the server's HTTP API, as root. */
  readonly client: SecretsClient;
  /** The server's random root token (never to be found in Terraform files or state). */
  readonly rootToken: string;
}

/** A `hangar --dev` server process with a random root token, for construct e2e tests. */
export async function startDevSecrets(): Promise<DevSecretsServer> {
  const rootToken = `root-${Math.random().toString(36).slice(2)}-secret`;
  const server = await startServerProcess(['--dev', '--dev-root-token', rootToken]);
  const client = new SecretsClient(await openTransport({ endpoints: { secrets: server.urls.secrets } }), rootToken);
  return { server, client, rootToken };
}
