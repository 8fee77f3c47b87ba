import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { ErrorMessage, Field, Select, TextArea } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { formatTime } from '../../shared/format';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, listKeys, readOrDenied } from '../api';
import { formatTtl, PermissionDenied, splitList } from '../components';
import { engineMountsPage, mountUrl } from './engine-mounts';

export const databaseHref = (mount: string, kind?: 'connections' | 'roles', name?: string) =>
  `/database/${encodeURIComponent(mount)}${kind && name !== undefined ? `/${kind}/${encodeURIComponent(name)}` : ''}`;

/** `/database`: the database mounts. */
export const databaseMountsPage = engineMountsPage({ path: '/database', title: 'Databases', type: 'database', engine: 'database', href: (mount) => databaseHref(mount) });

/** A static role as `static-roles/:name` reads it: its rotation state. */
interface StaticRole {
  readonly name: string;
  readonly db_name: string;
  readonly username: string;
  readonly rotation_period: number;
  readonly last_vault_rotation: string;
  /** Seconds to the next rotation. */
  readonly ttl: number;
}

interface DatabaseMount {
  readonly connections: string[] | Denied;
  readonly roles: string[] | Denied;
  readonly staticRoles: StaticRole[] | Denied;
}

async function staticRoles(api: ApiClient, mount: string): Promise<StaticRole[]> {
  const names = await listKeys(api, mountUrl(mount, 'static-roles'));
  return Promise.all(names.map(async (name) => ({ name, ...(await api.get<{ data: Omit<StaticRole, 'name'> }>(mountUrl(mount, 'static-roles', name))).data })));
}

/** `/database/:mount`: connections, roles, static roles (with their rotation state); creating each. */
export const databaseMountPage = page({
  path: '/database/:mount',
  title: ({ params }) => `Database ${params.mount}/`,
  signedIn: true,
  load: async ({ api, params }): Promise<DatabaseMount> => ({
    connections: await readOrDenied(listKeys(api, mountUrl(params.mount, 'config'))),
    roles: await readOrDenied(listKeys(api, mountUrl(params.mount, 'roles'))),
    staticRoles: await readOrDenied(staticRoles(api, params.mount)),
  }),
  view: (props: PageProps<DatabaseMount>) => {
    const { data, params } = props;
    const mount = params.mount;
    const links = (names: string[], kind: 'connections' | 'roles') =>
      html`<ul class="secrets-list">${names.map((n) => html`<li><a href=${props.href(databaseHref(mount, kind, n))}>${n}</a></li>`)}</ul>`;
    return html`<section>
      <p><a href=${props.href('/database')}>Databases</a></p>
      <h1>Database ${mount}/</h1>
      <div class="card">
        <h2>Connections</h2>
        ${isDenied(data.connections)
          ? html`<${PermissionDenied} what="listing connections" denied=${data.connections} />`
          : data.connections.length === 0 ? html`<p>No connections yet.</p>` : links(data.connections, 'connections')}
        <h3>New connection</h3>
        <${ConnectionForm} api=${props.api} mount=${mount} onSaved=${(name: string) => props.navigate(databaseHref(mount, 'connections', name))} />
      </div>
      <div class="card">
        <h2>Roles</h2>
        ${isDenied(data.roles)
          ? html`<${PermissionDenied} what="listing roles" denied=${data.roles} />`
          : data.roles.length === 0 ? html`<p>No roles yet.</p>` : links(data.roles, 'roles')}
        <h3>New role</h3>
        <${RoleForm} api=${props.api} mount=${mount} onSaved=${(name: string) => props.navigate(databaseHref(mount, 'roles', name))} />
      </div>
      <div class="card">
        <h2>Static roles</h2>
        ${isDenied(data.staticRoles)
          ? html`<${PermissionDenied} what="listing static roles" denied=${data.staticRoles} />`
          : data.staticRoles.length === 0
            ? html`<p>No static roles yet.</p>`
            : html`<table>
                <caption class="visually-hidden">Static roles of ${mount}/</caption>
                <thead><tr><th scope="col">Role</th><th scope="col">User</th><th scope="col">Connection</th><th scope="col">Rotates every</th><th scope="col">Last rotation</th><th scope="col">Next rotation in</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
                <tbody>
                  ${data.staticRoles.map((r) => html`<tr>
                    <td>${r.name}</td>
                    <td><code>${r.username}</code></td>
                    <td>${r.db_name}</td>
                    <td>${formatTtl(r.rotation_period)}</td>
                    <td>${formatTime(Date.parse(r.last_vault_rotation))}</td>
                    <td>${formatTtl(r.ttl, 'now')}</td>
                    <td><${RotateNow} api=${props.api} mount=${mount} name=${r.name} onDone=${props.reload} /></td>
                  </tr>`)}
                </tbody>
              </table>`}
        <h3>New static role</h3>
        <${StaticRoleForm} api=${props.api} mount=${mount} onSaved=${props.reload} />
      </div>
    </section>`;
  },
});

function RotateNow({ api, mount, name, onDone }: { api: ApiClient; mount: string; name: string; onDone: () => void }) {
  const action = useAction();
  const rotate = () =>
    void action.run(async () => {
      await api.post(mountUrl(mount, 'rotate-role', name), {});
      onDone();
    });
  return html`<span>
    <button type="button" class="secondary" aria-label=${`Rotate ${name} now`} disabled=${action.busy} onClick=${rotate}>Rotate now</button>
    <${ErrorMessage} messages=${action.error} />
  </span>`;
}

const PLUGINS: readonly (readonly [string, string])[] = [
  ['postgresql-database-plugin', 'PostgreSQL'],
  ['mysql-database-plugin', 'MySQL / MariaDB'],
];

/** A connection as `config/:name` reads it (never its password). */
export interface Connection {
  readonly plugin_name: string;
  readonly allowed_roles: readonly string[];
  readonly connection_details: { readonly connection_url: string; readonly username: string };
}

/**
 * Creates a connection (no `name`) or edits one. The password field starts empty: the API never
 * returns it; left empty on an edit, the stored one is kept.
 */
interface ConnectionFormProps {
  readonly api: ApiClient;
  readonly mount: string;
  /** The connection edited; none: a new one (its name is asked). */
  readonly name?: string;
  readonly conn?: Connection;
  readonly onSaved: (name: string) => void;
}

export function ConnectionForm({ api, mount, name, conn, onSaved }: ConnectionFormProps) {
  const [connName, setConnName] = useState(name ?? '');
  const [plugin, setPlugin] = useState(conn?.plugin_name ?? PLUGINS[0][0]);
  const [url, setUrl] = useState(conn?.connection_details.connection_url ?? '');
  const [username, setUsername] = useState(conn?.connection_details.username ?? '');
  const [password, setPassword] = useState('');
  const [allowed, setAllowed] = useState(conn?.allowed_roles.join(', ') ?? '');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const target = connName.trim();
      if (!target) throw new Error('name is required');
      await api.post(mountUrl(mount, 'config', target), {
        plugin_name: plugin,
        connection_url: url.trim(),
        username: username.trim() || undefined,
        password: password || undefined,
        allowed_roles: splitList(allowed),
      });
      setPassword('');
      onSaved(target);
    });
  };
  return html`<form onSubmit=${submit} aria-label=${name ? `Edit connection ${name}` : 'New connection'}>
    <div class="row">
      ${!name && html`<${Field} label="Connection name" name="name" required value=${connName} onInput=${setConnName} />`}
      <${Select} label="Database" name="plugin_name" value=${plugin} options=${PLUGINS} onInput=${setPlugin} />
    </div>
    <${Field} label="Connection URL" name="connection_url" required value=${url} onInput=${setUrl} hint="With {{username}} and {{password}}: postgresql://{{username}}:{{password}}@db:5432/app" />
    <div class="row">
      <${Field} label="Username" name="username" value=${username} onInput=${setUsername} autocomplete="off" />
      <${Field} label="Password" name="password" type="password" value=${password} onInput=${setPassword} autocomplete="new-password" hint=${name ? 'Empty: keep the stored one (never shown).' : 'Stored sealed, never shown again.'} />
    </div>
    <${Field} label="Allowed roles" name="allowed_roles" value=${allowed} onInput=${setAllowed} hint="Comma-separated; * for any, ro-* for a prefix." />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>${name ? 'Save connection' : 'Create connection'}</button>
  </form>`;
}

/** Statements typed one per line; the API takes a list. */
const statementList = (text: string) => text.split('\n').map((s) => s.trim()).filter(Boolean);

function RoleForm({ api, mount, onSaved }: { api: ApiClient; mount: string; onSaved: (name: string) => void }) {
  const [name, setName] = useState('');
  const [dbName, setDbName] = useState('');
  const [statements, setStatements] = useState('');
  const [ttl, setTtl] = useState('1h');
  const [maxTtl, setMaxTtl] = useState('24h');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const target = name.trim();
      if (!target) throw new Error('name is required');
      await api.post(mountUrl(mount, 'roles', target), {
        db_name: dbName.trim(),
        creation_statements: statementList(statements),
        default_ttl: ttl.trim() || undefined,
        max_ttl: maxTtl.trim() || undefined,
      });
      onSaved(target);
    });
  };
  return html`<form onSubmit=${submit} aria-label="New role">
    <div class="row">
      <${Field} label="Role name" name="name" required value=${name} onInput=${setName} />
      <${Field} label="Connection" name="db_name" required value=${dbName} onInput=${setDbName} />
      <${Field} label="Default TTL" name="default_ttl" value=${ttl} onInput=${setTtl} />
      <${Field} label="Maximum TTL" name="max_ttl" value=${maxTtl} onInput=${setMaxTtl} />
    </div>
    <${TextArea} label="Creation statements" name="creation_statements" required value=${statements} onInput=${setStatements} hint="One per line; {{name}}, {{password}}, {{expiration}} are filled in." />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Create role</button>
  </form>`;
}

function StaticRoleForm({ api, mount, onSaved }: { api: ApiClient; mount: string; onSaved: () => void }) {
  const [name, setName] = useState('');
  const [dbName, setDbName] = useState('');
  const [username, setUsername] = useState('');
  const [period, setPeriod] = useState('24h');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const target = name.trim();
      if (!target) throw new Error('name is required');
      await api.post(mountUrl(mount, 'static-roles', target), { db_name: dbName.trim(), username: username.trim(), rotation_period: period.trim() });
      setName('');
      setUsername('');
      onSaved();
    });
  };
  return html`<form onSubmit=${submit} aria-label="New static role">
    <p class="muted">The password of an existing database user is rotated at once, then every period.</p>
    <div class="row">
      <${Field} label="Static role name" name="name" required value=${name} onInput=${setName} />
      <${Field} label="Connection of the user" name="db_name" required value=${dbName} onInput=${setDbName} />
      <${Field} label="Database user" name="username" required value=${username} onInput=${setUsername} />
      <${Field} label="Rotation period" name="rotation_period" required value=${period} onInput=${setPeriod} />
    </div>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Create static role</button>
  </form>`;
}
