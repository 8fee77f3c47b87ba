import { useEffect, useRef } from 'preact/hooks';
import { ErrorMessage, Loading } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { apiPath } from '../api';
import { OIDC_PENDING_KEY, signInWith } from './sign-in';

/**
 * `/auth/<mount>/oidc/callback`: where the provider sends the browser back. The state and code go
 * to the API in a POST body (not in another URL) and leave the address bar at once.
 */
export const oidcCallbackPage = page({
  path: '/auth/*mount/oidc/callback',
  title: 'Signing in',
  view: (props) => html`<${OidcCallback} ...${props} />`,
});

function OidcCallback(props: PageProps) {
  const { params, query, href } = props;
  const action = useAction();
  const started = useRef(false);
  useEffect(() => {
    if (started.current) return;
    started.current = true;
    const input = { state: query.get('state'), code: query.get('code'), id_token: query.get('id_token') };
    const providerError = query.get('error_description') ?? query.get('error');
    history.replaceState(null, '', href(`/auth/${apiPath(params.mount)}/oidc/callback`));
    const pending = JSON.parse(sessionStorage.getItem(OIDC_PENDING_KEY) ?? '{}') as { mount?: string; nonce?: string };
    sessionStorage.removeItem(OIDC_PENDING_KEY);
    void action.run(async () => {
      if (providerError) throw new Error(`the identity provider refused the sign-in: ${providerError}`);
      if (!input.state) throw new Error('nothing to finish here: start from the sign-in page');
      const res = await props.api.withToken(undefined).post<{ auth: { client_token: string } }>(`/v1/auth/${apiPath(params.mount)}/oidc/callback`, {
        state: input.state,
        code: input.code ?? undefined,
        id_token: input.id_token ?? undefined,
        client_nonce: pending.mount === params.mount ? pending.nonce : undefined,
      });
      await signInWith(props, res.auth.client_token);
    });
  }, []);
  return html`<section>
    <h1>Signing in</h1>
    ${action.error
      ? html`<${ErrorMessage} messages=${action.error} /><p><a href=${href('/sign-in')}>Back to sign in</a></p>`
      : html`<${Loading} label="Finishing the sign-in…" />`}
  </section>`;
}
