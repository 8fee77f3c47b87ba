/**
 * Path patterns of the consoles' pages, relative to the console's mount: `/`, `/:username`,
 * `/:username/boxes/:name`, `/kv/*key` (a `*` parameter takes the rest of the path, slashes included).
 * The server and the browser match with this one function, so both see the same pages.
 */
export interface Match<R> {
  readonly route: R;
  readonly params: Record<string, string>;
}

const compiled = new Map<string, { regex: RegExp; names: string[] }>();

function compile(pattern: string): { regex: RegExp; names: string[] } {
  let c = compiled.get(pattern);
  if (!c) {
    const names: string[] = [];
    const source = pattern
      .split('/')
      .map((part) => {
        if (part.startsWith(':')) {
          names.push(part.slice(1));
          return '([^/]+)';
        }
        if (part.startsWith('*')) {
          names.push(part.slice(1));
          return '(.*)';
        }
        return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('/');
    c = { regex: new RegExp(`^${source}/?$`), names };
    compiled.set(pattern, c);
  }
  return c;
}

/** The first route whose pattern matches `path` (already relative to the mount), with its decoded parameters. */
export function matchRoute<R extends { readonly path: string }>(routes: readonly R[], path: string): Match<R> | undefined {
  for (const route of routes) {
    const { regex, names } = compile(route.path);
    const m = regex.exec(path);
    if (!m) continue;
    const params: Record<string, string> = {};
    try {
      names.forEach((name, i) => (params[name] = decodeURIComponent(m[i + 1] ?? '')));
    } catch {
      continue; // a malformed %-escape matches nothing
    }
    return { route, params };
  }
  return undefined;
}

/** `/ui/` + `/kv/a` = `/ui/kv/a`; `/` + `/x` = `/x`. */
export function joinPath(mount: string, path: string): string {
  return mount.replace(/\/$/, '') + (path.startsWith('/') ? path : `/${path}`);
}

/** The path relative to the mount, or undefined when `pathname` is outside it. */
export function pathInMount(mount: string, pathname: string): string | undefined {
  const base = mount.replace(/\/$/, '');
  if (pathname === base) return '/';
  if (!pathname.startsWith(`${base}/`)) return undefined;
  return pathname.slice(base.length) || '/';
}
