import type { ComponentChildren } from 'preact';
import type { ConsoleDef } from './console';
import { html } from './html';
import { NavMenu } from './nav-menu';
import { joinPath } from './router';
import type { Session } from './session';

interface LayoutProps {
  readonly def: ConsoleDef;
  /** The current path relative to the mount (marks the current nav item). */
  readonly path: string;
  readonly session: Session | undefined;
  readonly onSignOut: () => void;
  readonly children: ComponentChildren;
}

/** The look every console shares: a skip link, the header (brand, nav, account), the main region. */
export function Layout({ def, path, session, onSignOut, children }: LayoutProps) {
  const current = (navPath: string) => (navPath === '/' ? path === '/' : path === navPath || path.startsWith(`${navPath}/`));
  return html`<div class="page">
    <a class="skip-link" href="#main">Skip to content</a>
    <header class="site-header">
      <div class="bar">
        <a class="brand" href=${def.mount}><span class="logo" aria-hidden="true">⌂</span> Hangar <span class="console-name">${def.title}</span></a>
        <nav aria-label="Main">
          <ul>
            ${def.nav.map((item) =>
              'children' in item
                ? html`<${NavMenu}
                    label=${item.label}
                    path=${path}
                    href=${item.path && joinPath(def.mount, item.path)}
                    links=${item.children.map((link) => ({ link, href: joinPath(def.mount, link.path), current: current(link.path) }))}
                  />`
                : html`<li><a href=${joinPath(def.mount, item.path)} aria-current=${current(item.path) ? 'page' : undefined}>${item.label}</a></li>`,
            )}
          </ul>
        </nav>
        <div class="account">
          ${session
            ? html`<span class="signed-in">Signed in as <strong>${session.name}</strong></span>
                <button type="button" class="secondary" onClick=${onSignOut}>Sign out</button>`
            : html`<a class="button" href=${joinPath(def.mount, def.signInPath)}>Sign in</a>`}
        </div>
      </div>
    </header>
    <main id="main" tabindex="-1">${children}</main>
    <footer class="site-footer"><p>Hangar · ${def.title}</p></footer>
  </div>`;
}
