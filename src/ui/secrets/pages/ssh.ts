import { useState } from 'preact/hooks';
import { ApiClient, ApiError } from '../../shared/api';
import { Checkbox, CopyText, ErrorMessage, Field, Select } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { namedSubmit, useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, listKeys, readOrDenied } from '../api';
import { DownloadLink, PermissionDenied, splitList, ttlField } from '../components';
import { engineMountsPage, mountUrl } from './engine-mounts';

export const sshHref = (mount: string, role?: string) => `/ssh/${encodeURIComponent(mount)}${role === undefined ? '' : `/roles/${encodeURIComponent(role)}`}`;

/** `/ssh`: the SSH mounts. */
export const sshMountsPage = engineMountsPage({ path: '/ssh', title: 'SSH', type: 'ssh', engine: 'SSH', href: (mount) => sshHref(mount) });

interface SshMount {
  /** The CA's public key (OpenSSH format); none before one is generated. */
  readonly ca: string | undefined | Denied;
  readonly roles: string[] | Denied;
}

async function caPublicKey(api: ApiClient, mount: string): Promise<string | undefined> {
  try {
    return (await api.get<{ data: { public_key: string } }>(mountUrl(mount, 'config/ca'))).data.public_key;
  } catch (err) {
    // The API answers 400 "keys haven't been configured yet" when there is no CA.
    if (err instanceof ApiError && err.status === 400) return undefined;
    throw err;
  }
}

/** `/ssh/:mount`: the CA (its public key, or generating one) and the roles. */
export const sshMountPage = page({
  path: '/ssh/:mount',
  title: ({ params }) => `SSH ${params.mount}/`,
  signedIn: true,
  load: async ({ api, params }): Promise<SshMount> => ({
    ca: await readOrDenied(caPublicKey(api, params.mount)),
    roles: await readOrDenied(listKeys(api, mountUrl(params.mount, 'roles'))),
  }),
  view: (props: PageProps<SshMount>) => {
    const { data, params } = props;
    const mount = params.mount;
    return html`<section>
      <p><a href=${props.href('/ssh')}>SSH</a></p>
      <h1>SSH ${mount}/</h1>
      <div class="card">
        <h2>Certificate authority</h2>
        ${isDenied(data.ca)
          ? html`<${PermissionDenied} what="reading the CA" denied=${data.ca} />`
          : data.ca
            ? html`<${CopyText} label="CA public key" text=${data.ca} />
                <p class="muted">Trust it in sshd's <code>TrustedUserCAKeys</code>, or on clients as an <code>@cert-authority</code> line.</p>
                <div class="actions"><${DownloadLink} label="Download CA public key" filename=${`${mount}-ca.pub`} text=${data.ca} type="text/plain" /></div>`
            : html`<p>This mount has no CA yet.</p><${GenerateCa} api=${props.api} mount=${mount} onDone=${props.reload} />`}
      </div>
      <div class="card">
        <h2>Roles</h2>
        ${isDenied(data.roles)
          ? html`<${PermissionDenied} what="listing roles" denied=${data.roles} />`
          : data.roles.length === 0
            ? html`<p>No roles yet.</p>`
            : html`<ul class="secrets-list">${data.roles.map((r) => html`<li><a href=${props.href(sshHref(mount, r))}>${r}</a></li>`)}</ul>`}
        <${RoleForm} api=${props.api} mount=${mount} onSaved=${(name: string) => props.navigate(sshHref(mount, name))} />
      </div>
    </section>`;
  },
});

function GenerateCa({ api, mount, onDone }: { api: ApiClient; mount: string; onDone: () => void }) {
  const [keyType, setKeyType] = useState('ssh-ed25519');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api.post(mountUrl(mount, 'config/ca'), { generate_signing_key: true, key_type: keyType });
      onDone();
    });
  };
  return html`<form onSubmit=${submit} aria-labelledby="ssh-generate-ca">
    <h3 id="ssh-generate-ca">Generate a CA</h3>
    <p class="muted">The private key stays in the secrets service.</p>
    <${Select} label="CA key type" name="key_type" value=${keyType} options=${[['ssh-ed25519', 'Ed25519'], ['ecdsa-sha2-nistp256', 'ECDSA P-256'], ['ssh-rsa', 'RSA 4096']]} onInput=${setKeyType} />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Generate CA</button>
  </form>`;
}

/** A CA role as `roles/:name` reads it (the fields the console shows and edits, and the others it keeps). */
export interface SshRole {
  readonly key_type: string;
  readonly allowed_users: string;
  readonly default_user: string;
  readonly ttl: number;
  readonly max_ttl: number;
  readonly allow_user_certificates: boolean;
  readonly allow_host_certificates: boolean;
}

/** Creates a CA role (no `role`: who may be signed for, for how long) or edits one with the same write. */
interface RoleFormProps {
  readonly api: ApiClient;
  readonly mount: string;
  /** The role edited; none: a new one (its name is asked). */
  readonly name?: string;
  readonly role?: SshRole;
  readonly onSaved: (name: string) => void;
}

const ttlText = (seconds: number) => (seconds ? ttlField(seconds) : '');

export function RoleForm({ api, mount, name, role, onSaved }: RoleFormProps) {
  const [roleName, setRoleName] = useState(name ?? '');
  const [users, setUsers] = useState(role?.allowed_users ?? '');
  const [defaultUser, setDefaultUser] = useState(role?.default_user ?? '');
  const [ttl, setTtl] = useState(role ? ttlText(role.ttl) : '1h');
  const [maxTtl, setMaxTtl] = useState(role ? ttlText(role.max_ttl) : '8h');
  const [hosts, setHosts] = useState(role?.allow_host_certificates ?? false);
  const action = useAction();
  const submit = namedSubmit(action, roleName, async (target) => {
    // A write replaces the whole role: an edit sends the fields it read back with the form's.
    await api.post(mountUrl(mount, 'roles', target), {
      ...(role ?? { key_type: 'ca', allow_user_certificates: true, default_extensions: { 'permit-pty': '' } }),
      allow_host_certificates: hosts,
      allowed_users: splitList(users).join(','),
      default_user: defaultUser.trim() || undefined,
      ttl: ttl.trim() || undefined,
      max_ttl: maxTtl.trim() || undefined,
    });
    onSaved(target);
  });
  const headingId = name ? 'ssh-edit-role' : 'ssh-new-role';
  return html`<form onSubmit=${submit} aria-labelledby=${headingId}>
    <h3 id=${headingId}>${name ? 'Edit' : 'New role'}</h3>
    <div class="row">
      ${!name && html`<${Field} label="Role name" name="name" required value=${roleName} onInput=${setRoleName} />`}
      <${Field} label="Allowed users" name="allowed_users" value=${users} onInput=${setUsers} hint="Comma-separated; * for any." />
      <${Field} label="Default user" name="default_user" value=${defaultUser} onInput=${setDefaultUser} />
      <${Field} label="TTL" name="ttl" value=${ttl} onInput=${setTtl} />
      <${Field} label="Maximum TTL" name="max_ttl" value=${maxTtl} onInput=${setMaxTtl} />
    </div>
    <${Checkbox} label="Also host certificates" name="allow_host_certificates" checked=${hosts} onChange=${setHosts} />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>${name ? 'Save role' : 'Create role'}</button>
  </form>`;
}
