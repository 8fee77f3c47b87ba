/**
 * Hangar's version, reported by `hangar --version` and the health endpoints: package.json's, which
 * stays 0.0.0 in the repository and is set only while a release builds (docs/releasing.md), so a
 * released CLI, its packages and its tag carry one version.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const VERSION: string = (require('../../package.json') as { version: string }).version;
