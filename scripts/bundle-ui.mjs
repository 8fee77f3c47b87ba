// Builds the web UI's browser files into assets/ui/: one script per console (src/ui/<name>/main.ts,
// Preact and the shared code included), the shared stylesheet (src/ui/shared/style.css) and a
// console's own stylesheet when it has one (src/ui/<name>/style.css). scripts/bundle.mjs embeds
// them in the one-file CLI; the engine run from source (the tests) reads them from assets/ui/.
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build, nodePaths } from './esbuild.mjs';

export const CONSOLES = ['registry', 'secrets', 'catalog'];
const OUT = 'assets/ui';

/** Builds the files; resolves to their contents by file name. */
export async function bundleUi() {
  const entryPoints = [{ in: 'src/ui/shared/style.css', out: 'style' }];
  for (const name of CONSOLES) {
    if (existsSync(`src/ui/${name}/main.ts`)) entryPoints.push({ in: `src/ui/${name}/main.ts`, out: name });
    if (existsSync(`src/ui/${name}/style.css`)) entryPoints.push({ in: `src/ui/${name}/style.css`, out: name });
  }
  const result = await build({
    entryPoints,
    outdir: OUT,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    // Browsers of the last few years; no polyfills.
    target: ['chrome111', 'firefox115', 'safari16.4'],
    minify: true,
    legalComments: 'eof',
    logLevel: 'warning',
    write: false,
    nodePaths,
  });
  const files = {};
  for (const file of result.outputFiles) files[basename(file.path)] = file.text;
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  for (const [name, text] of Object.entries(files)) writeFileSync(join(OUT, name), text);
  return files;
}
