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

/**
 * Seconds of a TTL prop and of its maximum; throws when both are set and the TTL is the longer.
 * `names` are the two props' names as the user wrote them (e.g. ['ttl', 'maxTtl']).
 */
export function ttlWithMax(what: string, names: [string, string], ttl: string | undefined, maxTtl: string | undefined): [number, number] {
  const [ttlName, maxName] = names;
  const seconds = durationSeconds(`${what} ${ttlName}`, ttl);
  const maxSeconds = durationSeconds(`${what} ${maxName}`, maxTtl);
  if (maxSeconds && seconds > maxSeconds) {
    throw new Error(`${what}: ${ttlName} (${seconds}s) is longer than ${maxName} (${maxSeconds}s); shorten it or raise ${maxName}`);
  }
  return [seconds, maxSeconds];
}

/**
 * The path of an engine's mount, given as a mount construct (`prop`, which must be of `type`) or as
 * a path (`path`, else `fallback`); throws when the construct is another engine's mount.
 */
export function engineMountPath(
  what: string,
  mount: { readonly type: string; readonly path: string } | undefined,
  path: string | undefined,
  engine: { readonly type: string; readonly fallback: string; readonly prop?: string; readonly give?: string },
): string {
  if (mount && mount.type !== engine.type) {
    throw new Error(`${what}: ${engine.prop ?? 'mount'} is a "${mount.type}" mount; give ${engine.give ?? `a SecretsMount of type "${engine.type}"`}`);
  }
  return mount?.path ?? mountPath(`${what} path`, path ?? engine.fallback);
}

/** A role or object name of letters, digits, "_", "-", "." (and "@" where `at`), not first or last; throws with the fix. */
export function objectName(what: string, value: string, at = false): string {
  const rule = at ? /^\w([\w.@-]{0,126}\w)?$/ : /^\w([\w.-]{0,126}\w)?$/;
  if (!rule.test(value)) {
    throw new Error(`${what} name "${value}" is invalid: use letters, digits, "_", "-"${at ? ', "." and "@"' : ' and "."'} (not first or last)`);
  }
  return value;
}
