import { useMemo } from 'preact/hooks';
import { PermissionDenied } from './components';
import { currentNamespace, inNamespace, NamespaceBar } from './namespace';
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
 * may not read what the page shows) rather than a generic error. A namespaced page (all but the
 * namespaces' own) shows the namespace selector, and its loader and view call the API in the
 * chosen namespace.
 */
export function catalogPage<D>(def: PageDef<D>, options: { namespaced?: boolean } = {}): PageDef {
  const { load, view, title } = def;
  const namespaced = options.namespaced ?? true;
  const Content = (props: PageProps<D | Denied>) =>
    isDenied(props.data) ? html`<${PermissionDenied} messages=${props.data.permissionDenied} />` : html`<${view as any} ...${props} />`;
  return page<D | Denied>({
    ...def,
    title: (ctx, data) => (isDenied(data) ? 'Permission denied' : typeof title === 'string' ? title : title(ctx, data)),
    load:
      load &&
      (async (ctx) => {
        try {
          return await load(namespaced ? { ...ctx, api: inNamespace(ctx.api, currentNamespace(ctx.query)) } : ctx);
        } catch (err) {
          if (err instanceof ApiError && err.status === 403) return { permissionDenied: err.messages };
          throw err;
        }
      }),
    view: (props: PageProps<D | Denied>) => (namespaced ? html`<${InNamespace} ...${props} content=${Content} />` : Content(props)),
  });
}

/** A page in the chosen namespace, under the selector (the client made once per namespace: live reads follow it). */
function InNamespace(props: PageProps & { content: (props: PageProps) => unknown }) {
  const { content: Content, ...rest } = props;
  const namespace = currentNamespace(props.query);
  const api = useMemo(() => inNamespace(props.api, namespace), [props.api, namespace]);
  return html`<div>
    <${NamespaceBar} api=${props.api} current=${namespace} query=${props.query} navigate=${props.navigate} href=${props.href} />
    <${Content} ...${rest} api=${api} />
  </div>`;
}
