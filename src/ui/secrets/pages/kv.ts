import { useState } from 'preact/hooks';
import { ApiClient, ApiError } from '../../shared/api';
import { ErrorMessage, Field, Notice, TextArea } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { formatTime } from '../../shared/format';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { apiPath, Denied, isDenied, listKeys, mountsOfType, readOrDenied } from '../api';
import { ConfirmButton, PermissionDenied } from '../components';

interface KvMount {
  readonly path: string;
  readonly version?: string;
}

/** `/kv`: the key/value mounts. */
export const kvMountsPage = page({
  path: '/kv',
  title: 'Key/value',
  signedIn: true,
  load: ({ api }) => readOrDenied(mountsOfType(api, ['kv'])),
  view: (props: PageProps<KvMount[] | Denied>) => html`<section>
    <h1>Key/value</h1>
    ${isDenied(props.data)
      ? html`<${PermissionDenied} what="listing secrets engines" denied=${props.data} />`
      : props.data.length === 0
        ? html`<p>No key/value secrets engine is enabled.</p>`
        : html`<ul class="secrets-list">
            ${props.data.map((m) => html`<li><a href=${props.href(`/kv/${encodeURIComponent(m.path)}/`)}>${m.path}/</a> <span class="badge">v${m.version ?? '1'}</span></li>`)}
          </ul>`}
  </section>`,
});

/** Where a mount's paths are read and written: v2 keeps data under `data/` and listings under `metadata/`. */
class Kv {
  constructor(
    readonly api: ApiClient,
    readonly mount: string,
    readonly v2: boolean,
  ) {}

  private url(kind: 'data' | 'metadata' | 'delete' | 'undelete', path: string): string {
    const rest = path.split('/').map(encodeURIComponent).join('/');
    return `/v1/${apiPath(this.mount)}/${this.v2 ? `${kind}/` : ''}${rest}`;
  }

  list(path: string): Promise<string[]> {
    return listKeys(this.api, this.url('metadata', path));
  }

  async read(path: string, version?: string): Promise<Record<string, unknown>> {
    const res = await this.api.get<{ data: Record<string, unknown> & { data?: Record<string, unknown> } }>(this.url('data', path), { version });
    return (this.v2 ? res.data.data : res.data) ?? {};
  }

  async write(path: string, data: Record<string, unknown>): Promise<void> {
    await this.api.post(this.url('data', path), this.v2 ? { data } : data);
  }

  /** Deletes a version (v2: soft, it can be undeleted) or the secret (v1). */
  async remove(path: string, version: number | undefined): Promise<void> {
    if (this.v2 && version !== undefined) await this.api.post(this.url('delete', path), { versions: [version] });
    else await this.api.delete(this.url('data', path));
  }

  async undelete(path: string, version: number): Promise<void> {
    await this.api.post(this.url('undelete', path), { versions: [version] });
  }

  async versions(path: string): Promise<KvVersions | undefined> {
    if (!this.v2) return undefined;
    return (await this.api.get<{ data: KvVersions }>(this.url('metadata', path))).data;
  }
}

interface KvVersions {
  readonly current_version: number;
  readonly versions: Record<string, { created_time: string; deletion_time: string; destroyed: boolean }>;
}

type KvPage =
  | { readonly kind: 'folder'; readonly keys: string[] | Denied; readonly v2: boolean }
  | {
    readonly kind: 'secret';
    /** null: the version shown is deleted (v2). */
    readonly data: Record<string, unknown> | Denied | null;
    readonly versions?: KvVersions;
    readonly v2: boolean;
  };

/** The mount's KV version from its configuration; a token that may not read it gets version 2 (the default `secret/`'s). */
async function kvOf(api: ApiClient, mount: string): Promise<Kv> {
  const info = await readOrDenied(api.get<{ data: { options: Record<string, string> | null } }>(`/v1/sys/mounts/${apiPath(mount)}`));
  return new Kv(api, mount, isDenied(info) || info.data.options?.version === '2');
}

/** `/kv/:mount/<path>`: a folder (path empty or ending in `/`) lists its keys; a secret shows its data, its versions (v2) and a form to write a new one. */
export const kvPathPage = page({
  path: '/kv/:mount/*path',
  title: ({ params }) => `${params.mount}/${params.path}`,
  signedIn: true,
  load: async ({ api, params, query }): Promise<KvPage> => {
    const kv = await kvOf(api, params.mount);
    if (params.path === '' || params.path.endsWith('/')) return { kind: 'folder', keys: await readOrDenied(kv.list(params.path)), v2: kv.v2 };
    let data: Record<string, unknown> | Denied | null;
    try {
      data = await readOrDenied(kv.read(params.path, query.get('version') ?? undefined));
    } catch (err) {
      // A deleted v2 version reads as 404 while its metadata stays: the page shows it as deleted.
      if (!(kv.v2 && err instanceof ApiError && err.status === 404)) throw err;
      data = null;
    }
    const versions = isDenied(data) ? undefined : await readOrDenied(kv.versions(params.path)).then((v) => (isDenied(v) ? undefined : v));
    return { kind: 'secret', data, versions, v2: kv.v2 };
  },
  view: (props: PageProps<KvPage>) => {
    const { mount, path } = props.params;
    const parts = path.split('/').filter(Boolean);
    const base = (p: string) => props.href(`/kv/${encodeURIComponent(mount)}/${p}`);
    return html`<section>
      <nav aria-label="Breadcrumb" class="secrets-crumbs">
        <a href=${props.href('/kv')}>Key/value</a> / <a href=${base('')}>${mount}</a>
        ${parts.map((p, i) => html` / <a href=${base(`${parts.slice(0, i + 1).join('/')}${i < parts.length - 1 || path.endsWith('/') ? '/' : ''}`)}>${p}</a>`)}
      </nav>
      <h1>${mount}/${path}</h1>
      ${props.data.kind === 'folder' ? html`<${Folder} ...${props} />` : html`<${Secret} ...${props} />`}
    </section>`;
  },
});

function Folder(props: PageProps<KvPage>) {
  const { mount, path } = props.params;
  const data = props.data as Extract<KvPage, { kind: 'folder' }>;
  return html`<div>
    ${isDenied(data.keys)
      ? html`<${PermissionDenied} what=${`listing ${mount}/${path}`} denied=${data.keys} />`
      : data.keys.length === 0
        ? html`<p>Nothing here yet.</p>`
        : html`<ul class="secrets-list">
            ${data.keys.map((k) => html`<li><a href=${props.href(`/kv/${encodeURIComponent(mount)}/${path}${k}`)}>${k}</a></li>`)}
          </ul>`}
    <div class="card">
      <h2>New secret</h2>
      <${WriteForm} key=${`${mount}/${path}`} api=${props.api} mount=${mount} v2=${data.v2} folder=${path} onSaved=${(p: string) => props.navigate(`/kv/${encodeURIComponent(mount)}/${p}`)} />
    </div>
  </div>`;
}

function Secret(props: PageProps<KvPage>) {
  const { mount, path } = props.params;
  const data = props.data as Extract<KvPage, { kind: 'secret' }>;
  const undelete = useAction();
  if (isDenied(data.data)) return html`<${PermissionDenied} what=${`reading ${mount}/${path}`} denied=${data.data} />`;
  const shown = props.query.get('version');
  const versions = data.versions;
  const number = versions ? Number(shown ?? versions.current_version) : undefined;
  const kv = new Kv(props.api, mount, data.v2);
  return html`<div>
    ${versions && html`<p class="muted">Version ${number} of ${versions.current_version}</p>`}
    ${data.data === null
      ? html`<p>Version ${number} is deleted.</p>
          <div class="actions">
            <button type="button" disabled=${undelete.busy} onClick=${() => void undelete.run(() => kv.undelete(path, number!)).then(props.reload)}>
              Undelete version ${number}
            </button>
          </div>
          <${ErrorMessage} messages=${undelete.error} />`
      : html`<${SecretData} path=${path} data=${data.data} />
          <div class="actions">
            <${ConfirmButton}
              label=${data.v2 ? `Delete version ${number}` : 'Delete secret'}
              confirmLabel="Delete"
              question=${data.v2 ? `Delete version ${number} of ${path}? It can be undeleted.` : `Delete ${path}?`}
              onConfirm=${async () => {
                await kv.remove(path, number);
                if (data.v2) props.reload();
                else props.navigate(`/kv/${encodeURIComponent(mount)}/${path.replace(/[^/]*$/, '')}`);
              }}
            />
          </div>`}
    ${versions &&
    html`<div class="card">
      <h2>Versions</h2>
      <table>
        <caption class="visually-hidden">Versions of ${path}</caption>
        <thead><tr><th scope="col">Version</th><th scope="col">Created</th><th scope="col">State</th></tr></thead>
        <tbody>
          ${Object.entries(versions.versions)
            .sort(([a], [b]) => Number(b) - Number(a))
            .map(
              ([n, v]) => html`<tr>
                <td><a href=${props.href(`/kv/${encodeURIComponent(mount)}/${path}?version=${n}`)} aria-current=${String(shown ?? versions.current_version) === n ? 'page' : undefined}>Version ${n}</a></td>
                <td>${formatTime(v.created_time)}</td>
                <td>${v.destroyed ? html`<span class="badge danger">destroyed</span>` : v.deletion_time ? html`<span class="badge warn">deleted</span>` : html`<span class="badge ok">available</span>`}</td>
              </tr>`,
            )}
        </tbody>
      </table>
    </div>`}
    <div class="card">
      <h2>Write a new ${data.v2 ? 'version' : 'value'}</h2>
      <${WriteForm} key=${`${mount}/${path}@${number}`} api=${props.api} mount=${mount} v2=${data.v2} path=${path} initial=${data.data} onSaved=${() => (shown ? props.navigate(`/kv/${encodeURIComponent(mount)}/${path}`) : props.reload())} />
    </div>
  </div>`;
}

function SecretData({ path, data }: { path: string; data: Record<string, unknown> }) {
  return html`<table>
    <caption class="visually-hidden">Data of ${path}</caption>
    <thead><tr><th scope="col">Key</th><th scope="col">Value</th></tr></thead>
    <tbody>
      ${Object.entries(data).map(([k, v]) => html`<tr><td><code>${k}</code></td><td><code>${typeof v === 'string' ? v : JSON.stringify(v)}</code></td></tr>`)}
    </tbody>
  </table>`;
}

/** Writes a secret as a JSON object (each key a field); a new secret also takes its path under the folder. */
interface WriteFormProps {
  readonly api: ApiClient;
  readonly mount: string;
  readonly v2: boolean;
  /** A new secret: the folder it goes in (its name is asked). */
  readonly folder?: string;
  /** An existing secret: its path and current data. */
  readonly path?: string;
  readonly initial?: Record<string, unknown>;
  readonly onSaved: (path: string) => void;
}

function WriteForm(props: WriteFormProps) {
  const [name, setName] = useState('');
  const [json, setJson] = useState(JSON.stringify(props.initial ?? {}, null, 2));
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void action.run(async () => {
      let data: unknown;
      try {
        data = JSON.parse(json);
      } catch (err) {
        throw new Error(`the data is not JSON: ${(err as Error).message}`);
      }
      if (typeof data !== 'object' || data === null || Array.isArray(data)) throw new Error('the data must be a JSON object: {"key": "value"}');
      const target = props.path ?? `${props.folder ?? ''}${name.trim().replace(/^\/+/, '')}`;
      if (!target || target.endsWith('/')) throw new Error('path is required (a name, not ending in /)');
      await new Kv(props.api, props.mount, props.v2).write(target, data as Record<string, unknown>);
      setSaved(true);
      props.onSaved(target);
    });
  };
  return html`<form onSubmit=${submit} aria-label=${props.path ? `Write ${props.path}` : 'New secret'}>
    ${!props.path && html`<${Field} label="Path" name="path" required value=${name} onInput=${setName} hint=${`Under ${props.mount}/${props.folder ?? ''}; slashes make folders.`} />`}
    <${TextArea} label="Data (JSON object)" name="data" rows="8" spellcheck="false" value=${json} onInput=${setJson} />
    <${ErrorMessage} messages=${action.error} />
    ${saved && html`<${Notice}>Saved.<//>`}
    <button type="submit" disabled=${action.busy}>Save</button>
  </form>`;
}
