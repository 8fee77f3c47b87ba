/**
 * Imported first by the CLI entry point. Hangar needs Node.js >= 22.12 (node:sqlite); a pipeline
 * runs whichever Node.js it has. On an older one the CLI runs itself again on a newer Node.js (see
 * node-fallback.ts) or, when none can be found, refuses with a message a person can act on. It also
 * keeps node:sqlite's "experimental" warning off every command's stderr, ends a rerun with the process
 * that started it (rerun.ts), and gives `hangar server` the V8 flags it runs with (runtime-flags.ts).
 */
import { endWithRerunParent } from './rerun';
import { execWithNodeFlags } from './runtime-flags';

const MINIMUM = [22, 12] as const;
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
  // Required only here: the fallback's code never loads on a supported Node.js.
  const { rerunOnNewerNode } = require('./node-fallback') as typeof import('./node-fallback');
  const code = rerunOnNewerNode(`${MINIMUM[0]}.${MINIMUM[1]}`);
  if (code === undefined) {
    process.stderr.write(
      `hangar: error: Node.js >= ${MINIMUM.join('.')} is required (this is ${process.version}); ` +
        'install a newer Node.js or point HANGAR_NODE at one\n',
    );
  }
  process.exit(code ?? 1);
}

// This runs twice in the bundled CLI: in its small entry and in the CLI it unpacks. The second filter
// replaces the first and wraps Node's own emitWarning, kept on `process`: a filter wrapping the
// entry's would keep the entry's script alive, and with it the packed CLI it carries (1.7 MB).
const ORIGINAL = Symbol.for('hangar.emitWarning');
const state = process as unknown as Record<symbol, typeof process.emitWarning | undefined>;
const emitWarning = (state[ORIGINAL] ??= process.emitWarning);
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const text = typeof warning === 'string' ? warning : warning.message;
  if (/SQLite is an experimental feature/.test(text)) return;
  (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
}) as typeof process.emitWarning;

// In this order: a server that replaces itself keeps the rerun's mark for its new image to read.
execWithNodeFlags();
endWithRerunParent();

export {};
