// Bundles the hangar CLI into one file, assets/hangar.cjs: what `npx hangar` runs and what the
// constructs copy into cdktf.out for their custom resources. One file loads fast and needs no
// node_modules on the machine that runs `terraform apply`.
import { chmodSync, mkdirSync } from 'node:fs';
import { build } from 'esbuild';

mkdirSync('assets', { recursive: true });
const result = await build({
  entryPoints: ['src/cli/bin.ts'],
  outfile: 'assets/hangar.cjs',
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'cjs',
  minify: true,
  keepNames: true,
  legalComments: 'linked',
  // pg tries the optional native binding first; it is never installed.
  external: ['pg-native'],
  banner: { js: '#!/usr/bin/env node' },
  metafile: true,
  logLevel: 'warning',
});
chmodSync('assets/hangar.cjs', 0o755);
const bytes = Object.values(result.metafile.outputs).reduce((n, o) => n + o.bytes, 0);
console.log(`assets/hangar.cjs: ${(bytes / 1024).toFixed(0)} KiB`);
