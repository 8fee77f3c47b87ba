// esbuild for the bundle scripts: the project's, or, when HANGAR_BUILD_MODULES names another
// node_modules (the few packages `npm run server` installs on a fresh clone: scripts/server-build.mjs),
// that one's, which then also resolves the packages the bundles import.
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';

const modules = process.env.HANGAR_BUILD_MODULES ? resolve(process.env.HANGAR_BUILD_MODULES) : undefined;
const require = createRequire(modules ? join(modules, '..', 'package.json') : import.meta.url);

export const { build } = require('esbuild');
/** For esbuild's nodePaths: where the bundled packages are found when not in the project's node_modules. */
export const nodePaths = modules ? [modules] : [];
