import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { Checkbox, ErrorMessage, Facts, Field, Notice } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, listKeys, readOptional, readOrDenied } from '../api';
import { formatTtl, PermissionDenied, ttlField } from '../components';
import { engineMountsPage, mountUrl } from './engine-mounts';
import { rabbitmqHref, RoleForm } from './rabbitmq-role';

/** `/rabbitmq`: the RabbitMQ mounts. */
export const rabbitmqMountsPage = engineMountsPage({
  path: '/rabbitmq',
  title: 'RabbitMQ',
  type: 'rabbitmq',
  engine: 'RabbitMQ',
  lead: 'Broker users made per request under a lease, deleted when it ends.',
  href: (mount) => rabbitmqHref(mount),
});

/** `config/connection` as read: never the password. */
interface Connection {
  readonly connection_uri: string;
  readonly username: string;
  readonly verify_connection: boolean;
  readonly password_policy: string;
}

interface Lease {
  readonly ttl: number;
  readonly max_ttl: number;
}

interface RabbitmqMount {
  /** None before the first write. */
  readonly connection: Connection | undefined | Denied;
  readonly lease: Lease | undefined | Denied;
  readonly roles: string[] | Denied;
}

/** `/rabbitmq/:mount`: the connection, the lease settings and the roles. */
export const rabbitmqMountPage = page({
  path: '/rabbitmq/:mount',
  title: ({ params }) => `RabbitMQ ${params.mount}/`,
  signedIn: true,
  load: async ({ api, params }): Promise<RabbitmqMount> => ({
    connection: await readOrDenied(readOptional<Connection>(api, mountUrl(params.mount, 'config/connection'))),
    lease: await readOrDenied(readOptional<Lease>(api, mountUrl(params.mount, 'config/lease'))),
    roles: await readOrDenied(listKeys(api, mountUrl(params.mount, 'roles'))),
  }),
  view: (props: PageProps<RabbitmqMount>) => {
    const { data, params } = props;
    const mount = params.mount;
    const [saved, setSaved] = useState<string | undefined>(undefined);
    const done = (what: string) => () => (setSaved(what), props.reload());
    const { connection, lease } = data;
    return html`<section>
      <p><a href=${props.href('/rabbitmq')}>RabbitMQ</a></p>
      <h1>RabbitMQ ${mount}/</h1>
      ${saved && html`<${Notice}>${saved}<//>`}
      <div class="columns">
        <div class="card">
          <h2>Connection</h2>
          ${isDenied(connection)
            ? html`<${PermissionDenied} what="reading the connection" denied=${connection} />`
            : html`${connection
              ? html`<${Facts}
                      items=${[
                        ['Management API', html`<code>${connection.connection_uri}</code>`],
                        ['Username', connection.username],
                        ['Password policy', connection.password_policy || 'the default'],
                      ]}
                    />`
              : html`<p>This mount is not connected to a broker yet.</p>`}
                <${ConnectionForm} key=${JSON.stringify(connection ?? {})} api=${props.api} mount=${mount} current=${connection} onSaved=${done('Saved the connection.')} />`}
        </div>
        <div class="card">
          <h2>Leases</h2>
          ${isDenied(lease)
            ? html`<${PermissionDenied} what="reading the lease settings" denied=${lease} />`
            : html`<${Facts}
                  items=${[
                    ['TTL', formatTtl(lease?.ttl, "the mount's default")],
                    ['Maximum TTL', formatTtl(lease?.max_ttl, "the mount's maximum")],
                  ]}
                />
                <${LeaseForm} key=${JSON.stringify(lease ?? {})} api=${props.api} mount=${mount} current=${lease} onSaved=${done('Saved the lease settings.')} />`}
        </div>
      </div>
      <div class="card">
        <h2>Roles</h2>
        ${isDenied(data.roles)
          ? html`<${PermissionDenied} what="listing roles" denied=${data.roles} />`
          : data.roles.length === 0
            ? html`<p>No roles yet.</p>`
            : html`<ul class="secrets-list">${data.roles.map((r) => html`<li><a href=${props.href(rabbitmqHref(mount, r))}>${r}</a></li>`)}</ul>`}
        <h3>New role</h3>
        <${RoleForm} api=${props.api} mount=${mount} onSaved=${(name: string) => props.navigate(rabbitmqHref(mount, name))} />
      </div>
    </section>`;
  },
});

/**
 * The broker's management API and its administrator. The API needs the password on every write
 * and never returns it, so the field starts empty and is required.
 */
function ConnectionForm({ api, mount, current, onSaved }: { api: ApiClient; mount: string; current: Connection | undefined; onSaved: () => void }) {
  const [uri, setUri] = useState(current?.connection_uri ?? 'http://');
  const [username, setUsername] = useState(current?.username ?? '');
  const [password, setPassword] = useState('');
  const [verify, setVerify] = useState(current?.verify_connection ?? true);
  const [policy, setPolicy] = useState(current?.password_policy ?? '');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api.post(mountUrl(mount, 'config/connection'), {
        connection_uri: uri.trim(),
        username: username.trim(),
        password,
        verify_connection: verify,
        password_policy: policy.trim() || undefined,
      });
      setPassword('');
      onSaved();
    });
  };
  return html`<form onSubmit=${submit} aria-labelledby="rabbitmq-connection">
    <h3 id="rabbitmq-connection">${current ? 'Edit the connection' : 'Connect'}</h3>
    <${Field} label="Connection URI" name="connection_uri" required value=${uri} onInput=${setUri} hint="The management API: http://rabbit.internal:15672" />
    <div class="row">
      <${Field} label="Administrator" name="username" required value=${username} onInput=${setUsername} autocomplete="off" />
      <${Field}
        label="Administrator password"
        name="password"
        type="password"
        required
        value=${password}
        onInput=${setPassword}
        autocomplete="new-password"
        hint="Never shown. Needed on every save: the API keeps no password from before."
      />
    </div>
    <${Field} label="Password policy" name="password_policy" value=${policy} onInput=${setPolicy} hint="A name in sys/policies/password. Empty: 36 random letters and digits." />
    <${Checkbox} label="Verify the connection before saving" name="verify_connection" checked=${verify} onChange=${setVerify} />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Save connection</button>
  </form>`;
}

function LeaseForm({ api, mount, current, onSaved }: { api: ApiClient; mount: string; current: Lease | undefined; onSaved: () => void }) {
  const [ttl, setTtl] = useState(current?.ttl ? ttlField(current.ttl) : '');
  const [maxTtl, setMaxTtl] = useState(current?.max_ttl ? ttlField(current.max_ttl) : '');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api.post(mountUrl(mount, 'config/lease'), { ttl: ttl.trim() || '0', max_ttl: maxTtl.trim() || '0' });
      onSaved();
    });
  };
  return html`<form onSubmit=${submit} aria-labelledby="rabbitmq-lease">
    <h3 id="rabbitmq-lease">Lease settings</h3>
    <div class="row">
      <${Field} label="Lease TTL" name="ttl" value=${ttl} onInput=${setTtl} hint="Empty: the mount's default." />
      <${Field} label="Maximum lease TTL" name="max_ttl" value=${maxTtl} onInput=${setMaxTtl} hint="Empty: the mount's maximum." />
    </div>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Save lease settings</button>
  </form>`;
}
