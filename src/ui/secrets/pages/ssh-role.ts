import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { CopyText, ErrorMessage, Facts, Field, Notice, Select, TextArea } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, readOrDenied } from '../api';
import { ConfirmButton, DownloadLink, formatTtl, PermissionDenied, splitList } from '../components';
import { mountUrl } from './engine-mounts';
import { RoleForm, sshHref, type SshRole } from './ssh';

/** `/ssh/:mount/roles/:role`: the role (edit, delete), and signing a pasted public key with it. */
export const sshRolePage = page({
  path: '/ssh/:mount/roles/:role',
  title: ({ params }) => `SSH role ${params.role}`,
  signedIn: true,
  load: ({ api, params }) => readOrDenied(api.get<{ data: SshRole }>(mountUrl(params.mount, 'roles', params.role)).then((r) => r.data)),
  view: (props: PageProps<SshRole | Denied>) => {
    const { data, params } = props;
    const { mount, role } = params;
    const [saved, setSaved] = useState(false);
    return html`<section>
      <p><a href=${props.href('/ssh')}>SSH</a> / <a href=${props.href(sshHref(mount))}>${mount}/</a></p>
      <h1>SSH role ${role}</h1>
      ${isDenied(data)
        ? html`<${PermissionDenied} what=${`reading the role ${role}`} denied=${data} />`
        : html`<div class="columns">
            <div class="card">
              <h2>Sign a public key</h2>
              <${Sign} api=${props.api} mount=${mount} role=${role} hosts=${data.allow_host_certificates} />
            </div>
            <div class="card">
              <h2>Role</h2>
              <${Facts}
                items=${[
                  ['Key type', data.key_type],
                  ['Allowed users', data.allowed_users || 'none'],
                  ['Default user', data.default_user || 'none'],
                  ['TTL', formatTtl(data.ttl, 'the mount default')],
                  ['Maximum TTL', formatTtl(data.max_ttl, 'the mount maximum')],
                ]}
              />
              ${saved && html`<${Notice}>Saved role ${role}.<//>`}
              <${RoleForm} key=${`${mount}/${role}`} api=${props.api} mount=${mount} name=${role} role=${data} onSaved=${() => (setSaved(true), props.reload())} />
              <div class="actions">
                <${ConfirmButton}
                  label="Delete role"
                  confirmLabel="Delete"
                  question=${`Delete the role ${role}? Certificates it signed stay valid until they expire.`}
                  onConfirm=${async () => {
                    await props.api.delete(mountUrl(mount, 'roles', role));
                    props.navigate(sshHref(mount));
                  }}
                />
              </div>
            </div>
          </div>`}
    </section>`;
  },
});

/** The file OpenSSH looks for next to a key: `id_ed25519-cert.pub` for `id_ed25519`. */
function certFilename(publicKey: string): string {
  const type = publicKey.trim().split(/\s+/)[0] ?? '';
  const base = type === 'ssh-ed25519' ? 'id_ed25519' : type === 'ssh-rsa' ? 'id_rsa' : type.startsWith('ecdsa-') ? 'id_ecdsa' : 'id';
  return `${base}-cert.pub`;
}

function Sign({ api, mount, role, hosts }: { api: ApiClient; mount: string; role: string; hosts: boolean }) {
  const [publicKey, setPublicKey] = useState('');
  const [principals, setPrincipals] = useState('');
  const [certType, setCertType] = useState('user');
  const [ttl, setTtl] = useState('');
  const [signed, setSigned] = useState<{ serial_number: string; signed_key: string; filename: string } | undefined>(undefined);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setSigned(undefined);
    void action.run(async () => {
      const res = await api.post<{ data: { serial_number: string; signed_key: string } }>(mountUrl(mount, 'sign', role), {
        public_key: publicKey.trim(),
        valid_principals: splitList(principals).join(',') || undefined,
        cert_type: certType,
        ttl: ttl.trim() || undefined,
      });
      setSigned({ ...res.data, filename: certFilename(publicKey) });
    });
  };
  return html`<div>
    <form onSubmit=${submit} aria-label="Sign a public key">
      <${TextArea} label="Public key" name="public_key" required value=${publicKey} onInput=${setPublicKey} hint="Paste the .pub file: ssh-ed25519 AAAA… user@host" />
      <${Field} label="Principals" name="valid_principals" value=${principals} onInput=${setPrincipals} hint="Comma-separated user (or host) names. Empty: the role's default user." />
      ${hosts && html`<${Select} label="Certificate type" name="cert_type" value=${certType} options=${[['user', 'User'], ['host', 'Host']]} onInput=${setCertType} />`}
      <${Field} label="Certificate TTL" name="ttl" value=${ttl} onInput=${setTtl} hint="Empty: the role's." />
      <${ErrorMessage} messages=${action.error} />
      <button type="submit" disabled=${action.busy}>Sign public key</button>
    </form>
    ${signed &&
    html`<div class="secrets-issued" aria-live="polite">
      <${Notice}>Signed certificate ${signed.serial_number}. Save it next to the private key as <code>${signed.filename}</code>.<//>
      <${CopyText} label="Signed certificate" text=${signed.signed_key} />
      <div class="actions"><${DownloadLink} label="Download certificate" filename=${signed.filename} text=${signed.signed_key} type="text/plain" /></div>
    </div>`}
  </div>`;
}
