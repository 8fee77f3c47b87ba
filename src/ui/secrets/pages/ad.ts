import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { ErrorMessage, Facts, Field, Notice, Select } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { namedSubmit, useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, listKeys, readOptional, readOrDenied } from '../api';
import { ConfirmButton, formatTtl, PermissionDenied, splitList, ttlField } from '../components';
import { engineMountsPage, mountUrl } from './engine-mounts';

export const adHref = (mount: string, kind?: 'roles' | 'library', name?: string) =>
  `/ad/${encodeURIComponent(mount)}${kind && name !== undefined ? `/${kind}/${encodeURIComponent(name)}` : ''}`;

/** `/ad`: the directory accounts mounts. */
export const adMountsPage = engineMountsPage({
  path: '/ad',
  title: 'Directory accounts',
  type: 'ad',
  engine: 'directory accounts (ad)',
  lead: 'Passwords of Active Directory or OpenLDAP service accounts that only the secrets service knows.',
  href: (mount) => adHref(mount),
});

/** The configuration as `config` reads it: every setting but the bind password. */
export interface AdConfig {
  readonly url: string;
  readonly binddn: string;
  readonly userdn: string;
  readonly upndomain: string;
  readonly schema: string;
  readonly ttl: number;
  readonly max_ttl: number;
  readonly length: number;
  readonly [setting: string]: unknown;
}

interface AdMount {
  /** None before the first write. */
  readonly config: AdConfig | undefined | Denied;
  readonly roles: string[] | Denied;
  readonly sets: string[] | Denied;
}

/** `/ad/:mount`: the configuration, rotate-root, the roles and the library sets. */
export const adMountPage = page({
  path: '/ad/:mount',
  title: ({ params }) => `Directory accounts ${params.mount}/`,
  signedIn: true,
  load: async ({ api, params }): Promise<AdMount> => ({
    config: await readOrDenied(readOptional<AdConfig>(api, mountUrl(params.mount, 'config'))),
    roles: await readOrDenied(listKeys(api, mountUrl(params.mount, 'roles'))),
    sets: await readOrDenied(listKeys(api, mountUrl(params.mount, 'library'))),
  }),
  view: (props: PageProps<AdMount>) => {
    const { data, params } = props;
    const mount = params.mount;
    const [saved, setSaved] = useState<string | undefined>(undefined);
    const links = (names: string[], kind: 'roles' | 'library') =>
      html`<ul class="secrets-list">${names.map((n) => html`<li><a href=${props.href(adHref(mount, kind, n))}>${n}</a></li>`)}</ul>`;
    const config = data.config;
    return html`<section>
      <p><a href=${props.href('/ad')}>Directory accounts</a></p>
      <h1>Directory accounts ${mount}/</h1>
      ${saved && html`<${Notice}>${saved}<//>`}
      <div class="card">
        <h2>Configuration</h2>
        ${isDenied(config)
          ? html`<${PermissionDenied} what="reading the configuration" denied=${config} />`
          : html`${config
            ? html`<${Facts}
                    items=${[
                      ['URL', html`<code>${config.url}</code>`],
                      ['Bind DN', html`<code>${config.binddn}</code>`],
                      ['User DN', config.userdn ? html`<code>${config.userdn}</code>` : 'none'],
                      ['Schema', config.schema],
                      ['Password TTL', formatTtl(config.ttl)],
                    ]}
                  />`
            : html`<p>This mount is not configured yet.</p>`}
              <${ConfigForm} key=${JSON.stringify(config ?? {})} api=${props.api} mount=${mount} current=${config} onSaved=${() => (setSaved('Saved the configuration.'), props.reload())} />
              ${config &&
              html`<div class="actions">
                <${ConfirmButton}
                  label="Rotate root password"
                  confirmLabel="Rotate"
                  question="Replace the bind password by one only the secrets service knows?"
                  onConfirm=${async () => {
                    await props.api.post(mountUrl(mount, 'rotate-root'), {});
                    setSaved('Rotated the root password.');
                  }}
                />
              </div>`}`}
      </div>
      <div class="card">
        <h2>Roles</h2>
        ${isDenied(data.roles)
          ? html`<${PermissionDenied} what="listing roles" denied=${data.roles} />`
          : data.roles.length === 0 ? html`<p>No roles yet.</p>` : links(data.roles, 'roles')}
        <${RoleForm} api=${props.api} mount=${mount} onSaved=${(name: string) => props.navigate(adHref(mount, 'roles', name))} />
      </div>
      <div class="card">
        <h2>Library sets</h2>
        ${isDenied(data.sets)
          ? html`<${PermissionDenied} what="listing library sets" denied=${data.sets} />`
          : data.sets.length === 0 ? html`<p>No library sets yet.</p>` : links(data.sets, 'library')}
        <${SetForm} api=${props.api} mount=${mount} onSaved=${(name: string) => props.navigate(adHref(mount, 'library', name.toLowerCase()))} />
      </div>
    </section>`;
  },
});

/**
 * The connection settings. The API replaces the whole configuration on each write and never returns
 * the bind password, so the settings the form does not show are sent back as read, and the password
 * is asked on every save.
 */
function ConfigForm({ api, mount, current, onSaved }: { api: ApiClient; mount: string; current: AdConfig | undefined; onSaved: () => void }) {
  const [url, setUrl] = useState(current?.url ?? 'ldaps://');
  const [binddn, setBinddn] = useState(current?.binddn ?? '');
  const [bindpass, setBindpass] = useState('');
  const [userdn, setUserdn] = useState(current?.userdn ?? '');
  const [schema, setSchema] = useState(current?.schema ?? 'ad');
  const [upndomain, setUpndomain] = useState(current?.upndomain ?? '');
  const [ttl, setTtl] = useState(current ? ttlField(current.ttl) : '');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api.post(mountUrl(mount, 'config'), {
        ...current,
        url: url.trim(),
        binddn: binddn.trim(),
        bindpass,
        userdn: userdn.trim(),
        schema,
        upndomain: upndomain.trim(),
        ttl: ttl.trim() || undefined,
      });
      setBindpass('');
      onSaved();
    });
  };
  return html`<form onSubmit=${submit} aria-labelledby="ad-config">
    <h3 id="ad-config">${current ? 'Edit the configuration' : 'Configure'}</h3>
    <div class="row">
      <${Field} label="LDAP URL" name="url" required value=${url} onInput=${setUrl} hint="Comma-separated, tried in order: ldaps://dc1.corp.example" />
      <${Select} label="Schema" name="schema" value=${schema} options=${[['ad', 'Active Directory'], ['openldap', 'OpenLDAP']]} onInput=${setSchema} />
    </div>
    <div class="row">
      <${Field} label="Bind DN" name="binddn" required value=${binddn} onInput=${setBinddn} autocomplete="off" />
      <${Field}
        label="Bind password"
        name="bindpass"
        type="password"
        required
        value=${bindpass}
        onInput=${setBindpass}
        autocomplete="new-password"
        hint="Never shown. Needed on every save: the API replaces the whole configuration."
      />
    </div>
    <div class="row">
      <${Field} label="User DN" name="userdn" value=${userdn} onInput=${setUserdn} hint="Where service accounts are searched." />
      <${Field} label="UPN domain" name="upndomain" value=${upndomain} onInput=${setUpndomain} hint="Active Directory: appended to bare names." />
      <${Field} label="Password TTL" name="ttl" value=${ttl} onInput=${setTtl} hint="Roles' default. Empty: 32 days." />
    </div>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Save configuration</button>
  </form>`;
}

function RoleForm({ api, mount, onSaved }: { api: ApiClient; mount: string; onSaved: (name: string) => void }) {
  const [name, setName] = useState('');
  const [account, setAccount] = useState('');
  const [ttl, setTtl] = useState('');
  const action = useAction();
  const submit = namedSubmit(action, name, async (target) => {
    await api.post(mountUrl(mount, 'roles', target), { service_account_name: account.trim(), ttl: ttl.trim() || undefined });
    onSaved(target);
  });
  return html`<form onSubmit=${submit} aria-labelledby="ad-new-role">
    <h3 id="ad-new-role">New role</h3>
    <div class="row">
      <${Field} label="Role name" name="name" required value=${name} onInput=${setName} />
      <${Field} label="Service account" name="service_account_name" required value=${account} onInput=${setAccount} hint="A name or DN that exists under the user DN." />
      <${Field} label="Role password TTL" name="ttl" value=${ttl} onInput=${setTtl} hint="Empty: the configuration's." />
    </div>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Create role</button>
  </form>`;
}

function SetForm({ api, mount, onSaved }: { api: ApiClient; mount: string; onSaved: (name: string) => void }) {
  const [name, setName] = useState('');
  const [accounts, setAccounts] = useState('');
  const [ttl, setTtl] = useState('24h');
  const action = useAction();
  const submit = namedSubmit(action, name, async (target) => {
    await api.post(mountUrl(mount, 'library', target), { service_account_names: splitList(accounts), ttl: ttl.trim() || undefined });
    onSaved(target);
  });
  return html`<form onSubmit=${submit} aria-labelledby="ad-new-set">
    <h3 id="ad-new-set">New library set</h3>
    <div class="row">
      <${Field} label="Set name" name="name" required value=${name} onInput=${setName} />
      <${Field} label="Service accounts" name="service_account_names" required value=${accounts} onInput=${setAccounts} hint="Comma-separated; each in no other set or role." />
      <${Field} label="Check-out TTL" name="ttl" value=${ttl} onInput=${setTtl} hint="0: unlimited." />
    </div>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Create library set</button>
  </form>`;
}
