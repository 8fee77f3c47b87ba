import { describeUi, uiSuite } from './browser';

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

describeUi('web UI foundation', () => {
  const ui = uiSuite();

  test.each([
    ['secrets', '/ui/', 'Secrets'],
    ['catalog', '/ui/', 'Catalog'],
    ['registry', '/', 'Box catalog'],
  ] as const)('the %s listener serves its console at %s with a strict CSP', async (api, path, title) => {
    const res = await ui.server.call(api, 'GET', path);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers).toMatchObject(SECURITY_HEADERS);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(res.text).toContain('<title>');
    expect(res.text).toContain(title);
    // No inline script: only the module script by URL and a JSON data block.
    for (const tag of res.text.match(/<script[^>]*>/g) ?? []) expect(tag).toMatch(/src="|type="application\/json"/);
  });

  test('built files have ETags and long caching under their hash', async () => {
    const page = await ui.server.call('secrets', 'GET', '/ui/');
    const src = /<script type="module" src="([^"]+)"/.exec(page.text)?.[1];
    expect(src).toMatch(/^\/ui\/assets\/secrets\.js\?v=[0-9a-f]{16}$/);
    const asset = await ui.server.call('secrets', 'GET', src!);
    expect(asset.status).toBe(200);
    expect(asset.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(asset.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(asset.headers).toMatchObject(SECURITY_HEADERS);
    const again = await ui.server.call('secrets', 'GET', '/ui/assets/secrets.js', { headers: { 'if-none-match': String(asset.headers.etag) } });
    expect(again.status).toBe(304);
    expect((await ui.server.call('secrets', 'GET', '/ui/assets/nothing.js')).status).toBe(404);
    expect((await ui.server.call('registry', 'GET', '/-/assets/style.css')).headers['cache-control']).toBe('no-cache');
  });

  test('the registry API keeps its paths and its JSON 404', async () => {
    const res = await ui.server.call('registry', 'GET', '/api/v1/nothing-here');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ success: false });
  });

  test('Chromium runs the consoles under the CSP without errors', async () => {
    const page = await ui.newPage();
    for (const api of ['secrets', 'catalog'] as const) {
      await page.goto(`${ui.server.urls[api]}/ui/`);
      await page.getByRole('banner').getByRole('link', { name: /Hangar/ }).waitFor();
      await page.locator('main h1').first().waitFor();
    }
    // The box catalog navigates in the page: the window survives following a link.
    await page.goto(`${ui.server.urls.registry}/`);
    await page.evaluate(() => ((window as { stayed?: boolean }).stayed = true));
    await page.getByRole('link', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => (window as { stayed?: boolean }).stayed)).toBe(true);
    expect(page.url()).toBe(`${ui.server.urls.registry}/-/sign-in`);
    // CSP violations and script errors show up here; answers of the API that are errors on purpose do not count.
    expect(ui.problems(page).filter((p) => !/the server responded with a status of 40[134]/.test(p))).toEqual([]);
  });
});
