import { useState } from 'preact/hooks';
import { mountUrl } from './engine-mounts';
import { ApiClient } from '../../shared/api';
import { Checkbox, ErrorMessage, Facts, Field, Notice } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { formatTime } from '../../shared/format';
import { namedSubmit, useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, readOrDenied } from '../api';
import { ConfirmButton, DownloadLink, formatTtl, PermissionDenied, splitList, ttlField } from '../components';

/** The role fields the console edits; the API keeps the others at their defaults (or as they were). */
interface PkiRole {
  readonly allowed_domains: readonly string[];
  readonly allow_subdomains: boolean;
  readonly allow_bare_domains: boolean;
  readonly allow_any_name: boolean;
  readonly ttl: number;
  readonly max_ttl: number;
  readonly key_type: string;
}

const roleUrl = (mount: string, name: string) => mountUrl(mount, 'roles', name);

/** Creates a role (no `role`) or edits one; `onSaved` gets its name. */
interface RoleFormProps {
  readonly api: ApiClient;
  readonly mount: string;
  /** The role edited; none: a new one (its name is asked). */
  readonly name?: string;
  readonly role?: PkiRole;
  readonly onSaved: (name: string) => void;
}

export function RoleForm({ api, mount, name, role, onSaved }: RoleFormProps) {
  const [roleName, setRoleName] = useState(name ?? '');
  const [domains, setDomains] = useState(role?.allowed_domains.join(', ') ?? '');
  const [subdomains, setSubdomains] = useState(role?.allow_subdomains ?? true);
  const [bare, setBare] = useState(role?.allow_bare_domains ?? false);
  const [anyName, setAnyName] = useState(role?.allow_any_name ?? false);
  const [maxTtl, setMaxTtl] = useState(role?.max_ttl ? ttlField(role.max_ttl) : '720h');
  const [saved, setSaved] = useState(false);
  const action = useAction();
  const submit = namedSubmit(action, roleName, async (target) => {
    setSaved(false);
    await api.post(roleUrl(mount, target), {
      ...role,
      allowed_domains: splitList(domains),
      allow_subdomains: subdomains,
      allow_bare_domains: bare,
      allow_any_name: anyName,
      max_ttl: maxTtl.trim() || undefined,
    });
    setSaved(true);
    onSaved(target);
  });
  return html`<form onSubmit=${submit} aria-label=${name ? `Edit role ${name}` : 'New role'}>
    <div class="row">
      ${!name && html`<${Field} label="Role name" name="name" required value=${roleName} onInput=${setRoleName} />`}
      <${Field} label="Allowed domains" name="allowed_domains" value=${domains} onInput=${setDomains} hint="Comma-separated: example.com, internal" />
      <${Field} label="Maximum TTL" name="max_ttl" value=${maxTtl} onInput=${setMaxTtl} />
    </div>
    <${Checkbox} label="Allow subdomains" name="allow_subdomains" checked=${subdomains} onChange=${setSubdomains} />
    <${Checkbox} label="Allow the bare domains" name="allow_bare_domains" checked=${bare} onChange=${setBare} />
    <${Checkbox} label="Allow any name" name="allow_any_name" checked=${anyName} onChange=${setAnyName} />
    <${ErrorMessage} messages=${action.error} />
    ${saved && name && html`<${Notice}>Saved role ${name}.<//>`}
    <button type="submit" disabled=${action.busy}>${name ? 'Save role' : 'Create role'}</button>
  </form>`;
}

/** `/pki/:mount/roles/:role`: the role (edit, delete) and issuing a certificate from it. */
export const pkiRolePage = page({
  path: '/pki/:mount/roles/:role',
  title: ({ params }) => `PKI role ${params.role}`,
  signedIn: true,
  load: ({ api, params }) => readOrDenied(api.get<{ data: PkiRole }>(roleUrl(params.mount, params.role)).then((r) => r.data)),
  view: (props: PageProps<PkiRole | Denied>) => {
    const { data, params } = props;
    const { mount, role } = params;
    const mountHref = props.href(`/pki/${encodeURIComponent(mount)}`);
    return html`<section>
      <p><a href=${props.href('/pki')}>PKI</a> / <a href=${mountHref}>${mount}/</a></p>
      <h1>PKI role ${role}</h1>
      ${isDenied(data)
        ? html`<${PermissionDenied} what=${`reading the role ${role}`} denied=${data} />`
        : html`<div class="columns">
            <div class="card">
              <h2>Issue a certificate</h2>
              <${Issue} api=${props.api} mount=${mount} role=${role} />
            </div>
            <div class="card">
              <h2>Role</h2>
              <${Facts} items=${[['Key type', data.key_type], ['TTL', formatTtl(data.ttl, 'the mount default')], ['Maximum TTL', formatTtl(data.max_ttl, 'the mount maximum')]]} />
              <${RoleForm} key=${`${mount}/${role}`} api=${props.api} mount=${mount} name=${role} role=${data} onSaved=${() => undefined} />
              <div class="actions">
                <${ConfirmButton}
                  label="Delete role"
                  confirmLabel="Delete"
                  question=${`Delete the role ${role}? Certificates it issued stay valid.`}
                  onConfirm=${async () => {
                    await props.api.delete(roleUrl(mount, role));
                    props.navigate(`/pki/${encodeURIComponent(mount)}`);
                  }}
                />
              </div>
            </div>
          </div>`}
    </section>`;
  },
});

/** Revokes one certificate by serial number (it goes on the CRL). */
export function RevokeCertificate({ api, mount, serial, onDone }: { api: ApiClient; mount: string; serial: string; onDone: () => void }) {
  return html`<${ConfirmButton}
    label=${`Revoke certificate ${serial}`}
    text="Revoke"
    confirmLabel="Revoke"
    question=${`Revoke the certificate ${serial}?`}
    onConfirm=${async () => {
      await api.post(mountUrl(mount, 'revoke'), { serial_number: serial });
      onDone();
    }}
  />`;
}

interface Issued {
  readonly certificate: string;
  readonly private_key: string;
  readonly private_key_type: string;
  readonly issuing_ca: string;
  readonly ca_chain: readonly string[];
  readonly serial_number: string;
  readonly expiration: number;
}

function Issue({ api, mount, role }: { api: ApiClient; mount: string; role: string }) {
  const [commonName, setCommonName] = useState('');
  const [altNames, setAltNames] = useState('');
  const [ttl, setTtl] = useState('');
  const [issued, setIssued] = useState<Issued | undefined>(undefined);
  const [revoked, setRevoked] = useState(false);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setRevoked(false);
    void action.run(async () => {
      const res = await api.post<{ data: Issued }>(mountUrl(mount, 'issue', role), {
        common_name: commonName.trim(),
        alt_names: splitList(altNames).join(',') || undefined,
        ttl: ttl.trim() || undefined,
      });
      setIssued(res.data);
    });
  };
  const base = issued ? (commonName.trim() || 'certificate').replace(/[^A-Za-z0-9.-]+/g, '_') : '';
  return html`<div>
    <form onSubmit=${submit} aria-label="Issue a certificate">
      <${Field} label="Common name" name="common_name" required value=${commonName} onInput=${setCommonName} />
      <${Field} label="Other names" name="alt_names" value=${altNames} onInput=${setAltNames} hint="Comma-separated DNS names." />
      <${Field} label="Certificate TTL" name="ttl" value=${ttl} onInput=${setTtl} hint="Empty: the role's." />
      <${ErrorMessage} messages=${action.error} />
      <button type="submit" disabled=${action.busy}>Issue certificate</button>
    </form>
    ${issued &&
    html`<div class="secrets-issued" aria-live="polite">
      <${Notice}>Issued certificate ${issued.serial_number}. Download the private key now: it is not stored.<//>
      <${Facts} items=${[['Serial number', html`<code>${issued.serial_number}</code>`], ['Expires', formatTime(issued.expiration * 1000)], ['Key type', issued.private_key_type]]} />
      <div class="actions">
        <${DownloadLink} label="Download certificate" filename=${`${base}.crt.pem`} text=${issued.certificate} />
        <${DownloadLink} label="Download private key" filename=${`${base}.key.pem`} text=${issued.private_key} />
        <${DownloadLink} label="Download CA chain" filename=${`${base}.chain.pem`} text=${(issued.ca_chain.length ? issued.ca_chain : [issued.issuing_ca]).join('\n')} />
      </div>
      ${revoked
        ? html`<${Notice}>Revoked ${issued.serial_number}.<//>`
        : html`<${RevokeCertificate} api=${api} mount=${mount} serial=${issued.serial_number} onDone=${() => setRevoked(true)} />`}
    </div>`}
  </div>`;
}
