import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { ErrorMessage, Field, Select, TextArea } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { formatTime } from '../../shared/format';
import { namedSubmit, useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, listKeys, readOrDenied } from '../api';
import { formatTtl, PermissionDenied, splitList, ttlField } from '../components';
import { engineMountsPage, mountUrl } from './engine-mounts';

export const databaseHref = (mount: string, kind?: 'connections' | 'roles', name?: string) =>
  `/database/${encodeURIComponent(mount)}${kind && name !== undefined ? `/${kind}/${encodeURIComponent(name)}` : ''}`;

/** `/database`: the database mounts. */
export const databaseMountsPage = engineMountsPage({ path: '/database', title: 'Databases', type: 'database', engine: 'database', href: (mount) => databaseHref(mount) });

/** A static role as `static-roles/:name` reads it: its definition and rotation state. */
interface StaticRole extends StaticRoleDefinition {
  readonly name: string;
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
    // The static role whose edit form is open under the table.
    const [editing, setEditing] = useState<string | undefined>(undefined);
    const edited = isDenied(data.staticRoles) ? undefined : data.staticRoles.find((r) => r.name === editing);
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
                    <td class="actions">
                      <${RotateNow} api=${props.api} mount=${mount} name=${r.name} onDone=${props.reload} />
                      <button type="button" class="secondary" aria-label=${`Edit ${r.name}`} aria-expanded=${editing === r.name} aria-controls=${editing === r.name ? 'database-edit-static' : undefined} onClick=${() => setEditing(editing === r.name ? undefined : r.name)}>Edit</button>
                    </td>
                  </tr>`)}
                </tbody>
              </table>`}
        ${edited &&
        html`<${EditStaticRole} key=${edited.name} api=${props.api} mount=${mount} role=${edited} onSaved=${() => (setEditing(undefined), props.reload())} />`}
        <h3>New static role</h3>
        <${StaticRoleForm} api=${props.api} mount=${mount} onSaved=${props.reload} />
      </div>
    </section>`;
  },
});

/** The edit form of one static role, opened from its row (the focus moves to its heading). */
function EditStaticRole({ api, mount, role, onSaved }: { api: ApiClient; mount: string; role: StaticRole; onSaved: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return html`<div id="database-edit-static" class="card">
    <h3 tabindex="-1" ref=${heading}>Edit static role ${role.name}</h3>
    <${StaticRoleForm} api=${api} mount=${mount} name=${role.name} role=${role} onSaved=${onSaved} />
  </div>`;
}

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
  const submit = namedSubmit(action, connName, async (target) => {
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
/** A list of statements as the form shows it: one per line. */
const statementLines = (list: readonly string[] | undefined) => (list ?? []).join('\n');
/** Seconds as the form's duration; 0 (the mount's) as empty. */
const ttlText = (seconds: number) => (seconds ? ttlField(seconds) : '');

/** A role as `roles/:name` reads it. */
export interface Role {
  readonly db_name: string;
  readonly default_ttl: number;
  readonly max_ttl: number;
  readonly creation_statements: readonly string[];
  readonly revocation_statements: readonly string[];
  readonly rollback_statements: readonly string[];
  readonly renew_statements: readonly string[];
}

const OPTIONAL_STATEMENTS = 'One per line. Empty: the database\'s default.';

/** Creates a role (no `role`) or edits one with the same write; `onSaved` gets its name. */
interface RoleFormProps {
  readonly api: ApiClient;
  readonly mount: string;
  /** The role edited; none: a new one (its name is asked). */
  readonly name?: string;
  readonly role?: Role;
  readonly onSaved: (name: string) => void;
}

export function RoleForm({ api, mount, name, role, onSaved }: RoleFormProps) {
  const [roleName, setRoleName] = useState(name ?? '');
  const [dbName, setDbName] = useState(role?.db_name ?? '');
  const [creation, setCreation] = useState(statementLines(role?.creation_statements));
  const [revocation, setRevocation] = useState(statementLines(role?.revocation_statements));
  const [rollback, setRollback] = useState(statementLines(role?.rollback_statements));
  const [renew, setRenew] = useState(statementLines(role?.renew_statements));
  const [ttl, setTtl] = useState(role ? ttlText(role.default_ttl) : '1h');
  const [maxTtl, setMaxTtl] = useState(role ? ttlText(role.max_ttl) : '24h');
  const action = useAction();
  const submit = namedSubmit(action, roleName, async (target) => {
    await api.post(mountUrl(mount, 'roles', target), {
      db_name: dbName.trim(),
      creation_statements: statementList(creation),
      revocation_statements: statementList(revocation),
      rollback_statements: statementList(rollback),
      renew_statements: statementList(renew),
      // An emptied TTL on an edit goes back to the mount's (0); a new role leaves it out.
      default_ttl: ttl.trim() || (role ? 0 : undefined),
      max_ttl: maxTtl.trim() || (role ? 0 : undefined),
    });
    onSaved(target);
  });
  return html`<form onSubmit=${submit} aria-label=${name ? `Edit role ${name}` : 'New role'}>
    <div class="row">
      ${!name && html`<${Field} label="Role name" name="name" required value=${roleName} onInput=${setRoleName} />`}
      <${Field} label="Connection" name="db_name" required value=${dbName} onInput=${setDbName} />
      <${Field} label="Default TTL" name="default_ttl" value=${ttl} onInput=${setTtl} hint="Empty: the mount's." />
      <${Field} label="Maximum TTL" name="max_ttl" value=${maxTtl} onInput=${setMaxTtl} hint="Empty: the mount's." />
    </div>
    <${TextArea} label="Creation statements" name="creation_statements" required value=${creation} onInput=${setCreation} hint="One per line; {{name}}, {{password}}, {{expiration}} are filled in." />
    <details open=${Boolean(role && (role.revocation_statements.length || role.rollback_statements.length || role.renew_statements.length))}>
      <summary>Revocation, rollback and renewal</summary>
      <${TextArea} label="Revocation statements" name="revocation_statements" value=${revocation} onInput=${setRevocation} hint=${OPTIONAL_STATEMENTS} />
      <${TextArea} label="Rollback statements" name="rollback_statements" value=${rollback} onInput=${setRollback} hint="One per line, run when the creation fails halfway. Empty: none." />
      <${TextArea} label="Renew statements" name="renew_statements" value=${renew} onInput=${setRenew} hint=${OPTIONAL_STATEMENTS} />
    </details>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>${name ? 'Save role' : 'Create role'}</button>
  </form>`;
}

/** A static role's definition as `static-roles/:name` reads it (with its rotation state). */
export interface StaticRoleDefinition {
  readonly db_name: string;
  readonly username: string;
  readonly rotation_period: number;
  readonly rotation_statements: readonly string[];
}

/** Creates a static role (no `role`) or edits one (its database user cannot change). */
interface StaticRoleFormProps {
  readonly api: ApiClient;
  readonly mount: string;
  readonly name?: string;
  readonly role?: StaticRoleDefinition;
  readonly onSaved: () => void;
}

function StaticRoleForm({ api, mount, name, role, onSaved }: StaticRoleFormProps) {
  const [roleName, setRoleName] = useState(name ?? '');
  const [dbName, setDbName] = useState(role?.db_name ?? '');
  const [username, setUsername] = useState(role?.username ?? '');
  const [period, setPeriod] = useState(role ? ttlText(role.rotation_period) : '24h');
  const [rotation, setRotation] = useState(statementLines(role?.rotation_statements));
  const action = useAction();
  const submit = namedSubmit(action, roleName, async (target) => {
    await api.post(mountUrl(mount, 'static-roles', target), {
      db_name: dbName.trim(),
      username: username.trim(),
      rotation_period: period.trim(),
      rotation_statements: statementList(rotation),
    });
    if (!role) {
      setRoleName('');
      setUsername('');
      setRotation('');
    }
    onSaved();
  });
  return html`<form onSubmit=${submit} aria-label=${name ? `Edit static role ${name}` : 'New static role'}>
    ${!role && html`<p class="muted">The password of an existing database user is rotated at once, then every period.</p>`}
    <div class="row">
      ${!name && html`<${Field} label="Static role name" name="name" required value=${roleName} onInput=${setRoleName} />`}
      <${Field} label="Connection of the user" name="db_name" required value=${dbName} onInput=${setDbName} />
      <${Field} label="Database user" name="username" required value=${username} onInput=${setUsername} readOnly=${Boolean(role)} hint=${role ? 'The user of a static role cannot change.' : undefined} />
      <${Field} label="Rotation period" name="rotation_period" required value=${period} onInput=${setPeriod} />
    </div>
    <${TextArea} label="Rotation statements" name="rotation_statements" value=${rotation} onInput=${setRotation} hint="One per line; {{name}} and {{password}} are filled in. Empty: the database's default." />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>${name ? 'Save static role' : 'Create static role'}</button>
  </form>`;
}
