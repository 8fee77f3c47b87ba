import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorMessage } from '../shared/components';
import type { Action } from '../shared/hooks';
import { html } from '../shared/html';

/** A check's status: the word, coloured (never colour alone). */
export function StatusBadge({ status }: { status: string }) {
  const tone = status === 'passing' ? 'ok' : status === 'warning' ? 'warn' : status === 'critical' ? 'danger' : '';
  return html`<span class=${`badge ${tone}`}>${status}</span>`;
}

const SEVERITY = ['passing', 'warning', 'critical'];

/** The worst of some check statuses ("passing" when there are none). */
export function worstStatus(statuses: readonly string[]): string {
  return statuses.reduce((worst, s) => (SEVERITY.indexOf(s) > SEVERITY.indexOf(worst) ? s : worst), 'passing');
}

/** "2 passing, 1 critical" with the worst status as a badge; "no checks" without any. */
export function HealthSummary({ statuses }: { statuses: readonly string[] }) {
  if (statuses.length === 0) return html`<span class="muted">no checks</span>`;
  const counts = new Map<string, number>();
  for (const s of statuses) counts.set(s, (counts.get(s) ?? 0) + 1);
  const text = [...counts].map(([s, n]) => `${n} ${s}`).join(', ');
  return html`<span class="catalog-health"><${StatusBadge} status=${worstStatus(statuses)} /> <span class="muted">${text}</span></span>`;
}

/** The page a token without the permission sees instead of the page's content. */
export function PermissionDenied({ messages }: { messages: readonly string[] }) {
  return html`<section>
    <h1>Permission denied</h1>
    <p>The token you use may not see this page. Sign in with a token whose policies allow it.</p>
    <${ErrorMessage} messages=${messages} />
  </section>`;
}

/**
 * A destructive button that asks once more in the page (no browser dialog): the first press shows
 * "Confirm" and "Cancel". `text` is a shorter visible text than the accessible `label` ("Destroy" for "Destroy lock-1").
 */
export function ConfirmButton(props: { label: string; text?: string; confirmLabel: string; action: Action; onConfirm: () => void }) {
  const { label, text, confirmLabel, action, onConfirm } = props;
  const [asking, setAsking] = useState(false);
  const confirm = useRef<HTMLButtonElement>(null);
  // The pressed button is replaced: keyboard focus goes to its confirmation.
  useEffect(() => {
    if (asking) confirm.current?.focus();
  }, [asking]);
  if (!asking) {
    return html`<button type="button" class="danger" disabled=${action.busy} aria-label=${text ? label : undefined} onClick=${() => setAsking(true)}>
      ${text ?? label}
    </button>`;
  }
  return html`<span class="catalog-confirm" role="group" aria-label=${label}>
    <button type="button" class="danger" ref=${confirm} disabled=${action.busy} onClick=${() => { setAsking(false); onConfirm(); }}>${confirmLabel}</button>
    <button type="button" class="secondary" onClick=${() => setAsking(false)}>Cancel</button>
  </span>`;
}

/** A page's sub-navigation (the ACL objects). */
export function Tabs({ label, items, current }: { label: string; items: readonly (readonly [string, string])[]; current: string }) {
  return html`<nav aria-label=${label} class="catalog-tabs">
    <ul>
      ${items.map(([href, text]) => html`<li><a href=${href} aria-current=${href === current ? 'page' : undefined}>${text}</a></li>`)}
    </ul>
  </nav>`;
}

/** A table, or a sentence when there is nothing to list. */
export function Table(props: { caption: string; headers: readonly string[]; empty: string; children: ComponentChildren[] }) {
  const { caption, headers, empty, children } = props;
  if (children.length === 0) return html`<p class="muted">${empty}</p>`;
  return html`<table>
    <caption class="visually-hidden">${caption}</caption>
    <thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead>
    <tbody>${children}</tbody>
  </table>`;
}

/** Comma-separated names as a list ("a, b" -> ["a", "b"]). */
export function splitNames(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
