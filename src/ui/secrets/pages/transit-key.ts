import { useState } from 'preact/hooks';
import { mountUrl } from './engine-mounts';
import { ApiClient } from '../../shared/api';
import { Checkbox, ErrorMessage, Facts, Field, Notice } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { formatTime } from '../../shared/format';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, readOrDenied } from '../api';
import { ConfirmButton, formatTtl, PermissionDenied, ttlField } from '../components';
import { transitHref } from './transit';
import { DecryptForm, DigestForm, EncryptForm, VerifyForm } from './transit-ops';

/** A key as `keys/:name` reads it. */
interface TransitKey {
  readonly name: string;
  readonly type: string;
  readonly derived: boolean;
  readonly exportable: boolean;
  readonly allow_plaintext_backup: boolean;
  readonly deletion_allowed: boolean;
  readonly auto_rotate_period: number;
  readonly latest_version: number;
  readonly min_available_version: number;
  readonly min_decryption_version: number;
  readonly min_encryption_version: number;
  readonly supports_encryption: boolean;
  readonly supports_signing: boolean;
  /** Per version: its creation (Unix seconds) for symmetric keys, its public key for asymmetric ones; none for hmac keys (Vault's). */
  readonly keys?: Record<string, number | { creation_time: string; public_key: string }>;
}

const keyUrl = (mount: string, name: string) => mountUrl(mount, 'keys', name);

/** `/transit/:mount/keys/:key`: the key (versions, rotate, config, delete) and its operations. */
export const transitKeyPage = page({
  path: '/transit/:mount/keys/:key',
  title: ({ params }) => `Transit key ${params.key}`,
  signedIn: true,
  load: ({ api, params }) => readOrDenied(api.get<{ data: TransitKey }>(keyUrl(params.mount, params.key)).then((r) => r.data)),
  view: (props: PageProps<TransitKey | Denied>) => {
    const { data, params } = props;
    const { mount, key } = params;
    const ops = { api: props.api, mount, name: key, derived: !isDenied(data) && data.derived };
    // Ed25519 signs the message itself: no hash to choose.
    const hashes = !isDenied(data) && data.type !== 'ed25519';
    return html`<section>
      <p><a href=${props.href('/transit')}>Transit</a> / <a href=${props.href(transitHref(mount))}>${mount}/</a></p>
      <h1>Transit key ${key}</h1>
      ${isDenied(data)
        ? html`<${PermissionDenied} what=${`reading the key ${key}`} denied=${data} />`
        : html`<div class="columns">
              ${data.supports_encryption && html`<div class="card"><${EncryptForm} ...${ops} /></div>`}
              ${data.supports_encryption && html`<div class="card"><${DecryptForm} ...${ops} /></div>`}
              ${data.supports_signing && html`<div class="card"><${DigestForm} ...${ops} kind="signature" hashes=${hashes} /></div>`}
              ${data.supports_signing && html`<div class="card"><${VerifyForm} ...${ops} kind="signature" hashes=${hashes} /></div>`}
              <div class="card"><${DigestForm} ...${ops} kind="hmac" hashes=${true} /></div>
              <div class="card"><${VerifyForm} ...${ops} kind="hmac" hashes=${true} /></div>
            </div>
            <div class="card">
              <h2>Key</h2>
              <${Facts}
                items=${[
                  ['Type', data.type],
                  ['Latest version', String(data.latest_version)],
                  ['Decrypts from version', String(data.min_decryption_version)],
                  ['Encrypts with version', data.min_encryption_version ? String(data.min_encryption_version) : 'the latest'],
                  ['Rotates', data.auto_rotate_period ? `every ${formatTtl(data.auto_rotate_period)}` : 'by hand only'],
                  ['Derived', data.derived ? 'yes' : 'no'],
                  ['Exportable', data.exportable ? 'yes' : 'no'],
                ]}
              />
              <${Rotate} api=${props.api} mount=${mount} name=${key} onDone=${props.reload} />
              <${Versions} data=${data} />
            </div>
            <div class="card">
              <${KeyConfig} key=${`${mount}/${key}/${data.latest_version}`} api=${props.api} mount=${mount} data=${data} onSaved=${props.reload} />
              <div class="actions">
                <${ConfirmButton}
                  label="Delete key"
                  confirmLabel="Delete"
                  question=${`Delete the key ${key}? What it encrypted can no longer be decrypted.`}
                  onConfirm=${async () => {
                    await props.api.delete(keyUrl(mount, key));
                    props.navigate(transitHref(mount));
                  }}
                />
              </div>
            </div>`}
    </section>`;
  },
});

function Rotate({ api, mount, name, onDone }: { api: ApiClient; mount: string; name: string; onDone: () => void }) {
  const action = useAction();
  const rotate = () =>
    void action.run(async () => {
      await api.post(`${keyUrl(mount, name)}/rotate`, {});
      onDone();
    });
  return html`<div class="actions">
    <button type="button" disabled=${action.busy} onClick=${rotate}>Rotate key</button>
    <${ErrorMessage} messages=${action.error} />
  </div>`;
}

function Versions({ data }: { data: TransitKey }) {
  const versions = Object.entries(data.keys ?? {}).sort(([a], [b]) => Number(b) - Number(a));
  const asymmetric = versions.some(([, v]) => typeof v === 'object');
  return html`<table>
    <caption>Versions</caption>
    <thead><tr><th scope="col">Version</th><th scope="col">Created</th>${asymmetric && html`<th scope="col">Public key</th>`}</tr></thead>
    <tbody>
      ${versions.map(([n, v]) => html`<tr>
        <td>${n}${Number(n) < data.min_decryption_version && html` <span class="badge warn">no decryption</span>`}</td>
        <td>${formatTime(typeof v === 'number' ? v * 1000 : Date.parse(v.creation_time))}</td>
        ${asymmetric && html`<td>${typeof v === 'object' && html`<code>${v.public_key}</code>`}</td>`}
      </tr>`)}
    </tbody>
  </table>`;
}

/** `keys/:name/config`: the minimum versions, auto-rotation and what may be done with the key. */
function KeyConfig({ api, mount, data, onSaved }: { api: ApiClient; mount: string; data: TransitKey; onSaved: () => void }) {
  const [minDecryption, setMinDecryption] = useState(String(data.min_decryption_version));
  const [minEncryption, setMinEncryption] = useState(String(data.min_encryption_version));
  const [rotate, setRotate] = useState(data.auto_rotate_period ? ttlField(data.auto_rotate_period) : '');
  const [deletion, setDeletion] = useState(data.deletion_allowed);
  const [exportable, setExportable] = useState(data.exportable);
  const [backup, setBackup] = useState(data.allow_plaintext_backup);
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void action.run(async () => {
      await api.post(`${keyUrl(mount, data.name)}/config`, {
        min_decryption_version: Number(minDecryption),
        min_encryption_version: Number(minEncryption),
        auto_rotate_period: rotate.trim() || '0',
        deletion_allowed: deletion,
        exportable,
        allow_plaintext_backup: backup,
      });
      setSaved(true);
      onSaved();
    });
  };
  return html`<form onSubmit=${submit} aria-labelledby="transit-config">
    <h2 id="transit-config">Configuration</h2>
    <div class="row">
      <${Field} label="Minimum decryption version" name="min_decryption_version" type="number" min="1" max=${data.latest_version} required value=${minDecryption} onInput=${setMinDecryption} />
      <${Field} label="Minimum encryption version" name="min_encryption_version" type="number" min="0" max=${data.latest_version} required value=${minEncryption} onInput=${setMinEncryption} hint="0: the latest." />
      <${Field} label="Rotate every" name="auto_rotate_period" value=${rotate} onInput=${setRotate} hint="Empty: never. At least 1h." />
    </div>
    <${Checkbox} label="Deletion allowed" name="deletion_allowed" checked=${deletion} onChange=${setDeletion} />
    <${Checkbox} label="Exportable (cannot be undone)" name="exportable" checked=${exportable} onChange=${setExportable} />
    <${Checkbox} label="Allow plaintext backup (cannot be undone)" name="allow_plaintext_backup" checked=${backup} onChange=${setBackup} />
    <${ErrorMessage} messages=${action.error} />
    ${saved && html`<${Notice}>Saved the configuration of ${data.name}.<//>`}
    <button type="submit" disabled=${action.busy}>Save configuration</button>
  </form>`;
}
