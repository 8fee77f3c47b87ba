import type { Endpoints, Transport } from './transport';
import { defaultDataDir } from '../engine/data-dir';

/**
 * A transport to a running server (endpoints) or to the engine on a data directory, in this
 * process. The engine and the HTTP client are loaded (required) only for the mode in use.
 */
export async function openTransport(
  where: { readonly endpoints?: Endpoints; readonly dataDir?: string },
  env: NodeJS.ProcessEnv = process.env,
): Promise<Transport & { readonly target: string }> {
  if (where.endpoints) {
    const { HttpTransport } = require('./http-transport') as typeof import('./http-transport');
    return Object.assign(new HttpTransport(where.endpoints), { target: Object.values(where.endpoints).join(', ') });
  }
  const dataDir = where.dataDir ?? defaultDataDir(env);
  const { Engine } = require('../engine/engine') as typeof import('../engine/engine');
  const { InProcessTransport } = require('./in-process-transport') as typeof import('./in-process-transport');
  const engine = await Engine.open({ storage: { kind: 'sqlite', dataDir }, dataDir });
  // No server may run on this directory, so nobody else finishes what is due (a namespace being
  // removed, expired leases and sessions): do one round first. Each job's lease keeps this from
  // racing a server or another CLI process on the same file; it is given back after the round, so
  // the next command (a deploy runs one per resource) does not find it held by a process now gone.
  await engine.scheduler.runOnce({ releaseLeases: true });
  return Object.assign(new InProcessTransport(engine), { target: dataDir });
}
