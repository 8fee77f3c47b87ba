import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { NavLink } from './console';
import { html } from './html';

interface NavMenuProps {
  readonly label: string;
  /** The current path: a navigation closes the list. */
  readonly path: string;
  /** The group's own page: the label is a link to it and the button beside it opens the list. */
  readonly href?: string;
  readonly links: readonly { readonly link: NavLink; readonly href: string; readonly current: boolean }[];
}

/**
 * A header entry that groups links: a disclosure button (aria-expanded) that shows or hides the
 * list under it. Tab walks the links in order; Escape closes the list and gives the focus back to
 * the button; the list closes when the focus or a click goes elsewhere and on navigation (the
 * layout is rendered again with another path). The group of the current page carries
 * aria-current, as a link would. A group with a page of its own shows its label as a link to it,
 * the button beside it (named "<label> menu"), as the WAI-ARIA disclosure navigation pattern does.
 */
export function NavMenu({ label, path, href, links }: NavMenuProps) {
  const [open, setOpen] = useState(false);
  const listId = useId();
  const root = useRef<HTMLLIElement>(null);
  const button = useRef<HTMLButtonElement>(null);

  useEffect(() => setOpen(false), [path]);

  useEffect(() => {
    if (!open) return;
    const outside = (e: Event) => {
      if (root.current && !root.current.contains(e.target as Node)) setOpen(false);
    };
    document.addEventListener('click', outside);
    return () => document.removeEventListener('click', outside);
  }, [open]);

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key !== 'Escape' || !open) return;
    e.preventDefault();
    setOpen(false);
    button.current?.focus();
  };
  const onFocusOut = (e: FocusEvent) => {
    const next = e.relatedTarget as Node | null;
    if (next && root.current && !root.current.contains(next)) setOpen(false);
  };
  const grouped = links.some((l) => l.current);
  const caret = html`<span class="nav-menu-caret" aria-hidden="true">${open ? '▴' : '▾'}</span>`;
  return html`<li class="nav-menu" ref=${root} onKeyDown=${onKeyDown} onFocusOut=${onFocusOut}>
    ${href && html`<a href=${href} aria-current=${grouped ? 'true' : undefined}>${label}</a>`}
    <button
      type="button"
      ref=${button}
      aria-expanded=${open ? 'true' : 'false'}
      aria-controls=${listId}
      aria-label=${href ? `${label} menu` : undefined}
      aria-current=${grouped && !href ? 'true' : undefined}
      onClick=${() => setOpen(!open)}
    >${href ? caret : html`${label}${caret}`}</button>
    <ul id=${listId} hidden=${!open}>
      ${links.map((l) => html`<li><a href=${l.href} aria-current=${l.current ? 'page' : undefined}>${l.link.label}</a></li>`)}
    </ul>
  </li>`;
}
