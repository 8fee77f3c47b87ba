/**
 * Imported first by the CLI entry point: refuses a Node.js without node:sqlite with a message a
 * person can act on, and keeps node:sqlite's "experimental" warning off every command's stderr.
 */
const [major, minor] = process.versions.node.split('.').map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  process.stderr.write(
    `hangar: error: Node.js >= 22.12 is required (this is ${process.version}); ` +
      'install a newer Node.js or point HANGAR_NODE at one\n',
  );
  process.exit(1);
}

const emitWarning = process.emitWarning.bind(process);
process.emitWarning = ((warning: string | Error, ...rest: unknown[]) => {
  const text = typeof warning === 'string' ? warning : warning.message;
  if (/SQLite is an experimental feature/.test(text)) return;
  (emitWarning as (...args: unknown[]) => void)(warning, ...rest);
}) as typeof process.emitWarning;

export {};
