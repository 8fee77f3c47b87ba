import { catalogConsole } from './catalog/console';
import { registryConsole } from './registry/console';
import { secretsConsole } from './secrets/console';
import type { ConsoleDef } from './shared/console';

/** The console each listener serves (the server renders their pages; each main.ts starts one in the browser). */
export const CONSOLES: Readonly<Record<ConsoleDef['service'], ConsoleDef>> = {
  registry: registryConsole,
  secrets: secretsConsole,
  catalog: catalogConsole,
};
