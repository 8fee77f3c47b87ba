/// <reference lib="dom" />
import { hydrate, render } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiClient, browserTransport } from './api';
import { ConsoleDef, LoadContext, PageState, ServerState, STATE_ELEMENT_ID } from './console';
import { html } from './html';
import { joinPath, matchRoute, pathInMount } from './router';
import { Session, SessionStore } from './session';
import { ConsoleView, documentTitle, errorState } from './view';

/**
 * Starts a console in the browser (each console's main.ts calls it). The server's HTML is taken
 * over as it is when it was rendered for this URL and nobody is signed in; otherwise the page is
 * rendered again from the API with the user's token. Links and GET forms to the console's pages
 * navigate without reloading (history API); anything else (downloads, other listeners) is left alone.
 */
export function startConsole(def: ConsoleDef): void {
  const root = document.getElementById('app');
  if (!root) throw new Error('#app is missing');
  const stateElement = document.getElementById(STATE_ELEMENT_ID);
  const server = stateElement?.textContent ? (JSON.parse(stateElement.textContent) as ServerState) : undefined;
  const sessions = new SessionStore(def.service);
  const taken = server && server.url === currentUrl() && !sessions.get() ? server.state : undefined;
  const app = html`<${App} def=${def} sessions=${sessions} initial=${taken} />`;
  if (taken) {
    hydrate(app, root);
  } else {
    root.textContent = '';
    render(app, root);
  }
}

function currentUrl(): string {
  return location.pathname + location.search;
}

interface AppProps {
  readonly def: ConsoleDef;
  readonly sessions: SessionStore;
  readonly initial: PageState | undefined;
}

function App({ def, sessions, initial }: AppProps) {
  const [url, setUrl] = useState(currentUrl);
  const [session, setSessionState] = useState<Session | undefined>(() => sessions.get());
  // The state belongs to the URL and the token it was loaded for: another URL shows "loading" at once.
  const [loaded, setLoaded] = useState<{ key: string; state: PageState } | undefined>(() =>
    initial ? { key: `${url}\n`, state: initial } : undefined,
  );
  const [reloads, setReloads] = useState(0);
  const firstNavigation = useRef(true);

  const api = useMemo(() => new ApiClient(browserTransport, def.tokenHeader, session?.token), [session?.token]);
  const parsed = new URL(url, location.origin);
  const path = pathInMount(def.mount, parsed.pathname) ?? '/';
  const query = parsed.searchParams;
  const key = `${url}\n${session?.token ?? ''}`;
  const state: PageState = loaded?.key === key ? loaded.state : { status: 'loading' };

  const navigate = useCallback((to: string, replace = false) => {
    const target = joinPath(def.mount, to);
    if (replace) history.replaceState(null, '', target);
    else history.pushState(null, '', target);
    setUrl(currentUrl());
  }, []);

  useEffect(() => sessions.subscribe(setSessionState), []);

  // Clicks on links and GET forms that lead to one of the console's pages stay in the page.
  useEffect(() => {
    const ownPage = (target: URL) => {
      if (target.origin !== location.origin) return false;
      const inMount = pathInMount(def.mount, target.pathname);
      return inMount !== undefined && matchRoute(def.pages, inMount) !== undefined;
    };
    const onClick = (e: MouseEvent) => {
      if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
      const a = (e.target as Element | null)?.closest?.('a');
      if (!a || !a.href || a.target || a.hasAttribute('download')) return;
      const target = new URL(a.href);
      if (!ownPage(target)) return;
      if (target.hash && target.pathname === location.pathname && target.search === location.search) return;
      e.preventDefault();
      history.pushState(null, '', target.pathname + target.search);
      setUrl(currentUrl());
    };
    const onSubmit = (e: SubmitEvent) => {
      const form = e.target as HTMLFormElement;
      if (e.defaultPrevented || form.method.toLowerCase() !== 'get') return;
      const target = new URL(form.action, location.href);
      if (!ownPage(target)) return;
      e.preventDefault();
      const params = new URLSearchParams();
      new FormData(form, e.submitter).forEach((value, name) => {
        if (typeof value === 'string' && value !== '') params.append(name, value);
      });
      const search = params.toString();
      history.pushState(null, '', target.pathname + (search ? `?${search}` : ''));
      setUrl(currentUrl());
    };
    const onPop = () => setUrl(currentUrl());
    document.addEventListener('click', onClick);
    document.addEventListener('submit', onSubmit);
    window.addEventListener('popstate', onPop);
    return () => {
      document.removeEventListener('click', onClick);
      document.removeEventListener('submit', onSubmit);
      window.removeEventListener('popstate', onPop);
    };
  }, []);

  // Load the page's data for this URL and token (again after reload()).
  useEffect(() => {
    if (loaded?.key === key && reloads === 0) return;
    const match = matchRoute(def.pages, path);
    const ctx: LoadContext = { params: match?.params ?? {}, query, api, session };
    if (!match || !match.route.load || (match.route.signedIn && !session)) {
      setLoaded({ key, state: { status: 'ready', data: undefined } });
      return;
    }
    let current = true;
    match.route.load(ctx).then(
      (data) => current && setLoaded({ key, state: { status: 'ready', data } }),
      (err) => current && setLoaded({ key, state: errorState(err) }),
    );
    return () => {
      current = false;
    };
  }, [key, reloads]);

  // After a navigation, focus moves to the main region (screen readers announce the new page).
  useEffect(() => {
    if (firstNavigation.current) {
      firstNavigation.current = false;
      return;
    }
    window.scrollTo(0, 0);
    document.getElementById('main')?.focus();
  }, [url]);

  useEffect(() => {
    const match = matchRoute(def.pages, path);
    document.title = documentTitle(def, match, { params: match?.params ?? {}, query, api, session }, state);
  });

  const setSession = useCallback((next: Session | undefined) => (next ? sessions.set(next) : sessions.clear()), []);
  return html`<${ConsoleView}
    def=${def}
    path=${path}
    query=${query}
    state=${state}
    session=${session}
    api=${api}
    navigate=${navigate}
    reload=${() => setReloads((n) => n + 1)}
    setSession=${setSession}
  />`;
}
