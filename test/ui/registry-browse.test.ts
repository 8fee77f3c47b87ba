import { describeUi, expectAccessible, uiSuite } from './browser';
import { registry } from '../engine/registry/registry-helpers';
import { userWithToken } from '../helpers/server';

/** The box catalog for readers: pages readable without JavaScript, the same pages in Chromium, privacy. */
describeUi('box catalog: browsing', () => {
  const ui = uiSuite();
  let aliceToken: string;
  const page = (path: string) => ui.server.call('registry', 'GET', path);

  beforeAll(async () => {
    aliceToken = await userWithToken(ui.server, 'alice');
    const alice = registry(ui.server, aliceToken);
    await alice.publishedBox('alice/debian-web', '1.0.0', {
      short_description: 'Nginx on Debian',
      description: '# Debian web\n\nServes **static** files.\n\n<script>alert(1)</script>',
    });
    await alice.createVersion('alice/debian-web', '1.1.0', 'Newer *nginx*');
    await alice.createProvider('alice/debian-web', '1.1.0', { name: 'libvirt', url: 'https://example.com/l.box', checksum_type: 'sha256', checksum: 'a'.repeat(64) });
    await alice.release('alice/debian-web', '1.1.0');
    await alice.createBox('alice', 'secret-web', { short_description: 'Nginx secret', is_private: true });
    await alice.createVersion('alice/secret-web', '1.0.0');
    await alice.createProvider('alice/secret-web', '1.0.0', { name: 'virtualbox', url: 'https://example.com/s.box' });
    await alice.release('alice/secret-web', '1.0.0');
    // Enough boxes for a second page of results (ten a page).
    for (let i = 0; i < 11; i++) await alice.publishedBox(`alice/many-${String(i).padStart(2, '0')}`, '1.0.0', { short_description: `Filler ${i}` });
  });

  describe('without JavaScript (the server renders the pages)', () => {
    test('search lists public boxes with their facts, never private ones', async () => {
      const res = await page('/?q=nginx');
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.text).toContain('alice/debian-web');
      expect(res.text).toContain('Nginx on Debian');
      expect(res.text).not.toContain('secret-web');
      expect(res.text).not.toContain('Nginx secret');
      // The search is a plain GET form that keeps its values.
      expect(res.text).toMatch(/<form method="get" action="\/"/);
      expect(res.text).toMatch(/name="q"[^>]*value="nginx"|value="nginx"[^>]*name="q"/);
    });

    test('filters, sorting and pagination are links and query parameters', async () => {
      const first = await page('/?sort=created&order=asc');
      expect(first.text).toContain('rel="next"');
      const next = /href="([^"]*)" rel="next"/.exec(first.text)![1].replace(/&amp;/g, '&');
      expect(next).toBe('/?sort=created&order=asc&page=2');
      const second = await page(next);
      expect(second.text).toContain('page 2');
      expect(second.text).toContain('rel="prev"');
      expect(second.text).not.toContain('rel="next"');
      // created ascending: the first box is on page one, the newest filler on page two.
      expect(first.text).toContain('alice/debian-web');
      expect(second.text).toContain('alice/many-10');
      const libvirt = await page('/?provider=libvirt');
      expect(libvirt.text).toContain('alice/debian-web');
      expect(libvirt.text).not.toContain('alice/many-00');
      const invalid = await page('/?sort=sideways');
      expect(invalid.status).toBe(422);
      expect(invalid.text).toContain('sort: must be one of downloads, created, updated');
    });

    test('a box page shows the description, versions, providers, checksums and the snippets', async () => {
      const res = await page('/alice/boxes/debian-web');
      expect(res.status).toBe(200);
      // The API's safe Markdown: rendered, and the script gone.
      expect(res.text).toContain('<strong>static</strong>');
      expect(res.text).not.toContain('<script>alert(1)</script>');
      expect(res.text).toContain('Version 1.1.0');
      expect(res.text).toContain('<em>nginx</em>');
      expect(res.text).toContain(`sha256:${'a'.repeat(64)}`);
      expect(res.text).toMatch(/VAGRANT_SERVER_URL=http:\/\/127\.0\.0\.1:\d+ vagrant box add alice\/debian-web --box-version 1\.1\.0/);
      expect(res.text).toContain('config.vm.box = &quot;alice/debian-web&quot;');
      expect(res.text).toContain('Downloads');
      // The data the browser takes over, in a JSON block (not a script that runs).
      expect(res.text).toContain('<script type="application/json" id="hangar-state">');
    });

    test('private boxes and unknown names are 404 pages; the owner page lists public boxes', async () => {
      const secret = await page('/alice/boxes/secret-web');
      expect(secret.status).toBe(404);
      expect(secret.text).toContain('Not found');
      expect(secret.text).not.toContain('Nginx secret');
      expect((await page('/nobody/boxes/nothing')).status).toBe(404);
      expect((await page('/nobody')).status).toBe(404);
      const owner = await page('/alice');
      expect(owner.status).toBe(200);
      expect(owner.text).toContain('alice/debian-web');
      expect(owner.text).not.toContain('secret-web');
    });

    test('the API keeps its paths: box metadata, downloads, JSON errors', async () => {
      const metadata = await page('/alice/debian-web');
      expect(metadata.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(metadata.body.name).toBe('alice/debian-web');
      const search = await page('/api/v1/search?q=nginx');
      expect(search.body.boxes.map((b: { tag: string }) => b.tag)).toEqual(['alice/debian-web']);
    });

    test('every page carries the security headers', async () => {
      for (const path of ['/', '/alice', '/alice/boxes/debian-web', '/-/sign-in', '/alice/boxes/secret-web']) {
        const res = await page(path);
        expect(res.headers['content-security-policy']).toContain("default-src 'self'");
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.headers['referrer-policy']).toBe('no-referrer');
      }
    });
  });

  describe('in Chromium', () => {
    test('search, open a box, copy its command', async () => {
      const p = await ui.newPage();
      await p.goto(`${ui.server.urls.registry}/`);
      await p.getByLabel('Search', { exact: true }).fill('debian');
      await p.getByRole('button', { name: 'Search' }).click();
      await p.getByRole('heading', { name: 'Boxes matching “debian”' }).waitFor();
      await ui.screenshot(p, 'registry-search');
      await expectAccessible(p);
      await p.getByRole('link', { name: 'alice/debian-web' }).click();
      await p.getByRole('heading', { level: 1, name: 'alice/debian-web' }).waitFor();
      expect(p.url()).toBe(`${ui.server.urls.registry}/alice/boxes/debian-web`);
      await p.getByRole('heading', { name: 'Version 1.0.0' }).waitFor();
      await ui.screenshot(p, 'registry-box');
      await expectAccessible(p);
      await p.context().grantPermissions(['clipboard-read', 'clipboard-write']);
      await p.getByRole('button', { name: 'Copy vagrant box add' }).click();
      await p.getByText('Copied').waitFor();
      expect(await p.evaluate(() => navigator.clipboard.readText())).toMatch(/vagrant box add alice\/debian-web --box-version 1\.1\.0$/);
      // Back to the results with the browser's history, then to the owner page.
      await p.goBack();
      await p.getByRole('heading', { name: 'Boxes matching “debian”' }).waitFor();
      await p.getByRole('link', { name: 'alice', exact: true }).first().click();
      await p.getByRole('heading', { level: 1, name: 'alice' }).waitFor();
      await expectAccessible(p);
      expect(ui.problems(p)).toEqual([]);
    });

    test('keyboard: the skip link leads to the content and the search is reachable by Tab', async () => {
      const p = await ui.newPage();
      await p.goto(`${ui.server.urls.registry}/`);
      await p.keyboard.press('Tab');
      expect(await p.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
      await p.keyboard.press('Enter');
      expect(await p.evaluate(() => document.activeElement?.id)).toBe('main');
      await p.keyboard.press('Tab');
      expect(await p.evaluate(() => (document.activeElement as HTMLInputElement).name)).toBe('q');
    });

    test('private boxes appear only to those who may see them', async () => {
      const bobToken = await userWithToken(ui.server, 'bob');
      const signIn = async (token: string) => {
        const p = await ui.newPage();
        await p.goto(`${ui.server.urls.registry}/-/sign-in`);
        await p.getByLabel('Token', { exact: true }).fill(token);
        await p.getByRole('button', { name: 'Sign in with token' }).click();
        await p.getByRole('heading', { name: 'Find a box' }).waitFor();
        return p;
      };
      const alice = await signIn(aliceToken);
      await alice.getByText('Signed in as alice').waitFor();
      await alice.getByLabel('Search', { exact: true }).fill('nginx');
      await alice.getByRole('button', { name: 'Search' }).click();
      await alice.getByRole('link', { name: 'alice/secret-web' }).click();
      await alice.getByRole('heading', { level: 1, name: 'alice/secret-web private' }).waitFor();

      const bob = await signIn(bobToken);
      await bob.goto(`${ui.server.urls.registry}/?q=nginx`);
      await bob.getByRole('link', { name: 'alice/debian-web' }).waitFor();
      expect(await bob.getByText('secret-web').count()).toBe(0);
      await bob.goto(`${ui.server.urls.registry}/alice/boxes/secret-web`);
      await bob.getByRole('heading', { level: 1, name: 'Not found' }).waitFor();
      expect(ui.problems(alice)).toEqual([]);
    });
  });
});
