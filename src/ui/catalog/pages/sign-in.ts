import { useState } from 'preact/hooks';
import { ErrorMessage, Field } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { useAction } from '../../shared/hooks';
import { html } from '../../shared/html';
import type { AclToken } from '../types';

/** `/sign-in`: an ACL token's SecretID, checked through the API (GET /v1/acl/token/self) before it is kept. */
export const signInPage = page({
  path: '/sign-in',
  title: 'Sign in',
  view: (props) => html`<${SignIn} ...${props} />`,
});

function SignIn(props: PageProps) {
  const [token, setToken] = useState('');
  const action = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      const secret = token.trim();
      const self = await props.api.withToken(secret).get<AclToken>('/v1/acl/token/self');
      props.setSession({ token: secret, name: self.Description || self.AccessorID });
      props.navigate('/');
    });
  };
  return html`<section class="catalog-sign-in">
    <h1>Sign in</h1>
    <p>
      Enter an ACL token (its secret ID). The console acts with that token's permissions; without one it acts as
      the anonymous token.
    </p>
    <form class="card" onSubmit=${submit}>
      <${Field} label="Token" name="token" type="password" autocomplete="off" required value=${token} onInput=${setToken} />
      <${ErrorMessage} messages=${action.error} />
      <button type="submit" disabled=${action.busy}>Sign in</button>
    </form>
  </section>`;
}
