import { useState } from 'preact/hooks';
import { ErrorMessage, Field, Notice } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { apiPath, Denied, isDenied, MountInfo, readMounts, readOrDenied } from '../api';
import { ConfirmButton, formatTtl, PermissionDenied } from '../components';

type Kind = 'secret' | 'auth';
type Mounts = Record<string, MountInfo> | Denied;

const WORDS = {
  secret: { title: 'Secrets engines', one: 'secrets engine', sys: 'mounts', builtin: ['sys/', 'identity/'], types: 'kv, pki, transit, database, ssh, …' },
  auth: { title: 'Auth methods', one: 'auth method', sys: 'auth', builtin: ['token/'], types: 'jwt, oidc' },
} as const;

/** The console's page of a secrets engine mount, for the engine types that have pages. */
const ENGINE_PAGES: Record<string, (mount: string) => string> = {
  pki: (m) => `/pki/${m}`,
  kv: (m) => `/kv/${m}/`,
  transit: (m) => `/transit/${m}`,
  database: (m) => `/database/${m}`,
  ssh: (m) => `/ssh/${m}`,
  transform: (m) => `/transform/${m}`,
  ad: (m) => `/ad/${m}`,
  rabbitmq: (m) => `/rabbitmq/${m}`,
};

/** A mount's path, linked to its pages in the console when its engine has some. */
function MountPath({ kind, type, path, href }: { kind: Kind; type: string; path: string; href: (to: string) => string }) {
  const target = kind === 'secret' ? ENGINE_PAGES[type]?.(encodeURIComponent(path.replace(/\/$/, ''))) : undefined;
  const text = html`<code>${kind === 'auth' ? `auth/${path}` : path}</code>`;
  return target ? html`<a href=${href(target)}>${text}</a>` : text;
}

/** `/mounts` and `/auth-methods`: the mounts of a kind, enabling one, disabling one after a confirmation. */
function mountsPage(kind: Kind, path: string) {
  return page({
    path,
    title: WORDS[kind].title,
    load: ({ api }) => readOrDenied(readMounts(api, kind)),
    signedIn: true,
    view: (props: PageProps<Mounts>) => html`<${MountsView} kind=${kind} ...${props} />`,
  });
}

export const secretMountsPage = mountsPage('secret', '/mounts');
export const authMethodsPage = mountsPage('auth', '/auth-methods');

function MountsView(props: PageProps<Mounts> & { kind: Kind }) {
  const { kind, data } = props;
  const words = WORDS[kind];
  const [done, setDone] = useState<string | undefined>(undefined);
  return html`<section>
    <h1>${words.title}</h1>
    ${done && html`<${Notice}>${done}<//>`}
    ${isDenied(data)
      ? html`<${PermissionDenied} what=${`listing ${words.title.toLowerCase()}`} denied=${data} />`
      : html`<table>
          <caption class="visually-hidden">${words.title}</caption>
          <thead><tr><th scope="col">Path</th><th scope="col">Type</th><th scope="col">Description</th><th scope="col">Default TTL</th><th scope="col">Accessor</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            ${Object.entries(data)
              .sort(([a], [b]) => a.localeCompare(b))
              .map(
                ([path, m]) => html`<tr>
                  <td><${MountPath} kind=${kind} type=${m.type} path=${path} href=${props.href} /></td>
                  <td>${m.type}${m.options?.version ? html` <span class="badge">v${m.options.version}</span>` : ''}</td>
                  <td>${m.description}</td>
                  <td>${formatTtl(m.config.default_lease_ttl, 'system')}</td>
                  <td><code>${m.accessor}</code></td>
                  <td>
                    ${!(words.builtin as readonly string[]).includes(path) &&
                    html`<${ConfirmButton}
                      label=${`Disable ${path}`}
                      text="Disable"
                      confirmLabel="Disable"
                      question=${`Disable ${path}? Its leases are revoked and its data is deleted.`}
                      onConfirm=${async () => {
                        await props.api.delete(`/v1/sys/${words.sys}/${apiPath(path)}`);
                        setDone(`Disabled ${path}.`);
                        props.reload();
                      }}
                    />`}
                  </td>
                </tr>`,
              )}
          </tbody>
        </table>`}
    <${EnableForm} kind=${kind} api=${props.api} onEnabled=${(path: string) => (setDone(`Enabled ${path}.`), props.reload())} />
  </section>`;
}

function EnableForm({ kind, api, onEnabled }: { kind: Kind; api: PageProps['api']; onEnabled: (path: string) => void }) {
  const words = WORDS[kind];
  const [type, setType] = useState('');
  const [path, setPath] = useState('');
  const [description, setDescription] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const at = (path.trim() || type.trim()).replace(/^\/+|\/+$/g, '');
      await api.post(`/v1/sys/${words.sys}/${apiPath(at)}`, { type: type.trim(), description: description.trim() || undefined });
      setType('');
      setPath('');
      setDescription('');
      onEnabled(`${at}/`);
    });
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby=${`enable-${kind}`}>
    <h2 id=${`enable-${kind}`}>Enable a${kind === 'auth' ? 'n' : ''} ${words.one}</h2>
    <div class="row">
      <${Field} label="Type" name="type" required value=${type} onInput=${setType} hint=${words.types} />
      <${Field} label="Path" name="path" value=${path} onInput=${setPath} hint="Empty: the type's name." />
      <${Field} label="Description" name="description" value=${description} onInput=${setDescription} />
    </div>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Enable</button>
  </form>`;
}
