import { ConnectionSpec } from './payload-format';
import { openTransport } from '../client/open';
import { RegistryClient } from '../client/registry';

export interface Clients {
  readonly registry: RegistryClient;
  /** Where the clients talk to, for messages. */
  readonly target: string;
  close(): Promise<void>;
}

const DEFAULT_TOKEN_ENV = 'HANGAR_TOKEN';

/**
 * Clients for a connection: HTTP with the token from the named environment variable, or the
 * engine in this process on the data directory (as the local administrator).
 */
export async function openClients(connection: ConnectionSpec, env: NodeJS.ProcessEnv = process.env): Promise<Clients> {
  const tokenEnv = connection.tokenEnv ?? DEFAULT_TOKEN_ENV;
  const token = env[tokenEnv] || undefined;
  if (connection.endpoints && !token) throw new Error(`no token: set the environment variable ${tokenEnv} to a Hangar token`);
  const transport = await openTransport(connection, env);
  return {
    registry: new RegistryClient(transport, connection.endpoints ? token : undefined),
    target: transport.target,
    close: () => transport.close(),
  };
}
