import { ConnectionSpec } from './payload-format';
import { CatalogClient } from '../client/catalog';
import { openTransport } from '../client/open';
import { RegistryClient } from '../client/registry';
import { SecretsClient } from '../client/secrets';

export interface Clients {
  readonly registry: RegistryClient;
  readonly secrets: SecretsClient;
  readonly catalog: CatalogClient;
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
  const callerToken = connection.endpoints ? token : undefined;
  return {
    registry: new RegistryClient(transport, callerToken),
    secrets: new SecretsClient(transport, callerToken),
    catalog: new CatalogClient(transport, callerToken),
    target: transport.target,
    close: () => transport.close(),
  };
}

/**
 * Runs `use` with clients for any connection it asks for, each opened on first use (a data directory's
 * engine opens once for all its objects) and all closed at the end.
 */
export async function withConnections<T>(
  use: (clientsFor: (connection: ConnectionSpec) => Promise<Clients>) => Promise<T>,
  env: NodeJS.ProcessEnv = process.env,
): Promise<T> {
  const open = new Map<string, Promise<Clients>>();
  try {
    return await use((connection) => {
      const id = JSON.stringify(connection);
      let clients = open.get(id);
      if (!clients) open.set(id, (clients = openClients(connection, env)));
      return clients;
    });
  } finally {
    for (const clients of open.values()) await (await clients.catch(() => undefined))?.close();
  }
}
