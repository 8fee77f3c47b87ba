import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { ErrorMessage, Facts, Field, Notice } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { formatTime } from '../../shared/format';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { apiPath, Denied, isDenied, listKeys, readOrDenied } from '../api';
import { ConfirmButton, formatTtl, PermissionDenied } from '../components';

interface LeaseInfo {
  readonly id: string;
  readonly issue_time: string;
  readonly expire_time: string | null;
  readonly last_renewal: string | null;
  readonly renewable: boolean;
  readonly ttl: number;
}

/** A prefix as the API takes it: no leading slash; a path below which lease ids sit ends with one. */
function normalize(prefix: string): string {
  return prefix.trim().replace(/^\/+/, '');
}

/** `/leases?prefix=…`: the next level of lease ids under a prefix; look up, revoke one, revoke all below. */
export const leasesPage = page({
  path: '/leases',
  title: 'Leases',
  signedIn: true,
  load: ({ api, query }) => {
    const prefix = normalize(query.get('prefix') ?? '');
    return readOrDenied(listKeys(api, prefix ? `/v1/sys/leases/lookup/${apiPath(prefix)}/` : '/v1/sys/leases/lookup'));
  },
  view: (props: PageProps<string[] | Denied>) => {
    const prefix = normalize(props.query.get('prefix') ?? '');
    const under = prefix && !prefix.endsWith('/') ? `${prefix}/` : prefix;
    const [done, setDone] = useState<string | undefined>(undefined);
    const crumbs = under.split('/').filter(Boolean);
    return html`<section>
      <h1>Leases</h1>
      <form method="get" action=${props.href('/leases')} class="row" aria-label="Lease prefix">
        <${Field} label="Prefix" name="prefix" value=${prefix} hint="A path such as auth/token/create/ or pki/issue/web/." />
        <div class="field"><button type="submit">List</button></div>
      </form>
      <nav aria-label="Breadcrumb" class="secrets-crumbs">
        <a href=${props.href('/leases')}>All</a>
        ${crumbs.map((c, i) => html` / <a href=${props.href(`/leases?prefix=${encodeURIComponent(`${crumbs.slice(0, i + 1).join('/')}/`)}`)}>${c}</a>`)}
      </nav>
      ${done && html`<${Notice}>${done}<//>`}
      ${isDenied(props.data)
        ? html`<${PermissionDenied} what=${`listing leases${under ? ` under ${under}` : ''}`} denied=${props.data} />`
        : props.data.length === 0
          ? html`<p>No leases${under ? ` under ${under}` : ''}.</p>`
          : html`<table>
              <caption class="visually-hidden">Leases${under ? ` under ${under}` : ''}</caption>
              <thead><tr><th scope="col">Lease</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
                ${props.data.map((key) =>
                  key.endsWith('/')
                    ? html`<tr><td><a href=${props.href(`/leases?prefix=${encodeURIComponent(under + key)}`)}>${key}</a></td><td></td></tr>`
                    : html`<${LeaseRow} key=${under + key} api=${props.api} id=${under + key} onRevoked=${(id: string) => (setDone(`Revoked ${id}.`), props.reload())} />`,
                )}
              </tbody>
            </table>`}
      ${under &&
      html`<div class="actions">
        <${ConfirmButton}
          label=${`Revoke all under ${under}`}
          confirmLabel="Revoke all"
          question=${`Revoke every lease and token under ${under}?`}
          onConfirm=${async () => {
            await props.api.put(`/v1/sys/leases/revoke-prefix/${apiPath(under)}`);
            setDone(`Revoked everything under ${under}.`);
            props.reload();
          }}
        />
      </div>`}
    </section>`;
  },
});

function LeaseRow({ api, id, onRevoked }: { api: ApiClient; id: string; onRevoked: (id: string) => void }) {
  const [info, setInfo] = useState<LeaseInfo | undefined>(undefined);
  const action = useAction();
  const lookup = () =>
    void action.run(async () => {
      setInfo((await api.put<{ data: LeaseInfo }>('/v1/sys/leases/lookup', { lease_id: id })).data);
    });
  return html`<tr>
    <td>
      <code>${id}</code>
      ${info &&
      html`<${Facts}
        items=${[
          ['Issued', formatTime(info.issue_time)],
          ['Expires', info.expire_time ? formatTime(info.expire_time) : 'never'],
          ['Time to live', formatTtl(info.ttl, 'expired')],
          ['Renewable', info.renewable ? 'yes' : 'no'],
        ]}
      />`}
      <${ErrorMessage} messages=${action.error} />
    </td>
    <td class="secrets-row-actions">
      <button type="button" class="secondary" onClick=${lookup} disabled=${action.busy} aria-label=${`Look up ${id}`}>Look up</button>
      <${ConfirmButton}
        label=${`Revoke ${id}`}
        text="Revoke"
        confirmLabel="Revoke"
        question=${`Revoke ${id}?`}
        onConfirm=${async () => {
          await api.put('/v1/sys/leases/revoke', { lease_id: id });
          onRevoked(id);
        }}
      />
    </td>
  </tr>`;
}
