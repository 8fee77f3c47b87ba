import { VERSION } from '../engine/version';

/**
 * What `hangar --version` (or `hangar version`) prints, or undefined for any other command line.
 * Shared by the start-up entry (which answers it without loading the rest of the CLI) and main.
 */
export function versionOutput(argv: readonly string[]): string | undefined {
  return argv[0] === '--version' || argv[0] === 'version' ? `hangar ${VERSION}\n` : undefined;
}
