import type { ComponentChildren } from 'preact';
import { useId, useState } from 'preact/hooks';
import { html } from './html';

interface FieldProps {
  readonly label: string;
  readonly name: string;
  readonly value?: string;
  readonly type?: string;
  readonly required?: boolean;
  /** A line under the label explaining the field (linked with aria-describedby). */
  readonly hint?: string;
  readonly autocomplete?: string;
  readonly placeholder?: string;
  readonly onInput?: (value: string) => void;
  readonly [attribute: string]: unknown;
}

/** A labelled input; every control of the consoles has a visible label. */
export function Field({ label, name, value, type = 'text', hint, onInput, ...rest }: FieldProps) {
  const id = useId();
  return html`<div class="field">
    <label for=${id}>${label}</label>
    ${hint && html`<p class="hint" id=${`${id}-hint`}>${hint}</p>`}
    <input
      id=${id}
      name=${name}
      type=${type}
      value=${value}
      aria-describedby=${hint ? `${id}-hint` : undefined}
      onInput=${onInput && ((e: Event) => onInput((e.currentTarget as HTMLInputElement).value))}
      ...${rest}
    />
  </div>`;
}

/** A labelled multi-line input. */
export function TextArea({ label, name, value, hint, onInput, ...rest }: FieldProps) {
  const id = useId();
  return html`<div class="field">
    <label for=${id}>${label}</label>
    ${hint && html`<p class="hint" id=${`${id}-hint`}>${hint}</p>`}
    <textarea
      id=${id}
      name=${name}
      value=${value}
      aria-describedby=${hint ? `${id}-hint` : undefined}
      onInput=${onInput && ((e: Event) => onInput((e.currentTarget as HTMLTextAreaElement).value))}
      ...${rest}
    ></textarea>
  </div>`;
}

/** A labelled select; options are [value, label] pairs. */
export function Select({
  label,
  name,
  value,
  options,
  onInput,
  ...rest
}: FieldProps & { readonly options: readonly (readonly [string, string])[] }) {
  const id = useId();
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <select id=${id} name=${name} onInput=${onInput && ((e: Event) => onInput((e.currentTarget as HTMLSelectElement).value))} ...${rest}>
      ${options.map(([v, text]) => html`<option value=${v} selected=${v === value}>${text}</option>`)}
    </select>
  </div>`;
}

/** A labelled checkbox. */
export function Checkbox(props: { label: string; name: string; checked: boolean; onChange?: (checked: boolean) => void }) {
  const { label, name, checked, onChange } = props;
  const id = useId();
  return html`<div class="field checkbox">
    <input id=${id} type="checkbox" name=${name} checked=${checked} onChange=${onChange && ((e: Event) => onChange((e.currentTarget as HTMLInputElement).checked))} />
    <label for=${id}>${label}</label>
  </div>`;
}

/** An API's error messages, announced to screen readers. */
export function ErrorMessage({ messages }: { messages: readonly string[] | undefined }) {
  if (!messages || messages.length === 0) return null;
  return html`<div class="error" role="alert">
    ${messages.length === 1 ? html`<p>${messages[0]}</p>` : html`<ul>${messages.map((m) => html`<li>${m}</li>`)}</ul>`}
  </div>`;
}

/** A short confirmation ("Saved"), announced politely. */
export function Notice({ children }: { children: ComponentChildren }) {
  return html`<p class="notice" role="status">${children}</p>`;
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return html`<p class="loading" role="status" aria-live="polite">${label}</p>`;
}

/** Text to copy (a command, a snippet) with a Copy button; the text stays selectable without JavaScript. */
export function CopyText({ label, text }: { label: string; text: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(true);
      setTimeout(() => setCopied(false), 2000);
    } catch {
      setCopied(false);
    }
  };
  return html`<figure class="copy">
    <figcaption>${label}</figcaption>
    <pre tabindex="0"><code>${text}</code></pre>
    <button type="button" class="secondary" onClick=${copy} aria-label=${`Copy ${label}`}>Copy</button>
    <span class="copied" role="status">${copied ? 'Copied' : ''}</span>
  </figure>`;
}

/** A label and value list (key facts of an object). */
export function Facts({ items }: { items: readonly (readonly [string, ComponentChildren])[] }) {
  return html`<dl class="facts">${items.map(([term, value]) => html`<div><dt>${term}</dt><dd>${value}</dd></div>`)}</dl>`;
}
