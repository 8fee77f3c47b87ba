/** Hangar's version, reported by `hangar --version` and the health endpoints. */
export const VERSION = '0.1.0';
