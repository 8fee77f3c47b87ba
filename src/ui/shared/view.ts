import type { ApiClient } from './api';
import { ErrorMessage, Loading } from './components';
import type { ConsoleDef, LoadContext, PageDef, PageProps, PageState } from './console';
import { html } from './html';
import { Layout } from './layout';
import { joinPath, Match, matchRoute } from './router';
import type { Session } from './session';

export interface ConsoleViewProps {
  readonly def: ConsoleDef;
  /** Path relative to the mount. */
  readonly path: string;
  readonly query: URLSearchParams;
  readonly state: PageState;
  readonly session: Session | undefined;
  readonly api: ApiClient;
  readonly navigate: (path: string) => void;
  readonly reload: () => void;
  readonly setSession: (session: Session | undefined) => void;
}

/** One console page inside the shared layout; the server renders it and the browser renders it again. */
export function ConsoleView(props: ConsoleViewProps) {
  const { def, path, session } = props;
  const signOut = async () => {
    if (session && def.signOut) await def.signOut(props.api, session).catch(() => undefined);
    props.setSession(undefined);
  };
  return html`<${Layout} def=${def} path=${path} session=${session} onSignOut=${signOut}>
    <${PageBody} ...${props} />
  <//>`;
}

function PageBody(props: ConsoleViewProps) {
  const { def, path, query, state, session, api } = props;
  const match = matchRoute(def.pages, path);
  if (!match) return html`<${NotFound} def=${def} />`;
  if (match.route.signedIn && !session) {
    return html`<section>
      <h1>Sign in required</h1>
      <p>This page needs a signed-in user. <a href=${joinPath(def.mount, def.signInPath)}>Sign in</a> first.</p>
    </section>`;
  }
  if (state.status === 'loading') return html`<${Loading} />`;
  if (state.status === 'error') {
    if (state.error.status === 404) return html`<${NotFound} def=${def} />`;
    return html`<section>
      <h1>Something went wrong</h1>
      <${ErrorMessage} messages=${state.error.messages} />
    </section>`;
  }
  const View = match.route.view as (p: PageProps) => ReturnType<typeof html>;
  const pageProps: PageProps = {
    params: match.params,
    query,
    api,
    session,
    data: state.data,
    navigate: props.navigate,
    reload: props.reload,
    setSession: props.setSession,
    href: (p: string) => joinPath(def.mount, p),
  };
  return html`<${View} ...${pageProps} />`;
}

function NotFound({ def }: { def: ConsoleDef }) {
  return html`<section>
    <h1>Not found</h1>
    <p>There is nothing here, or you may not see it. <a href=${def.mount}>Back to the start</a>.</p>
  </section>`;
}

/** The document title of a page: "<page> · <console> · Hangar". */
export function documentTitle(def: ConsoleDef, match: Match<PageDef> | undefined, ctx: LoadContext, state: PageState): string {
  let title = 'Not found';
  if (match) {
    const data = state.status === 'ready' ? state.data : undefined;
    title = typeof match.route.title === 'string' ? match.route.title : match.route.title(ctx, data);
    if (state.status === 'error') title = state.error.status === 404 ? 'Not found' : 'Error';
  }
  return `${title} · ${def.title} · Hangar`;
}

/** An error thrown by a loader as the state the view shows. */
export function errorState(err: unknown): PageState {
  const e = err as { status?: number; messages?: readonly string[]; message?: string };
  return { status: 'error', error: { status: e.status ?? 0, messages: e.messages ?? [e.message ?? String(err)] } };
}
