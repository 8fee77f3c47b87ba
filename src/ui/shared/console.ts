import type { ComponentChildren } from 'preact';
import type { ApiClient } from './api';
import type { Session } from './session';

/** What a page's loader gets: the path's parameters, the query, and an API client with the user's token. */
export interface LoadContext {
  readonly params: Record<string, string>;
  readonly query: URLSearchParams;
  readonly api: ApiClient;
  readonly session: Session | undefined;
}

/** What a page's view gets: the loaded data plus the means to move on. */
export interface PageProps<D = any> extends LoadContext {
  readonly data: D;
  /** Client-side navigation to a path relative to the console's mount (`/kv/a`) or absolute in it. */
  navigate(path: string): void;
  /** Loads the current page's data again (after a change). */
  reload(): void;
  /** The absolute URL path of a path relative to the mount, for links. */
  href(path: string): string;
  /** Signs in (the console's sign-in page calls it) or out (undefined). */
  setSession(session: Session | undefined): void;
}

export interface PageDef<D = any> {
  /** Pattern relative to the mount: `/`, `/:username`, `/kv/*key` (see router.ts). */
  readonly path: string;
  /** The document title (the console's name is appended). */
  readonly title: string | ((ctx: LoadContext, data: D | undefined) => string);
  /** Reads what the page shows; throwing an ApiError shows the error (a 404 is "not found"). */
  readonly load?: (ctx: LoadContext) => Promise<D>;
  readonly view: (props: PageProps<D>) => ComponentChildren;
  /**
   * The server renders the page with its data, read anonymously (the box catalog's public pages,
   * readable without JavaScript). Other pages are rendered by the browser.
   */
  readonly serverRendered?: boolean;
  /** The page needs a signed-in user: without one it shows the sign-in prompt instead. */
  readonly signedIn?: boolean;
}

/** A header link to one of the console's pages. */
export interface NavLink {
  readonly label: string;
  readonly path: string;
}

/** A header entry that opens a list of links (a disclosure menu: "Engines" → PKI, Transit, ...). */
export interface NavGroup {
  readonly label: string;
  /** The group's own page (its label links to it); without one the label is the menu's button. */
  readonly path?: string;
  readonly children: readonly NavLink[];
}

export type NavItem = NavLink | NavGroup;

export interface ConsoleDef {
  /** The API the console talks to (and the sessionStorage key of its sign-in). */
  readonly service: 'registry' | 'secrets' | 'catalog';
  /** Shown in the header and the document title: "Box catalog", "Secrets", "Catalog". */
  readonly title: string;
  /** Where the console's pages live on its listener: `/` (box catalog) or `/ui/`. */
  readonly mount: string;
  /** The header the API reads a token from; `Authorization` sends `Bearer <token>`. */
  readonly tokenHeader: string;
  /** The header's links. */
  readonly nav: readonly NavItem[];
  /** The sign-in page's path (relative to the mount); the header links to it when signed out. */
  readonly signInPath: string;
  readonly pages: readonly PageDef[];
  /**
   * Runs when the user presses "Sign out", before the session is forgotten (the registry deletes a
   * token its password sign-in created). A failure is ignored: the tab forgets the token anyway.
   */
  readonly signOut?: (api: ApiClient, session: Session) => Promise<void>;
}

/** Identity function that types a page's data from its loader. */
export function page<D>(def: PageDef<D>): PageDef {
  return def as PageDef;
}

/** The state of the page being shown. */
export type PageState =
  | { readonly status: 'loading' }
  | { readonly status: 'ready'; readonly data: unknown }
  | { readonly status: 'error'; readonly error: { readonly status: number; readonly messages: readonly string[] } };

/** Where the server put the page's data for the browser to take over (a JSON script, not executed). */
export const STATE_ELEMENT_ID = 'hangar-state';

export interface ServerState {
  /** The URL (path and query) the data was read for. */
  readonly url: string;
  readonly state: PageState;
}
