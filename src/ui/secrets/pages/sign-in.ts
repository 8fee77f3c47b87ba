import { useState } from 'preact/hooks';
import { ErrorMessage, Field } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { apiPath, lookupSelf } from '../api';

/** Where the OIDC flow keeps what it checks on the way back (the mount and the client nonce), per tab. */
export const OIDC_PENDING_KEY = 'hangar.secrets.oidc';

/** Signs in with a token the API has just accepted, named after its display name. */
export async function signInWith(props: PageProps, token: string): Promise<void> {
  const self = await lookupSelf(props.api.withToken(token));
  props.setSession({ token, name: self.display_name || 'token' });
  const next = props.query.get('next');
  props.navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/');
}

/** The redirect URI of an OIDC mount: the console's callback page on this origin. */
export function oidcRedirectUri(props: PageProps, mount: string): string {
  return `${location.origin}${props.href(`/auth/${apiPath(mount)}/oidc/callback`)}`;
}

/** `/sign-in`: with a token, or through an OIDC provider (the jwt/oidc auth method's browser flow). */
export const signInPage = page({
  path: '/sign-in',
  title: 'Sign in',
  view: (props) => html`<section>
    <h1>Sign in</h1>
    <div class="columns">
      <${TokenSignIn} ...${props} />
      <${OidcSignIn} ...${props} />
    </div>
  </section>`,
});

function TokenSignIn(props: PageProps) {
  const [token, setToken] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(() => signInWith(props, token.trim()));
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="token-sign-in">
    <h2 id="token-sign-in">With a token</h2>
    <${Field} label="Token" name="token" type="password" autocomplete="off" required value=${token} onInput=${setToken} />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Sign in</button>
  </form>`;
}

function OidcSignIn(props: PageProps) {
  const [mount, setMount] = useState('jwt');
  const [role, setRole] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const path = mount.trim().replace(/^\/+|\/+$/g, '');
      const nonce = randomNonce();
      const res = await props.api.withToken(undefined).post<{ data: { auth_url: string } }>(`/v1/auth/${apiPath(path)}/oidc/auth_url`, {
        role: role.trim() || undefined,
        redirect_uri: oidcRedirectUri(props, path),
        client_nonce: nonce,
      });
      if (!res.data.auth_url) throw new Error('the auth method gave no provider address: check its configuration and role');
      sessionStorage.setItem(OIDC_PENDING_KEY, JSON.stringify({ mount: path, nonce }));
      location.assign(res.data.auth_url);
    });
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="oidc-sign-in">
    <h2 id="oidc-sign-in">With OIDC</h2>
    <p class="muted">Sign in at your identity provider; it sends you back here.</p>
    <${Field} label="Auth method path" name="mount" required value=${mount} onInput=${setMount} hint="Where the JWT/OIDC auth method is enabled, without auth/." />
    <${Field} label="Role" name="role" value=${role} onInput=${setRole} hint="Empty: the method's default role." />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Sign in with OIDC</button>
  </form>`;
}

function randomNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes)).replace(/[+/=]/g, (c) => (c === '+' ? '-' : c === '/' ? '_' : ''));
}
