import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { Denied } from './api';
import type { ApiClient } from '../shared/api';
import { CopyText, ErrorMessage, Facts, Notice } from '../shared/components';
import { useAction } from '../shared/hooks';
import { html } from '../shared/html';

/** What a page shows instead of data its token may not read. */
export function PermissionDenied({ what, denied }: { what: string; denied: Denied }) {
  return html`<div class="error secrets-denied" role="alert">
    <p><strong>Permission denied.</strong> Your token's policies do not allow ${what}.</p>
    ${denied.denied.length > 0 && denied.denied[0] !== 'permission denied' && html`<p>${denied.denied.join('; ')}</p>`}
  </div>`;
}

/**
 * A destructive button that asks once more in place: the first click shows the question with
 * "Confirm" (focused) and "Cancel"; the work runs on confirm, its error shown under it.
 */
export function ConfirmButton(props: {
  /** The button's accessible name ("Disable pki/"). */
  label: string;
  /** Its visible text when shorter than the label ("Revoke" in a row that names the lease). */
  text?: string;
  question: ComponentChildren;
  confirmLabel?: string;
  onConfirm: () => Promise<unknown>;
}) {
  const { label, text, question, confirmLabel = label, onConfirm } = props;
  const [asking, setAsking] = useState(false);
  const action = useAction();
  const confirmRef = useRef<HTMLButtonElement>(null);
  const askRef = useRef<HTMLButtonElement>(null);
  const cancelled = useRef(false);
  // The focus goes to the question's answer, and back to the button after Cancel.
  useEffect(() => {
    if (asking) confirmRef.current?.focus();
    else if (cancelled.current) askRef.current?.focus();
    cancelled.current = false;
  }, [asking]);
  if (!asking) {
    return html`<span class="secrets-confirm">
      <button type="button" class="secondary" ref=${askRef} aria-label=${text ? label : undefined} onClick=${() => setAsking(true)}>${text ?? label}</button>
      <${ErrorMessage} messages=${action.error} />
    </span>`;
  }
  const confirm = () =>
    void action.run(async () => {
      await onConfirm();
      setAsking(false);
    });
  return html`<span class="secrets-confirm" role="group" aria-label=${label}>
    <span class="secrets-question">${question}</span>
    <button type="button" class="danger" ref=${confirmRef} disabled=${action.busy} onClick=${confirm}>${confirmLabel}</button>
    <button type="button" class="secondary" onClick=${() => {
      cancelled.current = true;
      action.clearError();
      setAsking(false);
    }}>Cancel</button>
    <${ErrorMessage} messages=${action.error} />
  </span>`;
}

/** A link that saves `text` as a file (a certificate, a key): a Blob URL made for the link, revoked when it goes. */
export function DownloadLink({ label, filename, text, type = 'application/x-pem-file' }: { label: string; filename: string; text: string; type?: string }) {
  const [url, setUrl] = useState<string | undefined>(undefined);
  useEffect(() => {
    const made = URL.createObjectURL(new Blob([text.endsWith('\n') ? text : `${text}\n`], { type }));
    setUrl(made);
    return () => URL.revokeObjectURL(made);
  }, [text, type]);
  return html`<a class="button secrets-download" href=${url} download=${filename}>${label}</a>`;
}

/** A duration in seconds as people read it: `1h 30m`, `45s`; 0 is "never" when it means no expiry. */
export function formatTtl(seconds: number | undefined, zero = 'none'): string {
  if (!seconds) return zero;
  const parts: string[] = [];
  let rest = Math.floor(seconds);
  for (const [unit, size] of [['d', 86400], ['h', 3600], ['m', 60], ['s', 1]] as const) {
    if (rest >= size) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
  }
  return parts.slice(0, 2).join(' ');
}

/** Seconds as a duration the API reads back (`720h`, `90m`, `45s`), for a form's field. */
export function ttlField(seconds: number): string {
  if (seconds % 3600 === 0) return `${seconds / 3600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/** Comma- or space-separated names as a list (policies, domains). */
export function splitList(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter(Boolean);
}

/** Dynamic credentials as an engine's `creds/<role>` answers them: a user and password under a lease. */
interface LeasedCredentials {
  readonly lease_id: string;
  readonly lease_duration: number;
  readonly renewable: boolean;
  readonly data: { readonly username: string; readonly password: string };
}

/** "Generate credentials": reads `path` (an engine's `creds/<role>`) and shows the user, its password once, and the lease. */
export function GenerateCredentials({ api, path, description }: { api: ApiClient; path: string; description: string }) {
  const [creds, setCreds] = useState<LeasedCredentials | undefined>(undefined);
  const action = useAction();
  const generate = () =>
    void action.run(async () => {
      setCreds(await api.get<LeasedCredentials>(path));
    });
  return html`<div>
    <p class="muted">${description}</p>
    <button type="button" disabled=${action.busy} onClick=${generate}>Generate credentials</button>
    <${ErrorMessage} messages=${action.error} />
    ${creds &&
    html`<div class="secrets-issued" aria-live="polite">
      <${Notice}>Copy the password now: it is not shown again.<//>
      <${CopyText} label="Username" text=${creds.data.username} />
      <${CopyText} label="Password" text=${creds.data.password} />
      <${Facts} items=${[['Lease', html`<code>${creds.lease_id}</code>`], ['Lease duration', formatTtl(creds.lease_duration)], ['Renewable', creds.renewable ? 'yes' : 'no']]} />
    </div>`}
  </div>`;
}
