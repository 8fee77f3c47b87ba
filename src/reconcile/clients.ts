import { RegistryClient } from '../client/registry';
import { HttpTransport, InProcessTransport, Transport } from '../client/transport';
import { Engine } from '../engine/engine';
import { defaultDataDir } from '../engine/data-dir';
import { ConnectionSpec } from './payload-format';

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
  let transport: Transport;
  let target: string;
  if (connection.endpoints) {
    if (!token) throw new Error(`no token: set the environment variable ${tokenEnv} to a Hangar token`);
    transport = new HttpTransport(connection.endpoints);
    target = Object.values(connection.endpoints).join(', ');
  } else {
    const dataDir = connection.dataDir ?? defaultDataDir(env);
    const engine = await Engine.open({ storage: { kind: 'sqlite', dataDir }, dataDir });
    transport = new InProcessTransport(engine);
    target = dataDir;
  }
  return {
    registry: new RegistryClient(transport, connection.endpoints ? token : undefined),
    target,
    close: () => transport.close(),
  };
}
