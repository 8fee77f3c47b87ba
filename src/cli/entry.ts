/**
 * The first code of the bundled CLI (assets/hangar.cjs). V8 must read and scan a script before it
 * runs any of it, and the whole CLI is megabytes of JavaScript: `hangar --version` took 4.5x
 * `node -e 0` for that alone. So scripts/bundle.mjs stores the CLI (src/cli/bin.ts and everything
 * it imports) brotli-compressed in a comment after this small entry, which answers --version by
 * itself and unpacks and runs the rest for any other command. One file still, as the constructs
 * copy one file into cdktf.out.
 *
 * With NODE_COMPILE_CACHE set (the custom resources set it), the unpacked CLI is kept there as a
 * file named by its hash and required from there: V8's compile cache then serves it, and later
 * runs skip the unpacking too.
 */
import './node-check';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { packedRange } from './packed';
import { versionOutput } from './version-request';

/** Hash and size in bytes of the packed CLI, set by scripts/bundle.mjs. */
declare const HANGAR_CLI_HASH: string;
declare const HANGAR_CLI_BYTES: number;

/**
 * The CLI's source from the comment at the end of this file. Decompressed into one buffer of its
 * size: in zlib's default 16 KiB pieces, the megabytes of freed pieces stayed resident for the
 * process's life (glibc cannot give back heap memory below a block still in use), 12 MiB of a
 * server's memory at rest.
 */
function unpack(): string {
  const self = readFileSync(__filename, 'latin1');
  const { start, end } = packedRange(self);
  const { brotliDecompressSync } = require('node:zlib') as typeof import('node:zlib');
  return brotliDecompressSync(Buffer.from(self.slice(start, end), 'base64'), { chunkSize: HANGAR_CLI_BYTES + 1 }).toString('utf8');
}

function runCli(): void {
  const cacheDir = process.env.NODE_COMPILE_CACHE;
  if (cacheDir) {
    // Absolute: require() takes a bare relative path for a package name.
    const file = resolve(cacheDir, `hangar-cli-${HANGAR_CLI_HASH}.cjs`);
    try {
      if (!existsSync(file)) {
        // Parallel custom resources may unpack at once: each writes its own file, then renames.
        mkdirSync(cacheDir, { recursive: true });
        const temp = `${file}.${process.pid}.${Date.now()}`;
        writeFileSync(temp, unpack(), { mode: 0o600, flag: 'wx' });
        renameSync(temp, file);
      }
    } catch {
      // A cache directory that cannot be written only costs speed: run from memory instead.
    }
    if (existsSync(file)) {
      require(file);
      return;
    }
  }
  const Module = require('node:module') as typeof import('node:module');
  const cli = new Module(__filename, module);
  cli.filename = __filename;
  cli.paths = module.paths;
  (cli as unknown as { _compile(source: string, filename: string): void })._compile(unpack(), __filename);
}

const version = versionOutput(process.argv.slice(2));
if (version) process.stdout.write(version);
else runCli();
