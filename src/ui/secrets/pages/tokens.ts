import { useState } from 'preact/hooks';
import { ApiClient } from '../../shared/api';
import { CopyText, ErrorMessage, Facts, Field, Notice, Select } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { formatTime } from '../../shared/format';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { Denied, isDenied, lookupSelf, readOrDenied, TokenInfo } from '../api';
import { ConfirmButton, formatTtl, PermissionDenied, splitList } from '../components';

/** The facts of a token shown on this page (never the token itself). */
function TokenFacts({ token }: { token: TokenInfo }) {
  return html`<${Facts}
    items=${[
      ['Display name', token.display_name],
      ['Policies', token.policies.join(', ') || 'none'],
      ['Time to live', formatTtl(token.ttl, 'never expires')],
      ['Expires', token.expire_time ? formatTime(token.expire_time) : 'never'],
      ['Created by', token.path],
      ['Renewable', token.renewable ? 'yes' : 'no'],
      ['Orphan', token.orphan ? 'yes' : 'no'],
      ['Accessor', html`<code>${token.accessor}</code>`],
    ]}
  />`;
}

/** `/tokens`: the signed-in token, looking up another (by token or accessor), creating and revoking tokens. */
export const tokensPage = page({
  path: '/tokens',
  title: 'Tokens',
  signedIn: true,
  load: ({ api }) => readOrDenied(lookupSelf(api)),
  view: (props: PageProps<TokenInfo | Denied>) => html`<section>
    <h1>Tokens</h1>
    <div class="card">
      <h2>Your token</h2>
      ${isDenied(props.data) ? html`<${PermissionDenied} what="looking up this token" denied=${props.data} />` : html`<${TokenFacts} token=${props.data} />`}
      <p class="muted">Signing out forgets the token in this tab only; it stays valid until it expires or is revoked.</p>
      <${ConfirmButton}
        label="Revoke this token"
        confirmLabel="Revoke and sign out"
        question="Revoke your token (and the tokens it created) and sign out?"
        onConfirm=${async () => {
          await props.api.post('/v1/auth/token/revoke-self');
          props.setSession(undefined);
          props.navigate('/sign-in');
        }}
      />
    </div>
    <div class="columns">
      <${LookUp} api=${props.api} />
      <${Create} api=${props.api} />
    </div>
  </section>`,
});

type By = 'token' | 'accessor';

function LookUp({ api }: { api: ApiClient }) {
  const [by, setBy] = useState<By>('accessor');
  const [value, setValue] = useState('');
  const [found, setFound] = useState<{ by: By; value: string; info: TokenInfo } | undefined>(undefined);
  const [revoked, setRevoked] = useState<string | undefined>(undefined);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setRevoked(undefined);
    void action.run(async () => {
      const v = value.trim();
      const res = await api.post<{ data: TokenInfo }>(by === 'token' ? '/v1/auth/token/lookup' : '/v1/auth/token/lookup-accessor', { [by]: v });
      setFound({ by, value: v, info: res.data });
    });
  };
  return html`<div class="card">
    <form onSubmit=${submit} aria-labelledby="token-lookup">
      <h2 id="token-lookup">Look up a token</h2>
      <${Select} label="By" name="by" value=${by} options=${[['accessor', 'Accessor'], ['token', 'Token']]} onInput=${(v: string) => setBy(v as By)} />
      <${Field} label=${by === 'token' ? 'Token to look up' : 'Accessor'} name="value" type=${by === 'token' ? 'password' : 'text'} autocomplete="off" required value=${value} onInput=${setValue} />
      <${ErrorMessage} messages=${action.error} />
      <button type="submit" disabled=${action.busy}>Look up</button>
    </form>
    ${revoked && html`<${Notice}>${revoked}<//>`}
    ${found &&
    html`<div aria-live="polite">
      <h3>Token ${found.info.display_name}</h3>
      <${TokenFacts} token=${found.info} />
      <${ConfirmButton}
        label="Revoke token"
        confirmLabel="Revoke"
        question=${`Revoke ${found.info.display_name} and the tokens it created?`}
        onConfirm=${async () => {
          await api.post(found.by === 'token' ? '/v1/auth/token/revoke' : '/v1/auth/token/revoke-accessor', { [found.by]: found.value });
          setFound(undefined);
          setRevoked(`Revoked the token with accessor ${found.info.accessor}.`);
        }}
      />
    </div>`}
  </div>`;
}

interface Created {
  readonly client_token: string;
  readonly accessor: string;
  readonly policies: readonly string[];
  readonly lease_duration: number;
}

function Create({ api }: { api: ApiClient }) {
  const [policies, setPolicies] = useState('');
  const [ttl, setTtl] = useState('');
  const [name, setName] = useState('');
  const [created, setCreated] = useState<Created | undefined>(undefined);
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const res = await api.post<{ auth: Created }>('/v1/auth/token/create', {
        policies: splitList(policies),
        ttl: ttl.trim() || undefined,
        display_name: name.trim() || undefined,
      });
      setCreated(res.auth);
    });
  };
  return html`<div class="card">
    <form onSubmit=${submit} aria-labelledby="token-create">
      <h2 id="token-create">Create a token</h2>
      <${Field} label="Policies" name="policies" value=${policies} onInput=${setPolicies} hint="Comma-separated; empty: the same as yours." />
      <${Field} label="TTL" name="ttl" value=${ttl} onInput=${setTtl} hint="30m, 12h, …; empty: the default." />
      <${Field} label="Display name" name="display_name" value=${name} onInput=${setName} />
      <${ErrorMessage} messages=${action.error} />
      <button type="submit" disabled=${action.busy}>Create token</button>
    </form>
    ${created &&
    html`<div aria-live="polite">
      <${Notice}>Created a token with the policies ${created.policies.join(', ')}; it lasts ${formatTtl(created.lease_duration, 'until revoked')}. Copy it now: it is not shown again.<//>
      <${CopyText} label="New token" text=${created.client_token} />
      <${Facts} items=${[['Accessor', html`<code>${created.accessor}</code>`]]} />
    </div>`}
  </div>`;
}
