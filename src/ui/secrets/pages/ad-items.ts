import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { CopyText, ErrorMessage, Facts, Field, Notice } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { formatTime } from '../../shared/format';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, readOrDenied } from '../api';
import { ConfirmButton, formatTtl, PermissionDenied, ttlField } from '../components';
import { adHref } from './ad';
import { mountUrl } from './engine-mounts';

function Crumbs({ href, mount }: { href: (p: string) => string; mount: string }) {
  return html`<p><a href=${href('/ad')}>Directory accounts</a> / <a href=${href(adHref(mount))}>${mount}/</a></p>`;
}

/** A role as `roles/:name` reads it. */
interface AdRole {
  readonly service_account_name: string;
  readonly ttl: number;
  readonly last_vault_rotation?: string;
  readonly password_last_set?: string;
}

/** `/ad/:mount/roles/:name`: the role (its account, its rotation), its credentials, editing and deleting it. */
export const adRolePage = page({
  path: '/ad/:mount/roles/:name',
  title: ({ params }) => `Directory role ${params.name}`,
  signedIn: true,
  load: ({ api, params }) => readOrDenied(api.get<{ data: AdRole }>(mountUrl(params.mount, 'roles', params.name)).then((r) => r.data)),
  view: (props: PageProps<AdRole | Denied>) => {
    const { data, params } = props;
    const { mount, name } = params;
    return html`<section>
      <${Crumbs} href=${props.href} mount=${mount} />
      <h1>Directory role ${name}</h1>
      ${isDenied(data)
        ? html`<${PermissionDenied} what=${`reading the role ${name}`} denied=${data} />`
        : html`<div class="columns">
            <div class="card">
              <h2>Credentials</h2>
              <${RoleCreds} api=${props.api} mount=${mount} name=${name} onDone=${props.reload} />
            </div>
            <div class="card">
              <h2>Role</h2>
              <${Facts}
                items=${[
                  ['Service account', html`<code>${data.service_account_name}</code>`],
                  ['Password TTL', formatTtl(data.ttl)],
                  ['Last rotation', data.last_vault_rotation ? formatTime(Date.parse(data.last_vault_rotation)) : 'not yet'],
                ]}
              />
              <${EditRole} key=${`${mount}/${name}`} api=${props.api} mount=${mount} name=${name} role=${data} onSaved=${props.reload} />
              <div class="actions">
                <${ConfirmButton}
                  label="Rotate password now"
                  confirmLabel="Rotate"
                  question=${`Set a new password for ${data.service_account_name} now? The current one stops working.`}
                  onConfirm=${async () => {
                    await props.api.post(mountUrl(mount, 'rotate-role', name), {});
                    props.reload();
                  }}
                />
                <${ConfirmButton}
                  label="Delete role"
                  confirmLabel="Delete"
                  question=${`Delete the role ${name}? The account keeps its current password.`}
                  onConfirm=${async () => {
                    await props.api.delete(mountUrl(mount, 'roles', name));
                    props.navigate(adHref(mount));
                  }}
                />
              </div>
            </div>
          </div>`}
    </section>`;
  },
});

interface AdCreds {
  readonly username: string;
  readonly current_password: string;
  readonly last_password?: string;
}

/** "Get credentials": the password is read (and rotated when due) and shown once, in this view only. */
function RoleCreds({ api, mount, name, onDone }: { api: ApiClient; mount: string; name: string; onDone: () => void }) {
  const [creds, setCreds] = useState<AdCreds | undefined>(undefined);
  const action = useAction();
  const read = () =>
    void action.run(async () => {
      setCreds((await api.get<{ data: AdCreds }>(mountUrl(mount, 'creds', name))).data);
      onDone();
    });
  return html`<div>
    <p class="muted">The password is set on the first read, then again when the TTL has passed or someone else changed it.</p>
    <button type="button" disabled=${action.busy} onClick=${read}>Get credentials</button>
    <${ErrorMessage} messages=${action.error} />
    ${creds &&
    html`<div class="secrets-issued" aria-live="polite">
      <${Notice}>Copy the password now: it is not shown again on this page.<//>
      <${CopyText} label="Username" text=${creds.username} />
      <${CopyText} label="Current password" text=${creds.current_password} />
    </div>`}
  </div>`;
}

function EditRole({ api, mount, name, role, onSaved }: { api: ApiClient; mount: string; name: string; role: AdRole; onSaved: () => void }) {
  const [account, setAccount] = useState(role.service_account_name);
  const [ttl, setTtl] = useState(ttlField(role.ttl));
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setSaved(false);
    void action.run(async () => {
      await api.post(mountUrl(mount, 'roles', name), { service_account_name: account.trim(), ttl: ttl.trim() || undefined });
      setSaved(true);
      onSaved();
    });
  };
  return html`<form onSubmit=${submit} aria-label="Edit role">
    <div class="row">
      <${Field} label="Service account" name="service_account_name" required value=${account} onInput=${setAccount} />
      <${Field} label="Role password TTL" name="ttl" value=${ttl} onInput=${setTtl} />
    </div>
    <${ErrorMessage} messages=${action.error} />
    ${saved && html`<${Notice}>Saved role ${name}.<//>`}
    <button type="submit" disabled=${action.busy}>Save role</button>
  </form>`;
}

/** A library set with the availability of its accounts (`library/:set` and `library/:set/status`). */
interface LibrarySet {
  readonly service_account_names: readonly string[];
  readonly ttl: number;
  readonly max_ttl: number;
  readonly disable_check_in_enforcement: boolean;
  readonly status: Record<string, { available: boolean; borrower_client_token?: string }> | Denied;
}

/**
 * `/ad/:mount/library/:set`: the accounts and who has them; check out, check in (the borrower), force a
 * check-in (`library/manage`, for administrators), delete the set.
 */
export const adLibraryPage = page({
  path: '/ad/:mount/library/:set',
  title: ({ params }) => `Library set ${params.set}`,
  signedIn: true,
  load: async ({ api, params }): Promise<LibrarySet | Denied> => {
    const set = await readOrDenied(api.get<{ data: Omit<LibrarySet, 'status'> }>(mountUrl(params.mount, 'library', params.set)).then((r) => r.data));
    if (isDenied(set)) return set;
    const status = await readOrDenied(api.get<{ data: LibrarySet['status'] }>(`${mountUrl(params.mount, 'library', params.set)}/status`).then((r) => r.data));
    return { ...set, status };
  },
  view: (props: PageProps<LibrarySet | Denied>) => {
    const { data, params } = props;
    const { mount, set } = params;
    const setUrl = mountUrl(mount, 'library', set);
    return html`<section>
      <${Crumbs} href=${props.href} mount=${mount} />
      <h1>Library set ${set}</h1>
      ${isDenied(data)
        ? html`<${PermissionDenied} what=${`reading the library set ${set}`} denied=${data} />`
        : html`<div class="columns">
            <div class="card">
              <h2>Check out</h2>
              <${CheckOut} api=${props.api} url=${setUrl} onDone=${props.reload} />
            </div>
            <div class="card">
              <h2>Accounts</h2>
              ${isDenied(data.status)
                ? html`<${PermissionDenied} what="reading the set's status" denied=${data.status} />`
                : html`<table>
                    <caption class="visually-hidden">Accounts of ${set}</caption>
                    <thead><tr><th scope="col">Account</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
                    <tbody>
                      ${Object.entries(data.status).map(([account, s]) => html`<tr>
                        <td><code>${account}</code></td>
                        <td>${s.available ? html`<span class="badge ok">available</span>` : html`<span class="badge warn">checked out</span>`}</td>
                        <td class="secrets-row-actions">
                          ${!s.available && html`<${CheckIn} api=${props.api} url=${setUrl} account=${account} onDone=${props.reload} />`}
                          ${!s.available &&
                          html`<${ConfirmButton}
                            label=${`Force check in ${account}`}
                            text="Force check in"
                            confirmLabel="Force check in"
                            question=${`Check ${account} in for its borrower? Its password changes.`}
                            onConfirm=${async () => {
                              await props.api.post(`${mountUrl(mount, 'library/manage', set)}/check-in`, { service_account_names: [account] });
                              props.reload();
                            }}
                          />`}
                        </td>
                      </tr>`)}
                    </tbody>
                  </table>`}
              <${Facts}
                items=${[
                  ['Check-out TTL', formatTtl(data.ttl, 'unlimited')],
                  ['Maximum TTL', formatTtl(data.max_ttl, 'unlimited')],
                  ['Check-in', data.disable_check_in_enforcement ? 'by anyone' : 'by the borrower only'],
                ]}
              />
              <div class="actions">
                <${ConfirmButton}
                  label="Delete library set"
                  confirmLabel="Delete"
                  question=${`Delete the library set ${set}? Its accounts keep their current passwords.`}
                  onConfirm=${async () => {
                    await props.api.delete(setUrl);
                    props.navigate(adHref(mount));
                  }}
                />
              </div>
            </div>
          </div>`}
    </section>`;
  },
});

interface CheckedOut {
  readonly lease_id: string;
  readonly lease_duration: number;
  readonly data: { readonly service_account_name: string; readonly password: string };
}

function CheckOut({ api, url, onDone }: { api: ApiClient; url: string; onDone: () => void }) {
  const [ttl, setTtl] = useState('');
  const [lent, setLent] = useState<CheckedOut | undefined>(undefined);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setLent(undefined);
    void action.run(async () => {
      setLent(await api.post<CheckedOut>(`${url}/check-out`, { ttl: ttl.trim() || undefined }));
      onDone();
    });
  };
  return html`<form onSubmit=${submit} aria-label="Check out an account">
    <p class="muted">Lends an available account under a lease; checking it in (or the lease ending) sets a new password.</p>
    <${Field} label="Lease TTL" name="ttl" value=${ttl} onInput=${setTtl} hint="Empty: the set's." />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Check out</button>
    ${lent &&
    html`<div class="secrets-issued" aria-live="polite">
      <${Notice}>Copy the password now: it is not shown again.<//>
      <${CopyText} label="Account" text=${lent.data.service_account_name} />
      <${CopyText} label="Password" text=${lent.data.password} />
      <${Facts} items=${[['Lease', html`<code>${lent.lease_id}</code>`], ['Lease duration', formatTtl(lent.lease_duration, 'unlimited')]]} />
    </div>`}
  </form>`;
}

function CheckIn({ api, url, account, onDone }: { api: ApiClient; url: string; account: string; onDone: () => void }) {
  const action = useAction();
  const checkIn = () =>
    void action.run(async () => {
      await api.post(`${url}/check-in`, { service_account_names: [account] });
      onDone();
    });
  return html`<span>
    <button type="button" class="secondary" aria-label=${`Check in ${account}`} disabled=${action.busy} onClick=${checkIn}>Check in</button>
    <${ErrorMessage} messages=${action.error} />
  </span>`;
}
