import { Browser, chromium, Page } from 'playwright-core';
import { systemClock } from '../../src/engine/clock';
import { startSecrets, SecretsTestServer } from '../engine/secrets/helpers';
import { CHROMIUM_ARGS, chromiumPath, redirectCatcher, startProvider, TestProvider } from '../engine/secrets/oidc-provider';
import { captureLog, CapturedLog } from '../helpers/log-capture';

const executablePath = chromiumPath();
const describeBrowser = executablePath ? describe : describe.skip;

/**
 * The whole browser login: Hangar's auth_url, the provider's real login and consent pages in
 * headless Chromium, the redirect to Hangar's callback, a Hangar token. Query and form_post response
 * modes, the authorization code (with PKCE) and an id_token straight from the provider.
 */
describeBrowser('OIDC login in a browser (oidc-provider, Chromium)', () => {
  let s: SecretsTestServer;
  let log: CapturedLog;
  let provider: TestProvider;
  let browser: Browser;
  let catcher: Awaited<ReturnType<typeof redirectCatcher>>;
  const callback = (mount: string) => `${s.urls.secrets}/v1/auth/${mount}/oidc/callback`;

  beforeAll(async () => {
    log = captureLog('debug');
    s = await startSecrets('sqlite', { clock: systemClock, logger: log.logger });
    catcher = await redirectCatcher();
    provider = await startProvider([
      { client_id: 'hangar', client_secret: 'provider-client-secret-7731', redirect_uris: [callback('jwt'), callback('post'), catcher.url], response_types: ['code'], grant_types: ['authorization_code'] },
      // A native application may use an http loopback redirect with the implicit flow.
      { client_id: 'hangar-implicit', application_type: 'native', redirect_uris: [callback('implicit')], response_types: ['id_token'], grant_types: ['implicit'], token_endpoint_auth_method: 'none' },
    ]);
    browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
    await s.v('PUT', 'sys/policies/acl/staff', { policy: 'path "secret/*" { capabilities = ["read"] }' });
    const role = {
      user_claim: 'email',
      allowed_redirect_uris: [callback('jwt'), callback('post'), callback('implicit'), catcher.url],
      oidc_scopes: ['email', 'profile'],
      bound_claims: { groups: 'engineering' },
      groups_claim: 'groups',
      claim_mappings: { '/org/name': 'org', 'name': 'name' },
      token_policies: ['staff'],
      token_ttl: '30m',
      max_age: '1h',
      verbose_oidc_logging: true,
    };
    const config = { oidc_discovery_url: provider.issuer, oidc_client_id: 'hangar', oidc_client_secret: 'provider-client-secret-7731', default_role: 'staff' };
    expect((await s.v('POST', 'auth/jwt/config', config)).status).toBe(204);
    expect((await s.v('POST', 'auth/jwt/role/staff', role)).status).toBe(204);
    await s.v('POST', 'sys/auth/post', { type: 'oidc' });
    await s.v('POST', 'auth/post/config', { ...config, oidc_response_mode: 'form_post' });
    await s.v('POST', 'auth/post/role/staff', role);
    await s.v('POST', 'sys/auth/implicit', { type: 'jwt' });
    await s.v('POST', 'auth/implicit/config', { ...config, oidc_client_id: 'hangar-implicit', oidc_client_secret: undefined, oidc_response_mode: 'form_post', oidc_response_types: ['id_token'] });
    await s.v('POST', 'auth/implicit/role/staff', { ...role, verbose_oidc_logging: false });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await provider?.close();
    await catcher?.close();
    await s?.close();
  });

  async function newPage(): Promise<Page> {
    const page = await (await browser.newContext()).newPage();
    // Only loopback: the provider's page imports a web font, which must not leave this machine.
    await page.route('**/*', (route) => (new URL(route.request().url()).hostname === '127.0.0.1' ? route.continue() : route.abort()));
    return page;
  }

  async function authUrl(mount: string, redirect: string, extra: Record<string, unknown> = {}): Promise<string> {
    const res = await s.v('POST', `auth/${mount}/oidc/auth_url`, { role: 'staff', redirect_uri: redirect, ...extra }, null);
    expect(res.status).toBe(200);
    return res.body.data.auth_url;
  }

  /** The provider's login and consent pages, as a person would click through them. */
  async function signIn(page: Page, url: string, until: (u: URL) => boolean): Promise<void> {
    await page.goto(url);
    await page.fill('input[name=login]', 'alice@example.com');
    await page.fill('input[name=password]', 'any password');
    await page.click('button[type=submit]');
    await page.waitForSelector('button[type=submit]');
    const done = page.waitForURL((u) => until(u), { timeout: 30_000 });
    await page.click('button[type=submit]');
    await done;
  }

  async function browserLogin(mount: string): Promise<Record<string, any>> {
    const page = await newPage();
    const response = page.waitForResponse((r) => r.url().startsWith(callback(mount)), { timeout: 30_000 });
    await signIn(page, await authUrl(mount, callback(mount)), (u) => u.href.startsWith(callback(mount)));
    const res = await response;
    expect(res.status()).toBe(200);
    return (await res.json()).auth;
  }

  test('authorization code in the query: auth_url, login page, callback, a Hangar token', async () => {
    const url = new URL(await authUrl('jwt', callback('jwt')));
    expect(url.origin).toBe(provider.issuer);
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: 'hangar',
      response_type: 'code',
      scope: 'openid email profile',
      redirect_uri: callback('jwt'),
      code_challenge_method: 'S256',
      max_age: '3600',
    });
    expect(url.searchParams.get('state')).toBeTruthy();
    expect(url.searchParams.get('nonce')).toBeTruthy();
    const auth = await browserLogin('jwt');
    expect(auth).toMatchObject({ policies: ['default', 'staff'], metadata: { role: 'staff', org: 'acme', name: 'alice' }, lease_duration: 1800 });
    const self = await s.v('GET', 'auth/token/lookup-self', undefined, auth.client_token);
    expect(self.body.data.display_name).toBe('jwt-alice@example.com');
  });

  test('form_post with the authorization code', async () => {
    expect(new URL(await authUrl('post', callback('post'))).searchParams.get('response_mode')).toBe('form_post');
    const auth = await browserLogin('post');
    expect(auth.policies).toEqual(['default', 'staff']);
  });

  test('form_post with an id_token straight from the provider', async () => {
    expect(new URL(await authUrl('implicit', callback('implicit'))).searchParams.get('response_type')).toBe('id_token');
    const auth = await browserLogin('implicit');
    expect(auth.metadata.org).toBe('acme');
  });

  test('client_nonce must come back; a state works once', async () => {
    const page = await newPage();
    const url = await authUrl('jwt', catcher.url, { client_nonce: 'cli-nonce-1' });
    const caught = catcher.next();
    await page.goto(url);
    // Signed in already in this context? A fresh context: sign in again.
    await page.fill('input[name=login]', 'alice@example.com');
    await page.fill('input[name=password]', 'x');
    await page.click('button[type=submit]');
    await page.click('button[type=submit]');
    const params = await caught;
    const code = params.get('code')!;
    const state = params.get('state')!;
    const wrong = await s.v('GET', `auth/jwt/oidc/callback?state=${state}&code=${code}&client_nonce=other`, undefined, null);
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors[0]).toMatch(/invalid client_nonce/);
    const replay = await s.v('GET', `auth/jwt/oidc/callback?state=${state}&code=${code}&client_nonce=cli-nonce-1`, undefined, null);
    expect(replay.body.errors[0]).toMatch(/expired or missing OAuth state/);

    const url2 = await authUrl('jwt', catcher.url, { client_nonce: 'cli-nonce-2' });
    const caught2 = catcher.next();
    await page.goto(url2);
    // Signed in already: the provider may ask for consent again or redirect at once.
    const p2 = await Promise.race([caught2, page.waitForSelector('button[type=submit]').then(async (b) => (await b.click(), caught2))]);
    const ok = await s.v('GET', `auth/jwt/oidc/callback?state=${p2.get('state')}&code=${p2.get('code')}&client_nonce=cli-nonce-2`, undefined, null);
    expect(ok.status).toBe(200);
    expect(ok.body.auth.client_token).toMatch(/^hvs\./);
  });

  test('bad auth_url requests and a callback with a forged code', async () => {
    const bad = await s.v('POST', 'auth/jwt/oidc/auth_url', { role: 'staff', redirect_uri: 'http://evil.example/cb' }, null);
    expect(bad.body.errors[0]).toMatch(/unauthorized redirect_uri: http:\/\/evil.example\/cb/);
    expect((await s.v('POST', 'auth/jwt/oidc/auth_url', { role: 'staff' }, null)).body.errors).toEqual(['redirect_uri is required']);
    expect((await s.v('POST', 'auth/jwt/oidc/auth_url', { role: 'nope', redirect_uri: callback('jwt') }, null)).body.errors[0]).toMatch(/role "nope" could not be found/);
    const url = new URL(await authUrl('jwt', callback('jwt')));
    const forged = await s.v('GET', `auth/jwt/oidc/callback?state=${url.searchParams.get('state')}&code=forged`, undefined, null);
    expect(forged.status).toBe(400);
    expect(forged.body.errors[0]).toMatch(/the OIDC provider refused the authorization code: invalid_grant/);
    expect((await s.v('GET', 'auth/jwt/oidc/callback?code=x', undefined, null)).body.errors).toEqual(['state is required']);
  });

  test('logs: claims only at debug with verbose_oidc_logging; never a token, a code or the client secret', async () => {
    const text = log.text();
    expect(log.records().some((r) => r.msg === 'OIDC ID token claims' && r.level === 20)).toBe(true);
    expect(text).not.toContain('provider-client-secret-7731');
    expect(text).not.toMatch(/hvs\.[A-Za-z0-9_-]{20}/);
    expect(text).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
    for (const r of log.records()) {
      const url = (r.req as { url?: string } | undefined)?.url ?? '';
      if (url.includes('/oidc/callback?')) expect(url).not.toMatch(/code=(?!redacted)/);
    }
  });
});
