import { useEffect, useState } from 'preact/hooks';
import type { ApiClient } from '../../shared/api';
import { ErrorMessage, Facts, Field, TextArea } from '../../shared/components';
import type { PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { ConfirmButton, Table } from '../components';
import { type Live, readLive, type Source, useLive, writeRaw } from '../live';
import { catalogPage } from '../page';
import { encodeKey, type KvEntry, type Session } from '../types';

/**
 * The key/value store: `/kv` and `/kv/<prefix>/` are folders (the keys one level below, through
 * `?keys&separator=/`), `/kv/<key>` is a key with its value, flags and the session holding its lock.
 */
const folder = (prefix: string): Source<string[]> => ({ path: `/v1/kv/${encodeKey(prefix)}`, query: { keys: 'true', separator: '/' }, missing: [] });
const entry = (key: string): Source<KvEntry[] | null> => ({ path: `/v1/kv/${encodeKey(key)}`, missing: null });

const isFolder = (key: string) => key === '' || key.endsWith('/');
const kvHref = (key: string) => `/kv/${encodeKey(key)}`;

type KvData = { readonly folder: Live<string[]> } | { readonly entry: Live<KvEntry[] | null> };

async function loadKv(api: ApiClient, key: string): Promise<KvData> {
  if (isFolder(key)) return { folder: await readFolder(api, key) };
  return { entry: await readLive(api, entry(key)) };
}

function readFolder(api: ApiClient, prefix: string): Promise<Live<string[]>> {
  return readLive(api, folder(prefix));
}

const kvDef = {
  title: ({ params }: { params: Record<string, string> }) => (params.key ? `Key/Value ${params.key}` : 'Key/Value'),
  load: ({ api, params }: { api: ApiClient; params: Record<string, string> }) => loadKv(api, params.key ?? ''),
  view: (props: PageProps<KvData>) =>
    'folder' in props.data
      ? html`<${FolderView} key=${props.params.key ?? ''} prefix=${props.params.key ?? ''} ...${props} />`
      : html`<${KeyView} key=${props.params.key} ...${props} />`,
};

export const kvRootPage = catalogPage({ path: '/kv', ...kvDef });
export const kvPage = catalogPage({ path: '/kv/*key', ...kvDef });

/** Links to each folder above a key: Key/Value › app › config. */
function Breadcrumbs({ keyPath, href }: { keyPath: string; href: (p: string) => string }) {
  const parts = keyPath.split('/').filter(Boolean);
  return html`<nav aria-label="Breadcrumb" class="catalog-breadcrumbs">
    <ol>
      <li><a href=${href('/kv')}>Key/Value</a></li>
      ${parts.slice(0, isFolder(keyPath) ? -1 : parts.length - 1).map(
        (part, i) => html`<li><a href=${href(kvHref(`${parts.slice(0, i + 1).join('/')}/`))}>${part}</a></li>`,
      )}
    </ol>
  </nav>`;
}

function FolderView(props: PageProps<{ folder: Live<string[]> }> & { prefix: string }) {
  const { api, data, prefix, href, navigate } = props;
  const keys = useLive(api, folder(prefix), data.folder);
  const action = useAction();
  const removeFolder = () =>
    void action.run(async () => {
      await writeRaw(api, 'DELETE', `/v1/kv/${encodeKey(prefix)}`, { recurse: 'true' });
      const parent = prefix.slice(0, -1).split('/').slice(0, -1).join('/');
      navigate(parent ? kvHref(`${parent}/`) : '/kv');
    });
  return html`<section>
    <${Breadcrumbs} keyPath=${prefix} href=${href} />
    <h1>${prefix ? `Key/Value: ${prefix}` : 'Key/Value'}</h1>
    <${Table} caption=${`Keys under ${prefix || 'the root'}`} headers=${['Name', 'Kind']} empty="No keys here (or your token may list none).">
      ${keys.map((k) => {
        const name = k.slice(prefix.length);
        return html`<tr key=${k}>
          <td><a href=${href(kvHref(k))}>${name}</a></td>
          <td>${isFolder(k) ? 'folder' : 'key'}</td>
        </tr>`;
      })}
    <//>
    ${prefix &&
    html`<div class="actions">
      <${ConfirmButton} label="Delete folder" confirmLabel="Confirm delete of the folder and every key in it" action=${action} onConfirm=${removeFolder} />
    </div>`}
    <${ErrorMessage} messages=${action.error} />
    <${NewKey} api=${api} prefix=${prefix} navigate=${navigate} />
  </section>`;
}

/** Creates a key under the folder, refusing to overwrite one that exists (cas=0). */
function NewKey({ api, prefix, navigate }: { api: ApiClient; prefix: string; navigate: (p: string) => void }) {
  const [name, setName] = useState('');
  const [value, setValue] = useState('');
  const [flags, setFlags] = useState('0');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const key = prefix + name.trim();
      const created = await writeRaw<boolean>(api, 'PUT', `/v1/kv/${encodeKey(key)}`, { flags: flags.trim() || '0', cas: 0 }, value);
      if (!created) throw new Error(`The key ${key} exists already: open it to edit it`);
      navigate(kvHref(key));
    });
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="new-key">
    <h2 id="new-key">New key</h2>
    <div class="row">
      <${Field} label="Key name" name="name" required value=${name} onInput=${setName} hint=${`Under "${prefix || '/'}"; end it with / to create a folder`} />
      <${Field} label="Flags" name="flags" inputmode="numeric" pattern="[0-9]+" value=${flags} onInput=${setFlags} hint="An unsigned 64-bit integer for clients" />
    </div>
    <${TextArea} label="Value" name="value" value=${value} onInput=${setValue} />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Create key</button>
  </form>`;
}

/** The value as text, or undefined when it is not UTF-8. */
function decodeValue(base64: string | null): string | undefined {
  if (!base64) return '';
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

function KeyView(props: PageProps<{ entry: Live<KvEntry[] | null> }>) {
  const { api, data, params, href, navigate, reload } = props;
  const key = params.key;
  const [current] = useLive(api, entry(key), data.entry) ?? [];
  const parent = key.split('/').slice(0, -1).join('/');
  const back = parent ? kvHref(`${parent}/`) : '/kv';
  if (!current) {
    return html`<section>
      <${Breadcrumbs} keyPath=${key} href=${href} />
      <h1>Key ${key}</h1>
      <p role="status">This key does not exist (any more). <a href=${href(back)}>Back to the folder</a>.</p>
    </section>`;
  }
  const text = decodeValue(current.Value);
  return html`<section>
    <${Breadcrumbs} keyPath=${key} href=${href} />
    <h1>Key ${key}</h1>
    <${Facts}
      items=${[
        ['Flags', String(current.Flags)],
        [
          'Lock',
          current.Session
            ? html`<span class="badge warn">locked</span> held by session <${LockHolder} api=${api} id=${current.Session} href=${href} />`
            : 'not locked',
        ],
        ['Lock index', String(current.LockIndex)],
        ['Modify index', String(current.ModifyIndex)],
      ]}
    />
    <h2>Value</h2>
    ${text === undefined
      ? html`<p class="muted">Binary value (${atob(current.Value ?? '').length} bytes): not shown.</p>`
      : html`<pre class="catalog-value" tabindex="0">${text || html`<span class="muted">(empty)</span>`}</pre>`}
    ${text !== undefined && html`<${EditKey} api=${api} entry=${current} text=${text} onSaved=${reload} />`}
    <${DeleteKey} api=${api} entry=${current} onDeleted=${() => navigate(back)} />
  </section>`;
}

/** The session holding a lock, by name (its ID until the name is read, or when it has none). */
function LockHolder({ api, id, href }: { api: ApiClient; id: string; href: (p: string) => string }) {
  const [session, setSession] = useState<Session | undefined>(undefined);
  useEffect(() => {
    const controller = new AbortController();
    readLive(api, { path: `/v1/session/info/${encodeURIComponent(id)}` } as Source<Session[]>, undefined, controller.signal).then(
      ({ data }) => setSession(data[0]),
      () => undefined, // the ID stays shown
    );
    return () => controller.abort();
  }, [api, id]);
  return html`<a href=${href(`/sessions/${encodeURIComponent(id)}`)}>${session?.Name || id}</a>${session && ` on ${session.Node}`}`;
}

/** Saves a new value and flags, unless the key changed meanwhile (cas on its modify index). */
function EditKey({ api, entry: current, text, onSaved }: { api: ApiClient; entry: KvEntry; text: string; onSaved: () => void }) {
  const [value, setValue] = useState(text);
  const [flags, setFlags] = useState(String(current.Flags));
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const saved = await writeRaw<boolean>(api, 'PUT', `/v1/kv/${encodeKey(current.Key)}`, { flags: flags.trim() || '0', cas: current.ModifyIndex }, value);
      if (!saved) throw new Error('The key changed since this page read it: look at its new value, then save again');
      onSaved();
    });
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="edit-key">
    <h2 id="edit-key">Edit</h2>
    <${TextArea} label="New value" name="value" value=${value} onInput=${setValue} />
    <${Field} label="Flags" name="flags" inputmode="numeric" pattern="[0-9]+" value=${flags} onInput=${setFlags} />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Save</button>
  </form>`;
}

function DeleteKey({ api, entry: current, onDeleted }: { api: ApiClient; entry: KvEntry; onDeleted: () => void }) {
  const action = useAction();
  const remove = () =>
    void action.run(async () => {
      await writeRaw(api, 'DELETE', `/v1/kv/${encodeKey(current.Key)}`, {});
      onDeleted();
    });
  return html`<div class="actions">
    <${ConfirmButton} label="Delete key" confirmLabel="Confirm delete" action=${action} onConfirm=${remove} />
    <${ErrorMessage} messages=${action.error} />
  </div>`;
}
