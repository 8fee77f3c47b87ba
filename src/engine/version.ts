/**
 * Hangar's version, reported by `hangar --version` and the health endpoints: package.json's, which
 * stays 0.0.0 in the repository and is set only while a release builds (docs/releasing.md), so a
 * released CLI, its packages and its tag carry one version. The bundled CLI has it written in by
 * scripts/bundle.mjs (HANGAR_VERSION), so that its small entry does not carry the whole package.json.
 */
declare const HANGAR_VERSION: string | undefined;

// eslint-disable-next-line @typescript-eslint/no-require-imports
const fromPackage = (): string => (require('../../package.json') as { version: string }).version;

export const VERSION: string = typeof HANGAR_VERSION === 'string' ? HANGAR_VERSION : fromPackage();
