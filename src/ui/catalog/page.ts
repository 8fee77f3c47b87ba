import { PermissionDenied } from './components';
import { ApiError } from '../shared/api';
import { page, type PageDef, type PageProps } from '../shared/console';
import { html } from '../shared/html';

interface Denied {
  readonly permissionDenied: readonly string[];
}

function isDenied(data: unknown): data is Denied {
  return typeof data === 'object' && data !== null && 'permissionDenied' in data;
}

/**
 * A catalog page whose loader's 403 shows "Permission denied" with the API's message (the token
 * may not read what the page shows) rather than a generic error.
 */
export function catalogPage<D>(def: PageDef<D>): PageDef {
  const { load, view, title } = def;
  return page<D | Denied>({
    ...def,
    title: (ctx, data) => (isDenied(data) ? 'Permission denied' : typeof title === 'string' ? title : title(ctx, data)),
    load:
      load &&
      (async (ctx) => {
        try {
          return await load(ctx);
        } catch (err) {
          if (err instanceof ApiError && err.status === 403) return { permissionDenied: err.messages };
          throw err;
        }
      }),
    view: (props: PageProps<D | Denied>) =>
      isDenied(props.data) ? html`<${PermissionDenied} messages=${props.data.permissionDenied} />` : html`<${view as any} ...${props} />`,
  });
}
