import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { Checkbox, ErrorMessage, Field, Select } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { namedSubmit, useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { apiPath, Denied, isDenied, listKeys, readOrDenied } from '../api';
import { PermissionDenied } from '../components';
import { engineMountsPage } from './engine-mounts';

/** The key types the transit engine creates, as the form offers them. */
const KEY_TYPES: readonly (readonly [string, string])[] = [
  ['aes256-gcm96', 'AES-256-GCM (encryption)'],
  ['aes128-gcm96', 'AES-128-GCM (encryption)'],
  ['chacha20-poly1305', 'ChaCha20-Poly1305 (encryption)'],
  ['ed25519', 'Ed25519 (signing)'],
  ['ecdsa-p256', 'ECDSA P-256 (signing)'],
  ['ecdsa-p384', 'ECDSA P-384 (signing)'],
  ['ecdsa-p521', 'ECDSA P-521 (signing)'],
  ['rsa-2048', 'RSA 2048 (encryption and signing)'],
  ['rsa-3072', 'RSA 3072 (encryption and signing)'],
  ['rsa-4096', 'RSA 4096 (encryption and signing)'],
  ['hmac', 'HMAC only'],
];

export const transitHref = (mount: string, key?: string) => `/transit/${encodeURIComponent(mount)}${key === undefined ? '' : `/keys/${encodeURIComponent(key)}`}`;

/** `/transit`: the transit mounts. */
export const transitMountsPage = engineMountsPage({
  path: '/transit',
  title: 'Transit',
  type: 'transit',
  engine: 'transit',
  lead: 'Encryption as a service: keys that never leave the secrets service.',
  href: (mount) => transitHref(mount),
});

/** `/transit/:mount`: the mount's keys and creating one. */
export const transitMountPage = page({
  path: '/transit/:mount',
  title: ({ params }) => `Transit ${params.mount}/`,
  signedIn: true,
  load: ({ api, params }) => readOrDenied(listKeys(api, `/v1/${apiPath(params.mount)}/keys`)),
  view: (props: PageProps<string[] | Denied>) => {
    const { data, params } = props;
    const mount = params.mount;
    return html`<section>
      <p><a href=${props.href('/transit')}>Transit</a></p>
      <h1>Transit ${mount}/</h1>
      <div class="card">
        <h2>Keys</h2>
        ${isDenied(data)
          ? html`<${PermissionDenied} what="listing keys" denied=${data} />`
          : data.length === 0
            ? html`<p>No keys yet.</p>`
            : html`<ul class="secrets-list">
                ${data.map((k) => html`<li><a href=${props.href(transitHref(mount, k))}>${k}</a></li>`)}
              </ul>`}
      </div>
      <div class="card">
        <${NewKey} api=${props.api} mount=${mount} onCreated=${(name: string) => props.navigate(transitHref(mount, name))} />
      </div>
    </section>`;
  },
});

function NewKey({ api, mount, onCreated }: { api: ApiClient; mount: string; onCreated: (name: string) => void }) {
  const [name, setName] = useState('');
  const [type, setType] = useState('aes256-gcm96');
  const [derived, setDerived] = useState(false);
  const [exportable, setExportable] = useState(false);
  const [rotate, setRotate] = useState('');
  const action = useAction();
  const submit = namedSubmit(action, name, async (target) => {
    await api.post(`/v1/${apiPath(mount)}/keys/${encodeURIComponent(target)}`, {
      type,
      derived: derived || undefined,
      exportable: exportable || undefined,
      auto_rotate_period: rotate.trim() || undefined,
    });
    onCreated(target);
  });
  return html`<form onSubmit=${submit} aria-labelledby="transit-new-key">
    <h2 id="transit-new-key">New key</h2>
    <div class="row">
      <${Field} label="Key name" name="name" required value=${name} onInput=${setName} />
      <${Select} label="Key type" name="type" value=${type} options=${KEY_TYPES} onInput=${setType} />
      <${Field} label="Rotate every" name="auto_rotate_period" value=${rotate} onInput=${setRotate} hint="Empty: never. At least 1h, e.g. 720h." />
    </div>
    <${Checkbox} label="Derived (a context picks the key; encryption keys only)" name="derived" checked=${derived} onChange=${setDerived} />
    <${Checkbox} label="Exportable (cannot be undone)" name="exportable" checked=${exportable} onChange=${setExportable} />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Create key</button>
  </form>`;
}
