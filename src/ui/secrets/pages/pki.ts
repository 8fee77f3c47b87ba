import { useState } from 'preact/hooks';
import { engineMountsPage, mountUrl } from './engine-mounts';
import { ApiClient } from '../../shared/api';
import { CopyText, ErrorMessage, Field, Select } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, listKeys, readOptional, readOrDenied } from '../api';
import { DownloadLink, PermissionDenied } from '../components';
import { RevokeCertificate, RoleForm } from './pki-role';

/** `/pki`: the PKI mounts. */
export const pkiMountsPage = engineMountsPage({ path: '/pki', title: 'PKI', type: 'pki', engine: 'PKI', href: (mount) => `/pki/${encodeURIComponent(mount)}` });

interface PkiMount {
  /** The CA certificate (PEM), none before a root is generated or a signed intermediate is set. */
  readonly ca: string | undefined;
  readonly roles: string[] | Denied;
  readonly certs: string[] | Denied;
  /** Serial numbers on the revocation list. */
  readonly revoked: ReadonlySet<string>;
}

async function caCertificate(api: ApiClient, mount: string): Promise<string | undefined> {
  return (await readOptional<{ certificate: string }>(api, mountUrl(mount, 'cert/ca')))?.certificate;
}

/** `/pki/:mount`: the CA certificate (or generating a root), the roles, the issued certificates. */
export const pkiMountPage = page({
  path: '/pki/:mount',
  title: ({ params }) => `PKI ${params.mount}/`,
  signedIn: true,
  load: async ({ api, params }): Promise<PkiMount> => ({
    ca: await caCertificate(api, params.mount),
    roles: await readOrDenied(listKeys(api, mountUrl(params.mount, 'roles'))),
    certs: await readOrDenied(listKeys(api, mountUrl(params.mount, 'certs'))),
    revoked: new Set(await listKeys(api, mountUrl(params.mount, 'certs/revoked')).catch(() => [])),
  }),
  view: (props: PageProps<PkiMount>) => {
    const { data, params } = props;
    const mount = params.mount;
    return html`<section>
      <p><a href=${props.href('/pki')}>PKI</a></p>
      <h1>PKI ${mount}/</h1>
      <div class="card">
        <h2>CA certificate</h2>
        ${data.ca
          ? html`<${CopyText} label="CA certificate (PEM)" text=${data.ca} />
              <div class="actions"><${DownloadLink} label="Download CA certificate" filename=${`${mount}-ca.pem`} text=${data.ca} /></div>`
          : html`<p>This mount has no CA yet.</p><${GenerateRoot} api=${props.api} mount=${mount} onDone=${props.reload} />`}
      </div>
      <div class="card">
        <h2>Roles</h2>
        ${isDenied(data.roles)
          ? html`<${PermissionDenied} what="listing roles" denied=${data.roles} />`
          : data.roles.length === 0
            ? html`<p>No roles yet.</p>`
            : html`<ul class="secrets-list">
                ${data.roles.map((r) => html`<li><a href=${props.href(`/pki/${encodeURIComponent(mount)}/roles/${encodeURIComponent(r)}`)}>${r}</a></li>`)}
              </ul>`}
        <h3>New role</h3>
        <${RoleForm} api=${props.api} mount=${mount} onSaved=${(name: string) => props.navigate(`/pki/${encodeURIComponent(mount)}/roles/${encodeURIComponent(name)}`)} />
      </div>
      <div class="card">
        <h2>Certificates</h2>
        ${isDenied(data.certs)
          ? html`<${PermissionDenied} what="listing certificates" denied=${data.certs} />`
          : data.certs.length === 0
            ? html`<p>No certificates stored.</p>`
            : html`<table>
                <caption class="visually-hidden">Certificates of ${mount}/</caption>
                <thead><tr><th scope="col">Serial number</th><th scope="col">State</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
                <tbody>
                  ${data.certs.map((serial) => {
                    const revoked = data.revoked.has(serial);
                    return html`<tr>
                      <td><code>${serial}</code></td>
                      <td>${revoked ? html`<span class="badge danger">revoked</span>` : html`<span class="badge ok">valid</span>`}</td>
                      <td>${!revoked && html`<${RevokeCertificate} api=${props.api} mount=${mount} serial=${serial} onDone=${props.reload} />`}</td>
                    </tr>`;
                  })}
                </tbody>
              </table>`}
      </div>
    </section>`;
  },
});

function GenerateRoot({ api, mount, onDone }: { api: ApiClient; mount: string; onDone: () => void }) {
  const [commonName, setCommonName] = useState('');
  const [ttl, setTtl] = useState('87600h');
  const [keyType, setKeyType] = useState('ec');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api.post(mountUrl(mount, 'root/generate/internal'), { common_name: commonName.trim(), ttl: ttl.trim() || undefined, key_type: keyType });
      onDone();
    });
  };
  return html`<form onSubmit=${submit} aria-labelledby="generate-root">
    <h3 id="generate-root">Generate a root CA</h3>
    <p class="muted">The private key stays in the secrets service.</p>
    <div class="row">
      <${Field} label="Common name" name="common_name" required value=${commonName} onInput=${setCommonName} />
      <${Field} label="TTL" name="ttl" value=${ttl} onInput=${setTtl} />
      <${Select} label="Key type" name="key_type" value=${keyType} options=${[['ec', 'EC (P-256)'], ['rsa', 'RSA (2048)'], ['ed25519', 'Ed25519']]} onInput=${setKeyType} />
    </div>
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Generate root</button>
  </form>`;
}

