import { useState } from 'preact/hooks';
import { ApiClient, ApiError } from '../../shared/api';
import { ErrorMessage, Field, Notice } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import { ADMINISTRATOR } from '../types';

/** Who a token belongs to, through the API (GET /api/v1/authenticate); the root token names no user. */
async function tokenOwner(api: ApiClient, token: string): Promise<string> {
  const who = await api.withToken(token).get<{ user?: { username: string } }>('/api/v1/authenticate');
  return who?.user?.username ?? ADMINISTRATOR;
}

/** `/-/sign-in`: with a token, or with login and password (and a two-factor code when the account has one). */
export const signInPage = page({
  path: '/-/sign-in',
  title: 'Sign in',
  view: (props) => html`<section class="sign-in">
    <h1>Sign in</h1>
    <div class="columns">
      <${PasswordSignIn} ...${props} />
      <${TokenSignIn} ...${props} />
    </div>
  </section>`,
});

function done(props: PageProps, token: string, name: string, created = false): void {
  props.setSession({ token, name, created });
  // Only a path of this site (not `//host` or `/\host`, which browsers read as another site).
  const next = props.query.get('next') ?? '/';
  props.navigate(/^\/(?![/\\])/.test(next) ? next : '/');
}

function TokenSignIn(props: PageProps) {
  const [token, setToken] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => done(props, token.trim(), await tokenOwner(props.api, token.trim())));
  };
  return html`<form class="card" onSubmit=${submit} aria-labelledby="token-heading">
    <h2 id="token-heading">With a token</h2>
    <${Field} label="Token" name="token" type="password" autocomplete="off" required value=${token} onInput=${setToken} />
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Sign in with token</button>
  </form>`;
}

function PasswordSignIn(props: PageProps) {
  const [login, setLogin] = useState('');
  const [password, setPassword] = useState('');
  const [code, setCode] = useState('');
  const [needsCode, setNeedsCode] = useState(false);
  const [sentTo, setSentTo] = useState<string | undefined>(undefined);
  const action = useAction();
  const user = () => ({ login: login.trim(), password });

  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      try {
        const created = await props.api.post<{ token: string }>('/api/v1/authenticate', {
          token: { description: 'Box catalog (web browser)' },
          user: user(),
          ...(needsCode ? { two_factor: { code: code.trim() } } : {}),
        });
        done(props, created.token, await tokenOwner(props.api, created.token), true);
      } catch (err) {
        // 406: the account has two-factor authentication; ask for the code.
        if (err instanceof ApiError && err.status === 406 && !needsCode) {
          setNeedsCode(true);
          return;
        }
        throw err;
      }
    });
  };
  const sendCode = () =>
    void action.run(async () => {
      const sent = await props.api.post<{ two_factor: { obfuscated_destination: string } }>('/api/v1/two-factor/request-code', {
        two_factor: { delivery_method: 'sms' },
        user: user(),
      });
      setSentTo(sent.two_factor.obfuscated_destination);
    });

  return html`<form class="card" onSubmit=${submit} aria-labelledby="password-heading">
    <h2 id="password-heading">With your password</h2>
    <${Field} label="Username or e-mail" name="login" autocomplete="username" required value=${login} onInput=${setLogin} />
    <${Field} label="Password" name="password" type="password" autocomplete="current-password" required value=${password} onInput=${setPassword} />
    ${needsCode &&
    html`<div class="two-factor">
      <p>This account uses two-factor authentication. Send yourself a code, then enter it.</p>
      <button type="button" class="secondary" onClick=${sendCode} disabled=${action.busy}>Send a code by SMS</button>
      ${sentTo && html`<${Notice}>A code was sent to ${sentTo}.<//>`}
      <${Field} label="Two-factor code" name="code" inputmode="numeric" autocomplete="one-time-code" required value=${code} onInput=${setCode} />
    </div>`}
    <${ErrorMessage} messages=${action.error} />
    <button type="submit" disabled=${action.busy}>Sign in</button>
  </form>`;
}
