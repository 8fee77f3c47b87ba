import type { Page } from 'playwright-core';
import { describeUi, expectAccessible, uiSuite } from './browser';
import { asRoot, navTo, recordUrls, screenshot, signIn, tokenWith, unexpectedProblems } from './secrets-helpers';
import { startProvider, TestProvider } from '../engine/secrets/oidc-provider';
import { ROOT_TOKEN } from '../helpers/server';

/** Signing in to the secrets console through OIDC, and what a token with few policies sees. */
describeUi('secrets console: sign-in and permissions', () => {
  const ui = uiSuite();
  const url = (path: string) => `${ui.server.urls.secrets}/ui${path}`;
  let provider: TestProvider;

  beforeAll(async () => {
    const callback = url('/auth/jwt/oidc/callback');
    provider = await startProvider([
      { client_id: 'hangar-ui', client_secret: 'ui-client-secret-5521', redirect_uris: [callback], response_types: ['code'], grant_types: ['authorization_code'] },
    ]);
    await asRoot(ui, 'PUT', 'sys/policies/acl/staff', { policy: 'path "sys/policies/acl/" { capabilities = ["list"] }' });
    await asRoot(ui, 'POST', 'auth/jwt/config', { oidc_discovery_url: provider.issuer, oidc_client_id: 'hangar-ui', oidc_client_secret: 'ui-client-secret-5521', default_role: 'staff' });
    await asRoot(ui, 'POST', 'auth/jwt/role/staff', {
      user_claim: 'email',
      allowed_redirect_uris: [callback],
      oidc_scopes: ['email', 'profile'],
      bound_claims: { groups: 'engineering' },
      token_policies: ['staff'],
      token_ttl: '30m',
    });
  }, 60_000);

  afterAll(async () => {
    await provider?.close();
  });

  /** A page that reaches loopback only (the provider's login page links a web font). */
  async function loopbackPage(): Promise<Page> {
    const page = await ui.newPage();
    await page.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
    return page;
  }

  test('signs in through the OIDC provider: login, consent, back to the console with a token', async () => {
    const page = await loopbackPage();
    const urls = recordUrls(page);
    await page.goto(url('/sign-in'));
    await screenshot(ui, page, 'secrets-sign-in');
    await expectAccessible(page);
    await page.getByLabel('Auth method path').fill('jwt');
    await page.getByLabel('Role', { exact: true }).fill('staff');
    await page.getByRole('button', { name: 'Sign in with OIDC' }).click();
    // The provider's own pages.
    await page.waitForURL((u) => u.origin === provider.issuer);
    await page.fill('input[name=login]', 'alice@example.com');
    await page.fill('input[name=password]', 'any password');
    await page.click('button[type=submit]');
    await page.waitForSelector('button[type=submit]');
    await page.click('button[type=submit]');
    await page.getByText('Signed in as jwt-alice@example.com').waitFor();
    await page.getByRole('heading', { level: 2, name: 'Your token' }).waitFor();
    // The callback's code left the address bar; the token is in sessionStorage only.
    expect(page.url()).toBe(url('/'));
    const session = JSON.parse((await page.evaluate(() => sessionStorage.getItem('hangar.secrets.session')))!);
    expect(session).toMatchObject({ name: 'jwt-alice@example.com', token: expect.stringMatching(/^hvs\./) });
    const self = await ui.server.call('secrets', 'GET', '/v1/auth/token/lookup-self', { headers: { 'x-secrets-token': session.token } });
    expect(self.body.data).toMatchObject({ policies: ['default', 'staff'], path: 'auth/jwt/oidc/callback' });
    // The callback page sent the code to the API in a POST body, not in a URL.
    expect(urls.some((u) => u.startsWith(url('/auth/jwt/oidc/callback?')))).toBe(true);
    expect(urls.filter((u) => u.includes('/v1/auth/jwt/oidc/callback'))).toEqual([`${ui.server.urls.secrets}/v1/auth/jwt/oidc/callback`]);
    for (const u of urls) expect(u).not.toContain(session.token);

    // The token's policy lists policies and nothing else.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Policies' }).click();
    await page.getByRole('link', { name: 'staff' }).waitFor();
    // The provider's web font, stopped by the route above, is the only failure.
    expect(unexpectedProblems(ui, page).filter((p) => !p.includes('net::ERR_FAILED'))).toEqual([]);
  });

  test('a callback without a state, or with the provider refusing, says so', async () => {
    const page = await ui.newPage();
    await page.goto(url('/auth/jwt/oidc/callback?error=access_denied&error_description=the+user+said+no&state=x'));
    await page.getByRole('alert').getByText('the identity provider refused the sign-in: the user said no').waitFor();
    expect(page.url()).toBe(url('/auth/jwt/oidc/callback'));
    await page.goto(url('/auth/jwt/oidc/callback'));
    await page.getByRole('alert').getByText('nothing to finish here: start from the sign-in page').waitFor();
    await page.goto(url('/auth/jwt/oidc/callback?state=forged&code=forged'));
    await page.getByRole('alert').getByText('expired or missing OAuth state').waitFor();
    expect(unexpectedProblems(ui, page, [400])).toEqual([]);
  });

  test('a token with few policies sees "permission denied" in the page, not a crash', async () => {
    await asRoot(ui, 'PUT', 'sys/policies/acl/ui-limited', { policy: 'path "sys/policies/acl/" { capabilities = ["list"] }' });
    const { token } = await tokenWith(ui, ['ui-limited']);
    const page = await ui.newPage();
    const urls = recordUrls(page);
    await signIn(ui, page, token);
    for (const [link, heading, what] of [
      ['Engines', 'Secrets engines', 'listing secrets engines'],
      ['Auth methods', 'Auth methods', 'listing auth methods'],
      ['Leases', 'Leases', 'listing leases'],
      ['PKI', 'PKI', 'listing secrets engines'],
    ] as const) {
      await navTo(page, link);
      await page.getByRole('heading', { level: 1, name: heading, exact: true }).waitFor();
      await page.getByRole('alert').getByText(`Permission denied. Your token's policies do not allow ${what}.`).waitFor();
      if (link === 'Engines') {
        await screenshot(ui, page, 'secrets-denied');
        await expectAccessible(page);
      }
    }
    // A form whose write is refused shows the API's message.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Engines' }).click();
    await page.getByLabel('Type', { exact: true }).fill('transit');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('alert').getByText('permission denied', { exact: true }).waitFor();
    // Listing policies is allowed, reading one is not.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Policies' }).click();
    await page.getByRole('link', { name: 'ui-limited' }).click();
    await page.getByRole('alert').getByText("Permission denied. Your token's policies do not allow reading the policy ui-limited.").waitFor();
    expect((await asRoot(ui, 'GET', 'sys/mounts')).data['transit/']).toBeUndefined();
    for (const u of urls) for (const t of [token, ROOT_TOKEN]) expect(u).not.toContain(t);
    expect(unexpectedProblems(ui, page, [403])).toEqual([]);
  });

  test('pages that need a token ask to sign in first, and come back after', async () => {
    const page = await ui.newPage();
    await page.goto(url('/policies'));
    await page.getByRole('heading', { level: 1, name: 'Sign in required' }).waitFor();
    await expectAccessible(page);
    // Keyboard: the first Tab reaches the skip link, which leads to the main region.
    await page.keyboard.press('Tab');
    await expect(page.evaluate(() => document.activeElement?.textContent)).resolves.toBe('Skip to content');
    await page.keyboard.press('Enter');
    await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe('main');
    expect((await ui.server.call('secrets', 'GET', '/ui/policies')).status).toBe(200);
    expect((await ui.server.call('secrets', 'GET', '/ui/no-such-page')).status).toBe(404);
    await page.goto(url('/sign-in?next=/policies'));
    await page.getByLabel('Token', { exact: true }).fill(ROOT_TOKEN);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Policies' }).waitFor();
    expect(page.url()).toBe(url('/policies'));
    expect(unexpectedProblems(ui, page)).toEqual([]);
  });

  test('a token revoked elsewhere: the overview says so and offers nothing broken', async () => {
    const { token } = await tokenWith(ui, ['default']);
    const page = await ui.newPage();
    await signIn(ui, page, token);
    await asRoot(ui, 'POST', 'auth/token/revoke', { token });
    await page.reload();
    await page.getByRole('alert').getByText("Permission denied. Your token's policies do not allow looking up your token: it may have expired or been revoked.").waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('banner').getByRole('link', { name: 'Sign in' }).waitFor();
    expect(unexpectedProblems(ui, page, [403])).toEqual([]);
  });
});
