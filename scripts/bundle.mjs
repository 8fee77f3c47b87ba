// Bundles the hangar CLI into one file, assets/hangar.cjs: what `npx hangar` runs and what the
// constructs copy into cdktf.out for their custom resources. One file needs no node_modules on the
// machine that runs `terraform apply`. The file is a small entry (src/cli/entry.ts) followed by the
// whole CLI (src/cli/bin.ts), brotli-compressed in a comment: V8 scans every byte of a script
// before running it, so `hangar --version` would otherwise pay for megabytes it never runs.
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { brotliCompressSync, constants } from 'node:zlib';
import { build, nodePaths } from './esbuild.mjs';
import { bundleUi } from './bundle-ui.mjs';
import { asciiOnly, checkLazyFactories } from './bundle-memory.mjs';

const common = {
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'cjs',
  // Whitespace and syntax minified, identifiers kept: names stay as written (libraries read some,
  // such as class names in error types and asn1-schema's "Sequence"), so esbuild's keepNames, which
  // wraps every function a request creates in a __name() call, is not needed. That call cost 10-30%
  // of a cheap request's CPU; the longer identifiers cost about 17 ms more per CLI start with the
  // compile cache (docs/performance.md).
  minifyWhitespace: true,
  minifySyntax: true,
  // pg tries the optional native binding first; it is never installed.
  external: ['pg-native'],
  logLevel: 'warning',
  write: false,
  nodePaths,
  // One version everywhere (src/engine/version.ts): package.json's, as a release build sets it.
  define: { HANGAR_VERSION: JSON.stringify(JSON.parse(readFileSync('package.json', 'utf8')).version) },
};

mkdirSync('assets', { recursive: true });
// The web UI's browser files travel inside the CLI (src/engine/ui/assets.ts).
const ui = await bundleUi();
const cli = await build({
  ...common,
  entryPoints: ['src/cli/bin.ts'],
  outfile: 'assets/hangar.cjs',
  legalComments: 'linked',
  define: { ...common.define, HANGAR_UI_ASSETS: JSON.stringify(ui) },
});
let source = '';
for (const file of cli.outputFiles) {
  if (file.path.endsWith('.LEGAL.txt')) writeFileSync(file.path, file.contents);
  else source = file.text;
}
// Parsed lazily and stored one byte per character: the server's memory at rest (scripts/bundle-memory.mjs).
checkLazyFactories(source);
source = asciiOnly(source);
// Quality 9, not brotli's best (11): on 7 MB of CLI, 11 took ten times as long to compress (15 to 40 s,
// the bulk of a first `npm run server`) and four times as long to unpack (72 ms against 18 ms, paid by
// every command but --version) for 12% fewer bytes (1.37 MB against 1.55 MB).
const packed = brotliCompressSync(Buffer.from(source), {
  params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: source.length },
}).toString('base64');
const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
const entry = await build({
  ...common,
  entryPoints: ['src/cli/entry.ts'],
  legalComments: 'none',
  define: { ...common.define, HANGAR_CLI_HASH: JSON.stringify(hash), HANGAR_CLI_BYTES: String(Buffer.byteLength(source)) },
});
// The packed CLI on a line of its own, where src/cli/packed.ts looks for it.
writeFileSync(
  'assets/hangar.cjs',
  `#!/usr/bin/env node\n${entry.outputFiles[0].text}/*! For license information please see ${basename('assets/hangar.cjs')}.LEGAL.txt */\n/*${packed}*/\n`,
);
chmodSync('assets/hangar.cjs', 0o755);
console.log(`assets/hangar.cjs: ${(source.length / 1024).toFixed(0)} KiB of CLI, ${(packed.length / 1024).toFixed(0)} KiB packed`);
