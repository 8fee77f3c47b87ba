import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { ErrorMessage, Facts, Field, Notice, TextArea } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { namedSubmit, useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, readOrDenied } from '../api';
import { ConfirmButton, GenerateCredentials, PermissionDenied } from '../components';
import { mountUrl } from './engine-mounts';

export const rabbitmqHref = (mount: string, role?: string) => `/rabbitmq/${encodeURIComponent(mount)}${role === undefined ? '' : `/roles/${encodeURIComponent(role)}`}`;

type Patterns = Partial<Record<'configure' | 'write' | 'read', string>>;

/** A role as `roles/:name` reads it (maps `null` when unset). */
interface Role {
  readonly tags: string;
  readonly vhosts: Record<string, Patterns> | null;
  readonly vhost_topics: Record<string, Record<string, Patterns>> | null;
}

const json = (value: unknown) => (value ? JSON.stringify(value, null, 2) : '');

/**
 * Creates a role (its name asked) or replaces one. The permissions are JSON, as the API takes them
 * (it names the field and the position of a mistake); a write replaces the whole role.
 */
interface RoleFormProps {
  readonly api: ApiClient;
  readonly mount: string;
  /** The role edited; none: a new one (its name is asked). */
  readonly name?: string;
  readonly role?: Role;
  readonly onSaved: (name: string) => void;
}

export function RoleForm({ api, mount, name, role, onSaved }: RoleFormProps) {
  const [newName, setNewName] = useState(name ?? '');
  const [tags, setTags] = useState(role?.tags ?? '');
  const [vhosts, setVhosts] = useState(json(role?.vhosts));
  const [topics, setTopics] = useState(json(role?.vhost_topics));
  const action = useAction();
  const submit = namedSubmit(action, newName, async (target) => {
    await api.post(mountUrl(mount, 'roles', target), { tags: tags.trim(), vhosts: vhosts.trim() || undefined, vhost_topics: topics.trim() || undefined });
    onSaved(target);
  });
  return html`<form onSubmit=${submit} aria-label=${name ? `Edit role ${name}` : 'New role'}>
    <div class="row">
      ${!name && html`<${Field} label="Role name" name="name" required value=${newName} onInput=${setNewName} />`}
      <${Field} label="Tags" name="tags" value=${tags} onInput=${setTags} hint="Comma-separated user tags: management, monitoring, …" />
    </div>
    <${TextArea}
      label="Virtual host permissions"
      name="vhosts"
      value=${vhosts}
      onInput=${setVhosts}
      hint='JSON: {"/": {"configure": "^app-", "write": "^app-", "read": "^app-"}}. A missing pattern grants nothing.'
    />
    <${TextArea} label="Topic permissions" name="vhost_topics" value=${topics} onInput=${setTopics} hint='JSON: {"/": {"amq.topic": {"write": "^orders\\.", "read": ".*"}}}' />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>${name ? 'Save role' : 'Create role'}</button>
  </form>`;
}

/** The role's permissions as rows: one per virtual host (and exchange). */
function Permissions({ role }: { role: Role }) {
  const vhosts = Object.entries(role.vhosts ?? {});
  const topics = Object.entries(role.vhost_topics ?? {}).flatMap(([vhost, exchanges]) =>
    Object.entries(exchanges).map(([exchange, p]) => [vhost, exchange, p] as const),
  );
  const cell = (p: string | undefined) => (p ? html`<code>${p}</code>` : html`<span class="muted">none</span>`);
  return html`<div>
    ${vhosts.length > 0 &&
    html`<table>
      <caption>Virtual host permissions</caption>
      <thead><tr><th scope="col">Virtual host</th><th scope="col">Configure</th><th scope="col">Write</th><th scope="col">Read</th></tr></thead>
      <tbody>${vhosts.map(([vhost, p]) => html`<tr><td><code>${vhost}</code></td><td>${cell(p.configure)}</td><td>${cell(p.write)}</td><td>${cell(p.read)}</td></tr>`)}</tbody>
    </table>`}
    ${topics.length > 0 &&
    html`<table>
      <caption>Topic permissions</caption>
      <thead><tr><th scope="col">Virtual host</th><th scope="col">Exchange</th><th scope="col">Write</th><th scope="col">Read</th></tr></thead>
      <tbody>${topics.map(([vhost, exchange, p]) => html`<tr><td><code>${vhost}</code></td><td><code>${exchange}</code></td><td>${cell(p.write)}</td><td>${cell(p.read)}</td></tr>`)}</tbody>
    </table>`}
  </div>`;
}

/** `/rabbitmq/:mount/roles/:role`: generating credentials, the role's permissions, editing and deleting it. */
export const rabbitmqRolePage = page({
  path: '/rabbitmq/:mount/roles/:role',
  title: ({ params }) => `RabbitMQ role ${params.role}`,
  signedIn: true,
  load: ({ api, params }) => readOrDenied(api.get<{ data: Role }>(mountUrl(params.mount, 'roles', params.role)).then((r) => r.data)),
  view: (props: PageProps<Role | Denied>) => {
    const { data, params } = props;
    const { mount, role } = params;
    const [saved, setSaved] = useState(false);
    return html`<section>
      <p><a href=${props.href('/rabbitmq')}>RabbitMQ</a> / <a href=${props.href(rabbitmqHref(mount))}>${mount}/</a></p>
      <h1>RabbitMQ role ${role}</h1>
      ${isDenied(data)
        ? html`<${PermissionDenied} what=${`reading the role ${role}`} denied=${data} />`
        : html`<div class="columns">
            <div class="card">
              <h2>Credentials</h2>
              <${GenerateCredentials} api=${props.api} path=${mountUrl(mount, 'creds', role)} description="A new broker user under a lease; when the lease ends or is revoked the user is deleted." />
            </div>
            <div class="card">
              <h2>Role</h2>
              <${Facts} items=${[['Tags', data.tags || 'none']]} />
              <${Permissions} role=${data} />
            </div>
          </div>
          <div class="card">
            <h2>Edit</h2>
            ${saved && html`<${Notice}>Saved role ${role}.<//>`}
            <${RoleForm} key=${`${mount}/${role}`} api=${props.api} mount=${mount} name=${role} role=${data} onSaved=${() => (setSaved(true), props.reload())} />
            <div class="actions">
              <${ConfirmButton}
                label="Delete role"
                confirmLabel="Delete"
                question=${`Delete the role ${role}? Users it issued keep their leases.`}
                onConfirm=${async () => {
                  await props.api.delete(mountUrl(mount, 'roles', role));
                  props.navigate(rabbitmqHref(mount));
                }}
              />
            </div>
          </div>`}
    </section>`;
  },
});

