import { useState } from 'preact/hooks';
import { Facts, Notice } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { html } from '../../shared/html';
import { Denied, isDenied, readOrDenied } from '../api';
import { ConfirmButton, formatTtl, GenerateCredentials, PermissionDenied } from '../components';
import { Connection, ConnectionForm, databaseHref, Role, RoleForm } from './database';
import { mountUrl } from './engine-mounts';

function Crumbs({ href, mount }: { href: (p: string) => string; mount: string }) {
  return html`<p><a href=${href('/database')}>Databases</a> / <a href=${href(databaseHref(mount))}>${mount}/</a></p>`;
}

/** `/database/:mount/connections/:name`: the connection (its URL, user, allowed roles), editing and deleting it. */
export const databaseConnectionPage = page({
  path: '/database/:mount/connections/:name',
  title: ({ params }) => `Connection ${params.name}`,
  signedIn: true,
  load: ({ api, params }) => readOrDenied(api.get<{ data: Connection }>(mountUrl(params.mount, 'config', params.name)).then((r) => r.data)),
  view: (props: PageProps<Connection | Denied>) => {
    const { data, params } = props;
    const { mount, name } = params;
    const [saved, setSaved] = useState(false);
    return html`<section>
      <${Crumbs} href=${props.href} mount=${mount} />
      <h1>Connection ${name}</h1>
      ${isDenied(data)
        ? html`<${PermissionDenied} what=${`reading the connection ${name}`} denied=${data} />`
        : html`<div class="card">
            <${Facts}
              items=${[
                ['Database', data.plugin_name],
                ['Connection URL', html`<code>${data.connection_details.connection_url}</code>`],
                ['Username', data.connection_details.username || 'none'],
                ['Allowed roles', data.allowed_roles.join(', ') || 'none'],
              ]}
            />
            ${saved && html`<${Notice}>Saved connection ${name}.<//>`}
            <h2>Edit</h2>
            <${ConnectionForm} key=${`${mount}/${name}`} api=${props.api} mount=${mount} name=${name} conn=${data} onSaved=${() => (setSaved(true), props.reload())} />
            <div class="actions">
              <${ConfirmButton}
                label="Delete connection"
                confirmLabel="Delete"
                question=${`Delete the connection ${name}? The credentials issued through it are revoked first.`}
                onConfirm=${async () => {
                  await props.api.delete(mountUrl(mount, 'config', name));
                  props.navigate(databaseHref(mount));
                }}
              />
            </div>
          </div>`}
    </section>`;
  },
});

/** `/database/:mount/roles/:name`: the role (edit, delete) and generating credentials (shown once, with their lease). */
export const databaseRolePage = page({
  path: '/database/:mount/roles/:name',
  title: ({ params }) => `Database role ${params.name}`,
  signedIn: true,
  load: ({ api, params }) => readOrDenied(api.get<{ data: Role }>(mountUrl(params.mount, 'roles', params.name)).then((r) => r.data)),
  view: (props: PageProps<Role | Denied>) => {
    const { data, params } = props;
    const { mount, name } = params;
    const [saved, setSaved] = useState(false);
    return html`<section>
      <${Crumbs} href=${props.href} mount=${mount} />
      <h1>Database role ${name}</h1>
      ${isDenied(data)
        ? html`<${PermissionDenied} what=${`reading the role ${name}`} denied=${data} />`
        : html`<div class="columns">
            <div class="card">
              <h2>Credentials</h2>
              <${GenerateCredentials} api=${props.api} path=${mountUrl(mount, 'creds', name)} description="A new database user under a lease; revoking the lease drops the user." />
            </div>
            <div class="card">
              <h2>Role</h2>
              <${Facts}
                items=${[
                  ['Connection', html`<a href=${props.href(databaseHref(mount, 'connections', data.db_name))}>${data.db_name}</a>`],
                  ['Default TTL', formatTtl(data.default_ttl, 'the mount default')],
                  ['Maximum TTL', formatTtl(data.max_ttl, 'the mount maximum')],
                ]}
              />
              ${saved && html`<${Notice}>Saved role ${name}.<//>`}
              <h3>Edit</h3>
              <${RoleForm} key=${`${mount}/${name}`} api=${props.api} mount=${mount} name=${name} role=${data} onSaved=${() => (setSaved(true), props.reload())} />
              <div class="actions">
                <${ConfirmButton}
                  label="Delete role"
                  confirmLabel="Delete"
                  question=${`Delete the role ${name}? Credentials it issued keep their leases.`}
                  onConfirm=${async () => {
                    await props.api.delete(mountUrl(mount, 'roles', name));
                    props.navigate(databaseHref(mount));
                  }}
                />
              </div>
            </div>
          </div>`}
    </section>`;
  },
});

