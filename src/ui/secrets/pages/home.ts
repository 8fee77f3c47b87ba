import { Facts } from '../../shared/components';
import { page, type PageProps } from '../../shared/console';
import { html } from '../../shared/html';
import { isDenied, lookupSelf, readOrDenied, TokenInfo, Denied } from '../api';
import { formatTtl, PermissionDenied } from '../components';

const SECTIONS: readonly (readonly [string, string, string])[] = [
  ['/mounts', 'Secrets engines', 'Enable and disable secrets engines.'],
  ['/auth-methods', 'Auth methods', 'Enable and disable login methods.'],
  ['/policies', 'Policies', 'Read and write ACL policies.'],
  ['/tokens', 'Tokens', 'Look up, create and revoke tokens.'],
  ['/leases', 'Leases', 'List, look up and revoke leases.'],
  ['/pki', 'PKI', 'Certificate authorities, roles and certificates.'],
  ['/kv', 'Key/value', 'Browse, read and write KV secrets.'],
  ['/transit', 'Transit', 'Encryption keys: encrypt, decrypt, sign, verify, HMAC.'],
  ['/database', 'Databases', 'Connections, roles, credentials and static roles.'],
  ['/ssh', 'SSH', 'A certificate authority for SSH: roles, signing public keys.'],
  ['/transform', 'Transform', 'Format-preserving encryption, masking and tokenization by role.'],
  ['/ad', 'Directory accounts', 'Service account passwords in a directory: roles, check-out sets, rotation.'],
  ['/rabbitmq', 'RabbitMQ', 'Message broker users with the permissions of a role.'],
];

/** `/`: what the console offers, and who the signed-in token is. */
export const homePage = page({
  path: '/',
  title: 'Overview',
  load: async ({ api, session }): Promise<TokenInfo | Denied | undefined> => (session ? readOrDenied(lookupSelf(api)) : undefined),
  view: ({ data, session, href }: PageProps<TokenInfo | Denied | undefined>) => html`<section>
    <h1>Secrets</h1>
    ${session && isDenied(data) && html`<${PermissionDenied} what="looking up your token: it may have expired or been revoked" denied=${data} />`}
    ${session
      ? data && !isDenied(data) && html`<div class="card">
          <h2>Your token</h2>
          <${Facts}
            items=${[
              ['Display name', data.display_name],
              ['Policies', data.policies.join(', ')],
              ['Time to live', formatTtl(data.ttl, 'never expires')],
              ['Accessor', html`<code>${data.accessor}</code>`],
            ]}
          />
          <p><a href=${href('/tokens')}>Manage tokens</a></p>
        </div>`
      : html`<p class="lead">Administer the secrets service: engines, auth methods, policies, tokens, leases and certificates.</p>
          <p><a class="button" href=${href('/sign-in')}>Sign in</a></p>`}
    <ul class="secrets-sections">
      ${SECTIONS.map(([path, label, text]) => html`<li class="card"><a href=${href(path)}>${label}</a><p class="muted">${text}</p></li>`)}
    </ul>
  </section>`,
});
