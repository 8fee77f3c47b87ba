import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { describeUi, expectAccessible, expectFocus, uiSuite } from './browser';
import { asRoot, navTo, recordUrls, screenshot, signIn, tokenWith, unexpectedProblems } from './secrets-helpers';
import { ROOT_TOKEN } from '../helpers/server';

/** The secrets console administering the service from the browser: engines, policies, tokens, leases, PKI. */
describeUi('secrets console: administration', () => {
  const ui = uiSuite();
  const url = (path: string) => `${ui.server.urls.secrets}/ui${path}`;

  async function signedIn(): Promise<{ page: Page; urls: string[] }> {
    const page = await ui.newPage();
    const urls = recordUrls(page);
    await signIn(ui, page);
    return { page, urls };
  }

  /** No token in any URL the page asked for or showed. */
  function expectNoTokenIn(urls: string[], ...tokens: string[]): void {
    expect(urls.length).toBeGreaterThan(0);
    for (const u of urls) for (const t of [ROOT_TOKEN, ...tokens]) expect(u).not.toContain(t);
  }

  test('signs in with a token: the overview names it; sign out forgets it', async () => {
    const page = await ui.newPage();
    await page.goto(url('/sign-in'));
    await page.getByLabel('Token', { exact: true }).fill('not-a-token');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('alert').getByText('permission denied').waitFor();
    await page.getByLabel('Token', { exact: true }).fill(ROOT_TOKEN);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('Signed in as root').waitFor();
    expect(page.url()).toBe(url('/'));
    await screenshot(ui, page, 'secrets-overview');
    await expectAccessible(page);
    expect(await page.context().cookies()).toEqual([]);
    expect(JSON.parse((await page.evaluate(() => sessionStorage.getItem('hangar.secrets.session')))!)).toEqual({ token: ROOT_TOKEN, name: 'root' });
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('banner').getByRole('link', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('hangar.secrets.session'))).toBeNull();
    // Signing out revokes nothing.
    expect((await asRoot(ui, 'GET', 'auth/token/lookup-self')).data.display_name).toBe('root');
    expect(unexpectedProblems(ui, page, [403])).toEqual([]);
  });

  test('enables and disables a secrets engine and an auth method', async () => {
    const { page, urls } = await signedIn();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Engines' }).click();
    await page.getByRole('heading', { level: 1, name: 'Secrets engines' }).waitFor();
    await page.getByLabel('Type', { exact: true }).fill('transit');
    await page.getByLabel('Path', { exact: true }).fill('transit-ui');
    await page.getByLabel('Description', { exact: true }).fill('keys for the UI test');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByText('Enabled transit-ui/.').waitFor();
    await page.getByRole('cell', { name: 'keys for the UI test' }).waitFor();
    expect((await asRoot(ui, 'GET', 'sys/mounts')).data['transit-ui/']).toMatchObject({ type: 'transit', description: 'keys for the UI test' });
    await screenshot(ui, page, 'secrets-mounts');
    await expectAccessible(page);

    // A wrong type: the API's message, nothing enabled.
    await page.getByLabel('Type', { exact: true }).fill('nonsense');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('alert').getByText(/plugin not found in the catalog: nonsense/).waitFor();

    await page.getByRole('button', { name: 'Disable transit-ui/' }).click();
    await page.getByText('Disable transit-ui/? Its leases are revoked and its data is deleted.').waitFor();
    // The confirmation takes the focus: Enter confirms.
    await page.keyboard.press('Enter');
    await page.getByText('Disabled transit-ui/.').waitFor();
    await page.getByRole('cell', { name: 'keys for the UI test' }).waitFor({ state: 'detached' });
    expect((await asRoot(ui, 'GET', 'sys/mounts')).data['transit-ui/']).toBeUndefined();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Auth methods' }).click();
    await page.getByRole('heading', { level: 1, name: 'Auth methods' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Type', { exact: true }).fill('oidc');
    await page.getByLabel('Path', { exact: true }).fill('sso');
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('cell', { name: 'auth/sso/' }).waitFor();
    expect((await asRoot(ui, 'GET', 'sys/auth')).data['sso/']).toMatchObject({ type: 'oidc' });
    await page.getByRole('button', { name: 'Disable sso/' }).click();
    await page.getByRole('button', { name: 'Disable', exact: true }).click();
    await page.getByText('Disabled sso/.').waitFor();
    expect((await asRoot(ui, 'GET', 'sys/auth')).data['sso/']).toBeUndefined();
    expectNoTokenIn(urls);
    expect(unexpectedProblems(ui, page, [400])).toEqual([]);
  });

  test('writes a policy: invalid HCL shows the parser, valid HCL is saved; edit and delete', async () => {
    const { page, urls } = await signedIn();
    await page.goto(url('/policies'));
    await page.getByRole('heading', { level: 1, name: 'Policies' }).waitFor();
    await page.getByRole('link', { name: 'default' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('ui-readers');
    const editor = page.getByLabel('Policy (HCL or JSON)');
    await editor.fill('path "secret/*" { capabilities = ["read"');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByRole('alert').getByText(/failed to parse policy/).waitFor();
    await screenshot(ui, page, 'secrets-policy-error');
    await expectAccessible(page);
    expect((await ui.server.call('secrets', 'GET', '/v1/sys/policies/acl/ui-readers', { headers: { 'x-secrets-token': ROOT_TOKEN } })).status).toBe(404);

    await editor.fill('path "secret/*" {\n  capabilities = ["read", "list"]\n}\n');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByRole('heading', { level: 1, name: 'Policy ui-readers' }).waitFor();
    await expectAccessible(page);
    expect(page.url()).toBe(url('/policies/ui-readers'));
    expect((await asRoot(ui, 'GET', 'sys/policies/acl/ui-readers')).data.policy).toContain('capabilities = ["read", "list"]');

    await page.getByLabel('Policy (HCL or JSON)').fill('path "secret/*" { capabilities = ["read"] }');
    await page.getByRole('button', { name: 'Save policy' }).click();
    await page.getByText('Saved policy ui-readers.').waitFor();
    expect((await asRoot(ui, 'GET', 'sys/policies/acl/ui-readers')).data.policy).toBe('path "secret/*" { capabilities = ["read"] }');

    // Cancel puts the focus back on the button.
    await page.getByRole('button', { name: 'Delete policy' }).click();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await expectFocus(page, 'Delete policy');
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Policies' }).waitFor();
    await page.getByRole('link', { name: 'ui-readers' }).waitFor({ state: 'detached' });
    expectNoTokenIn(urls);
    expect(unexpectedProblems(ui, page, [400])).toEqual([]);
  });

  test('creates a token, looks it up by accessor and by token, revokes it', async () => {
    await asRoot(ui, 'PUT', 'sys/policies/acl/ui-ops', { policy: 'path "sys/mounts" { capabilities = ["read"] }' });
    const { page, urls } = await signedIn();
    await page.goto(url('/tokens'));
    await page.getByRole('heading', { level: 1, name: 'Tokens' }).waitFor();
    await page.getByLabel('Policies', { exact: true }).fill('ui-ops, default');
    await page.getByLabel('TTL', { exact: true }).fill('1h');
    await page.getByLabel('Display name', { exact: true }).fill('CI runner');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByText(/Created a token with the policies default, ui-ops; it lasts 1h/).waitFor();
    const token = (await page.getByRole('figure').locator('pre').textContent())!.trim();
    expect(token).toMatch(/^hvs\./);
    const info = (await asRoot(ui, 'POST', 'auth/token/lookup', { token })).data;
    expect(info).toMatchObject({ display_name: 'token-CI-runner', policies: ['default', 'ui-ops'] });
    await screenshot(ui, page, 'secrets-tokens');
    await expectAccessible(page);

    await page.getByLabel('Accessor', { exact: true }).fill(info.accessor);
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('heading', { level: 3, name: 'Token token-CI-runner' }).waitFor();
    await page.getByLabel('By').selectOption('token');
    await page.getByLabel('Token to look up').fill(token);
    await page.getByRole('button', { name: 'Look up' }).click();
    await page.getByRole('button', { name: 'Revoke token' }).click();
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByText(`Revoked the token with accessor ${info.accessor}.`).waitFor();
    const gone = await ui.server.call('secrets', 'POST', '/v1/auth/token/lookup', { body: { token }, headers: { 'x-secrets-token': ROOT_TOKEN } });
    expect(gone.status).toBe(400);
    expect(gone.body.errors).toEqual(['bad token']);
    expectNoTokenIn(urls, token);
    expect(unexpectedProblems(ui, page)).toEqual([]);
  });

  test('revoke this token: the signed-in token is revoked and forgotten', async () => {
    const { token } = await tokenWith(ui, ['default']);
    const page = await ui.newPage();
    await signIn(ui, page, token);
    await page.goto(url('/tokens'));
    await page.getByRole('button', { name: 'Revoke this token' }).click();
    await page.getByRole('button', { name: 'Revoke and sign out' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('hangar.secrets.session'))).toBeNull();
    expect((await ui.server.call('secrets', 'GET', '/v1/auth/token/lookup-self', { headers: { 'x-secrets-token': token } })).status).toBe(403);
    expect(unexpectedProblems(ui, page)).toEqual([]);
  });

  test('lists leases by prefix, looks one up, revokes one, then all under the prefix', async () => {
    const a = await tokenWith(ui, ['default'], { display_name: 'lease-a', ttl: '2h' });
    const b = await tokenWith(ui, ['default'], { display_name: 'lease-b', ttl: '2h' });
    const c = await tokenWith(ui, ['default'], { display_name: 'lease-c', ttl: '2h' });
    const ids = (await asRoot(ui, 'GET', 'sys/leases/lookup/auth/token/create/?list=true')).data.keys as string[];
    expect(ids.length).toBeGreaterThanOrEqual(3);
    const { page, urls } = await signedIn();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Leases' }).click();
    await page.getByRole('link', { name: 'auth/' }).click();
    await page.getByRole('link', { name: 'token/' }).click();
    await page.getByRole('link', { name: 'create/' }).click();
    expect(new URL(page.url()).searchParams.get('prefix')).toBe('auth/token/create/');
    const first = `auth/token/create/${ids[0]}`;
    await page.getByRole('button', { name: `Look up ${first}` }).click();
    await page.getByText('Renewable').waitFor();
    await screenshot(ui, page, 'secrets-leases');
    await expectAccessible(page);
    await page.getByRole('button', { name: `Revoke ${first}` }).click();
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByText(`Revoked ${first}.`).waitFor();
    const left = (await asRoot(ui, 'GET', 'sys/leases/lookup/auth/token/create/?list=true')).data.keys as string[];
    expect(left).not.toContain(ids[0]);
    expect(left.length).toBe(ids.length - 1);

    await page.getByRole('button', { name: 'Revoke all under auth/token/create/' }).click();
    await page.getByRole('button', { name: 'Revoke all', exact: true }).click();
    await page.getByText('Revoked everything under auth/token/create/.').waitFor();
    await page.getByText('No leases under auth/token/create/.').waitFor();
    for (const t of [a, b, c]) {
      expect((await ui.server.call('secrets', 'GET', '/v1/auth/token/lookup-self', { headers: { 'x-secrets-token': t.token } })).status).toBe(403);
    }
    expectNoTokenIn(urls, a.token, b.token, c.token);
    expect(unexpectedProblems(ui, page, [404])).toEqual([]);
  });

  test('PKI: generates a root, creates a role, issues and downloads a certificate, revokes it', async () => {
    const { page, urls } = await signedIn();
    await navTo(page, 'PKI');
    await page.getByRole('link', { name: 'pki/' }).click();
    await page.getByRole('heading', { level: 1, name: 'PKI pki/' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Common name', { exact: true }).fill('Hangar UI Root');
    await page.getByRole('button', { name: 'Generate root' }).click();
    await page.getByRole('button', { name: 'Copy CA certificate (PEM)' }).waitFor();
    const caDownload = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download CA certificate' }).click();
    const ca = new X509Certificate(readFileSync((await (await caDownload).path())!));
    expect(ca.subject).toContain('CN=Hangar UI Root');
    expect(ca.ca).toBe(true);

    await page.getByLabel('Role name', { exact: true }).fill('web');
    await page.getByLabel('Allowed domains', { exact: true }).fill('example.com');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('heading', { level: 1, name: 'PKI role web' }).waitFor();
    await expectAccessible(page);
    expect((await asRoot(ui, 'GET', 'pki/roles/web')).data).toMatchObject({ allowed_domains: ['example.com'], allow_subdomains: true });

    // Editing the role keeps what the form does not show.
    await page.getByLabel('Allowed domains', { exact: true }).fill('example.com, example.org');
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByText('Saved role web.').waitFor();
    expect((await asRoot(ui, 'GET', 'pki/roles/web')).data).toMatchObject({ allowed_domains: ['example.com', 'example.org'], allow_subdomains: true, max_ttl: 2592000 });

    // A name the role does not allow: the API's message.
    await page.getByLabel('Common name', { exact: true }).fill('app.other.org');
    await page.getByRole('button', { name: 'Issue certificate' }).click();
    await page.getByRole('alert').getByText(/app\.other\.org/).waitFor();

    await page.getByLabel('Common name', { exact: true }).fill('app.example.com');
    await page.getByLabel('Other names', { exact: true }).fill('api.example.com');
    await page.getByLabel('Certificate TTL', { exact: true }).fill('24h');
    await page.getByRole('button', { name: 'Issue certificate' }).click();
    await page.getByText(/Issued certificate/).waitFor();
    await screenshot(ui, page, 'secrets-pki');
    await expectAccessible(page);
    const download = async (name: string) => {
      const done = page.waitForEvent('download');
      await page.getByRole('link', { name }).click();
      const d = await done;
      return { filename: d.suggestedFilename(), text: readFileSync((await d.path())!, 'utf8') };
    };
    const cert = await download('Download certificate');
    const key = await download('Download private key');
    const chain = await download('Download CA chain');
    expect([cert.filename, key.filename, chain.filename]).toEqual(['app.example.com.crt.pem', 'app.example.com.key.pem', 'app.example.com.chain.pem']);
    const x509 = new X509Certificate(cert.text);
    expect(x509.subject).toContain('CN=app.example.com');
    expect(x509.subjectAltName).toContain('DNS:api.example.com');
    expect(x509.checkIssued(ca)).toBe(true);
    expect(x509.verify(ca.publicKey)).toBe(true);
    expect(x509.checkPrivateKey(createPrivateKey(key.text))).toBe(true);
    expect(new X509Certificate(chain.text).fingerprint256).toBe(ca.fingerprint256);

    const serial = /Issued certificate (\S+)\./.exec((await page.getByText(/Issued certificate/).textContent())!)![1];
    expect(serial.replace(/:/g, '').replace(/^0+/, '')).toBe(x509.serialNumber.toLowerCase().replace(/^0+/, ''));
    await page.getByRole('button', { name: `Revoke certificate ${serial}` }).click();
    await page.getByRole('button', { name: 'Revoke', exact: true }).click();
    await page.getByText(`Revoked ${serial}.`).waitFor();
    expect((await asRoot(ui, 'GET', `pki/cert/${serial}`)).data.revocation_time).toBeGreaterThan(0);

    // The mount page lists the certificate.
    await page.getByRole('link', { name: 'pki/' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: serial, exact: true }) });
    await row.getByText('revoked').waitFor();
    expectNoTokenIn(urls);
    // 404: the CA read before there was one; 400: the refused name.
    expect(unexpectedProblems(ui, page, [400, 404])).toEqual([]);
  });

  test('KV: writes a secret in a v2 mount, browses to it, writes a second version and reads the first', async () => {
    const { page, urls } = await signedIn();
    await navTo(page, 'Key/value');
    await page.getByRole('link', { name: 'secret/' }).click();
    await page.getByRole('heading', { level: 1, name: 'secret/' }).waitFor();
    await expectAccessible(page);
    await page.getByLabel('Path', { exact: true }).fill('app/db');
    const data = page.getByLabel('Data (JSON object)');
    await data.fill('{"password": ');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').getByText(/the data is not JSON/).waitFor();
    await data.fill('{"password": "first-secret", "user": "app"}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { level: 1, name: 'secret/app/db' }).waitFor();
    await page.getByRole('cell', { name: 'first-secret' }).waitFor();
    expect((await asRoot(ui, 'GET', 'secret/data/app/db')).data.data).toEqual({ password: 'first-secret', user: 'app' });

    await page.getByLabel('Data (JSON object)').fill('{"password": "second-secret", "user": "app"}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('cell', { name: 'second-secret' }).waitFor();
    await page.getByText('Version 2 of 2').waitFor();
    await screenshot(ui, page, 'secrets-kv');
    await expectAccessible(page);
    await page.getByRole('link', { name: 'Version 1' }).click();
    await page.getByRole('cell', { name: 'first-secret' }).waitFor();
    await page.getByText('Version 1 of 2').waitFor();
    // Deleting a version (soft) and undeleting it.
    await page.getByRole('button', { name: 'Delete version 1' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('Version 1 is deleted.').waitFor();
    expect((await asRoot(ui, 'GET', 'secret/metadata/app/db')).data.versions['1'].deletion_time).not.toBe('');
    await page.getByRole('button', { name: 'Undelete version 1' }).click();
    await page.getByRole('cell', { name: 'first-secret' }).waitFor();
    expect((await asRoot(ui, 'GET', 'secret/metadata/app/db')).data.versions['1'].deletion_time).toBe('');

    // Browsing from the mount down to the secret.
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'secret' }).click();
    await page.getByRole('link', { name: 'app/' }).click();
    await page.getByRole('link', { name: 'db' }).click();
    await page.getByRole('cell', { name: 'second-secret' }).waitFor();
    expectNoTokenIn(urls);
    // 404: the listing of the mount before anything was written.
    expect(unexpectedProblems(ui, page, [404])).toEqual([]);
  });

  test('the Engines menu works with the keyboard alone: opens, walks its links, closes on Escape and on navigation', async () => {
    const { page } = await signedIn();
    const nav = page.getByRole('navigation', { name: 'Main' });
    const focused = () => page.evaluate(() => document.activeElement?.getAttribute('aria-label') ?? document.activeElement?.textContent);
    const tab = async (times: number) => {
      for (let i = 0; i < times; i++) await page.keyboard.press('Tab');
    };
    // From the top of a freshly loaded page: the skip link, the brand, the Engines link, then the menu's button.
    await page.goto(url('/'));
    await page.getByRole('heading', { level: 2, name: 'Your token' }).waitFor();
    await tab(4);
    expect(await focused()).toBe('Engines menu');
    await nav.getByRole('button', { name: 'Engines menu', expanded: false }).waitFor();
    expect(await nav.getByRole('link', { name: 'Databases' }).isVisible()).toBe(false);
    await page.keyboard.press('Enter');
    await nav.getByRole('button', { name: 'Engines menu', expanded: true }).waitFor();
    await tab(1);
    await expectFocus(page, 'All engines');
    await tab(1);
    await expectFocus(page, 'PKI');
    await screenshot(ui, page, 'secrets-engines-menu');
    await expectAccessible(page, { include: 'header' }); // the page under the menu was checked closed
    // Escape closes the list and gives the focus back to the button.
    await page.keyboard.press('Escape');
    await nav.getByRole('link', { name: 'Databases' }).waitFor({ state: 'hidden' });
    expect(await focused()).toBe('Engines menu');
    await nav.getByRole('button', { name: 'Engines menu', expanded: false }).waitFor();
    // Tabbing past the last link closes the list.
    await page.keyboard.press(' ');
    await tab(9);
    await expectFocus(page, 'RabbitMQ');
    await tab(1);
    await expectFocus(page, 'Auth methods');
    await nav.getByRole('button', { name: 'Engines menu', expanded: false }).waitFor();
    // Following a link navigates and closes the list; the group of the page is marked current.
    await page.keyboard.press('Shift+Tab'); // the hidden links are skipped
    expect(await focused()).toBe('Engines menu');
    await page.keyboard.press('Enter');
    await tab(6);
    await expectFocus(page, 'SSH');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'SSH', exact: true }).waitFor();
    await nav.getByRole('button', { name: 'Engines menu', expanded: false }).waitFor();
    expect(await nav.getByRole('link', { name: 'Engines', exact: true }).getAttribute('aria-current')).toBe('true');
    await page.keyboard.press('Shift+Tab'); // from <main>, which has the focus after a navigation
    await expectFocus(page, 'Sign out');
    // Back through Leases, Tokens, Policies, Auth methods to the menu's button.
    for (let i = 0; i < 5; i++) await page.keyboard.press('Shift+Tab');
    expect(await focused()).toBe('Engines menu');
    await page.keyboard.press('Enter');
    expect(await nav.getByRole('link', { name: 'SSH', exact: true }).getAttribute('aria-current')).toBe('page');
    expect(unexpectedProblems(ui, page, [404])).toEqual([]);
  });
});
