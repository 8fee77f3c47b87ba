const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MOUNT_PATH = /^[A-Za-z0-9][A-Za-z0-9_.-]*(\/[A-Za-z0-9][A-Za-z0-9_.-]*)*$/;

/** Seconds of a duration prop ("90", "90s", "30m", "1h30m", "2d"); throws a message with the fix. */
export function durationSeconds(what: string, value: string | undefined): number {
  if (value === undefined || value === '') return 0;
  if (/^\d+$/.test(value)) return Number(value);
  const parts = [...value.matchAll(/(\d+)([smhd])/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join('') !== value) {
    throw new Error(`${what} "${value}" is not a duration: use seconds ("90") or units s, m, h, d ("30m", "1h30m")`);
  }
  return parts.reduce((sum, p) => sum + Number(p[1]) * UNITS[p[2]], 0);
}

/** A mount path without surrounding slashes; throws with the fix. */
export function mountPath(what: string, value: string): string {
  const path = value.replace(/^\/+|\/+$/g, '');
  if (!MOUNT_PATH.test(path)) {
    throw new Error(`${what} "${value}" is invalid: use segments of letters, digits, ".", "_" and "-" separated by "/", e.g. "team/pki"`);
  }
  return path;
}

export function envName(what: string, value: string | undefined): string | undefined {
  if (value !== undefined && !ENV_NAME.test(value)) {
    throw new Error(`${what} "${value}" is not an environment variable name: the value itself never goes into the stack; use e.g. "OIDC_CLIENT_SECRET"`);
  }
  return value;
}

export function httpUrl(what: string, value: string | undefined): string | undefined {
  if (value !== undefined && !/^https?:\/\/[^\s/]+(\/\S*)?$/.test(value)) throw new Error(`${what} "${value}" is not an http(s) URL`);
  return value;
}
