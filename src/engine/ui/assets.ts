import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';

/**
 * The consoles' browser files (scripts, styles), built by scripts/bundle-ui.mjs. The bundled CLI
 * carries them inside (scripts/bundle.mjs defines HANGAR_UI_ASSETS), so `hangar server` needs no
 * file beside it; the engine run from its TypeScript sources (tests) reads them from assets/ui/.
 */
declare const HANGAR_UI_ASSETS: Record<string, string> | undefined;

export interface UiAsset {
  readonly body: Buffer;
  readonly contentType: string;
  /** sha256 of the content, shortened: the ETag and the `?v=` of the URLs that never go stale. */
  readonly hash: string;
}

const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.txt': 'text/plain; charset=utf-8',
};

let assets: ReadonlyMap<string, UiAsset> | undefined;

/** The built files by name (`registry.js`, `style.css`, ...). */
export function uiAssets(): ReadonlyMap<string, UiAsset> {
  if (!assets) {
    const files = typeof HANGAR_UI_ASSETS !== 'undefined' ? HANGAR_UI_ASSETS : readBuiltFiles();
    const map = new Map<string, UiAsset>();
    for (const [name, text] of Object.entries(files)) {
      const body = Buffer.from(text, extname(name) === '.png' ? 'base64' : 'utf8');
      const hash = createHash('sha256').update(body).digest('hex').slice(0, 16);
      map.set(name, { body, contentType: CONTENT_TYPES[extname(name)] ?? 'application/octet-stream', hash });
    }
    assets = map;
  }
  return assets;
}

function readBuiltFiles(): Record<string, string> {
  const dir = resolve(__dirname, '../../../assets/ui');
  if (!existsSync(dir)) throw new Error(`the web UI is not built (${dir} is missing): run node scripts/bundle.mjs`);
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir)) {
    files[name] = readFileSync(join(dir, name)).toString(extname(name) === '.png' ? 'base64' : 'utf8');
  }
  return files;
}
