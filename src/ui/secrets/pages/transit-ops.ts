import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { CopyText, ErrorMessage, Field, Select, TextArea } from '../../shared/components';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { apiPath } from '../api';

/**
 * The transit operations on one key. The API takes and returns base64 (plaintext, input, context);
 * people type and read text, so the forms convert both ways (UTF-8).
 */

export function textToBase64(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** The text a base64 payload holds, or undefined when it is not UTF-8 (binary data). */
export function base64ToText(b64: string): string | undefined {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

const HASHES: readonly (readonly [string, string])[] = [
  ['sha2-256', 'SHA-256'],
  ['sha2-384', 'SHA-384'],
  ['sha2-512', 'SHA-512'],
];

/** What every operation form gets: the key, and whether it takes a context (a derived key). */
export interface KeyOpProps {
  readonly api: ApiClient;
  readonly mount: string;
  readonly name: string;
  readonly derived: boolean;
}

const opUrl = (op: string, { mount, name }: KeyOpProps) => `/v1/${apiPath(mount)}/${op}/${encodeURIComponent(name)}`;

/** The derived key's context field (text), or nothing for a key without derivation. */
function ContextField({ derived, value, onInput }: { derived: boolean; value: string; onInput: (v: string) => void }) {
  return derived ? html`<${Field} label="Context" name="context" required value=${value} onInput=${onInput} hint="The derived key's context, as text." />` : null;
}

const contextOf = (derived: boolean, context: string) => (derived ? textToBase64(context) : undefined);

export function EncryptForm(props: KeyOpProps) {
  const [plaintext, setPlaintext] = useState('');
  const [context, setContext] = useState('');
  const [ciphertext, setCiphertext] = useState<string | undefined>(undefined);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setCiphertext(undefined);
    void action.run(async () => {
      const res = await props.api.post<{ data: { ciphertext: string } }>(opUrl('encrypt', props), { plaintext: textToBase64(plaintext), context: contextOf(props.derived, context) });
      setCiphertext(res.data.ciphertext);
    });
  };
  return html`<form onSubmit=${submit} aria-labelledby="transit-encrypt">
    <h2 id="transit-encrypt">Encrypt</h2>
    <${TextArea} label="Plaintext" name="plaintext" required value=${plaintext} onInput=${setPlaintext} hint="Text; sent as UTF-8." />
    <${ContextField} derived=${props.derived} value=${context} onInput=${setContext} />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Encrypt</button>
    ${ciphertext && html`<div aria-live="polite"><${CopyText} label="Ciphertext" text=${ciphertext} /></div>`}
  </form>`;
}

export function DecryptForm(props: KeyOpProps) {
  const [ciphertext, setCiphertext] = useState('');
  const [context, setContext] = useState('');
  const [plaintext, setPlaintext] = useState<{ text?: string; base64: string } | undefined>(undefined);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setPlaintext(undefined);
    void action.run(async () => {
      const res = await props.api.post<{ data: { plaintext: string } }>(opUrl('decrypt', props), { ciphertext: ciphertext.trim(), context: contextOf(props.derived, context) });
      setPlaintext({ text: base64ToText(res.data.plaintext), base64: res.data.plaintext });
    });
  };
  return html`<form onSubmit=${submit} aria-labelledby="transit-decrypt">
    <h2 id="transit-decrypt">Decrypt</h2>
    <${TextArea} label="Ciphertext to decrypt" name="ciphertext" required value=${ciphertext} onInput=${setCiphertext} hint="vault:v1:…" />
    <${ContextField} derived=${props.derived} value=${context} onInput=${setContext} />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Decrypt</button>
    ${plaintext &&
    html`<div aria-live="polite">
      ${plaintext.text !== undefined
        ? html`<${CopyText} label="Decrypted plaintext" text=${plaintext.text} />`
        : html`<${CopyText} label="Decrypted plaintext (base64: not UTF-8 text)" text=${plaintext.base64} />`}
    </div>`}
  </form>`;
}

/** HMAC (every key type) or sign (signing keys): text in, the versioned HMAC or signature out. */
export function DigestForm(props: KeyOpProps & { kind: 'hmac' | 'signature'; hashes: boolean }) {
  const { kind } = props;
  const words = kind === 'hmac' ? { title: 'HMAC', button: 'Compute HMAC', result: 'HMAC', op: 'hmac' } : { title: 'Sign', button: 'Sign', result: 'Signature', op: 'sign' };
  const [input, setInput] = useState('');
  const [hash, setHash] = useState('sha2-256');
  const [result, setResult] = useState<string | undefined>(undefined);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setResult(undefined);
    void action.run(async () => {
      const res = await props.api.post<{ data: Record<string, string> }>(opUrl(words.op, props), {
        input: textToBase64(input),
        hash_algorithm: props.hashes ? hash : undefined,
      });
      setResult(res.data[kind]);
    });
  };
  const id = `transit-${words.op}`;
  return html`<form onSubmit=${submit} aria-labelledby=${id}>
    <h2 id=${id}>${words.title}</h2>
    <${TextArea} label=${`Input to ${kind === 'hmac' ? 'authenticate' : 'sign'}`} name="input" required value=${input} onInput=${setInput} hint="Text; sent as UTF-8." />
    ${props.hashes && html`<${Select} label="Hash algorithm" name="hash_algorithm" value=${hash} options=${HASHES} onInput=${setHash} />`}
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>${words.button}</button>
    ${result && html`<div aria-live="polite"><${CopyText} label=${words.result} text=${result} /></div>`}
  </form>`;
}

/** Verifies a signature or an HMAC of text: valid or not, as the API says. */
export function VerifyForm(props: KeyOpProps & { kind: 'hmac' | 'signature'; hashes: boolean }) {
  const { kind } = props;
  const what = kind === 'hmac' ? 'HMAC' : 'signature';
  const [input, setInput] = useState('');
  const [proof, setProof] = useState('');
  const [hash, setHash] = useState('sha2-256');
  const [valid, setValid] = useState<boolean | undefined>(undefined);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setValid(undefined);
    void action.run(async () => {
      const res = await props.api.post<{ data: { valid: boolean } }>(opUrl('verify', props), {
        input: textToBase64(input),
        [kind]: proof.trim(),
        hash_algorithm: props.hashes ? hash : undefined,
      });
      setValid(res.data.valid);
    });
  };
  const id = `transit-verify-${kind}`;
  return html`<form onSubmit=${submit} aria-labelledby=${id}>
    <h2 id=${id}>Verify ${kind === 'hmac' ? 'an HMAC' : 'a signature'}</h2>
    <${TextArea} label=${`Input the ${what} is of`} name="input" required value=${input} onInput=${setInput} />
    <${Field} label=${kind === 'hmac' ? 'HMAC to verify' : 'Signature to verify'} name=${kind} required value=${proof} onInput=${setProof} hint="vault:v1:…" />
    ${props.hashes && html`<${Select} label="Hash algorithm" name="hash_algorithm" value=${hash} options=${HASHES} onInput=${setHash} />`}
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Verify</button>
    <p role="status">
      ${valid === true && html`<span class="badge ok">valid</span> The ${what} matches the input.`}
      ${valid === false && html`<span class="badge danger">invalid</span> The ${what} does not match the input.`}
    </p>
  </form>`;
}
