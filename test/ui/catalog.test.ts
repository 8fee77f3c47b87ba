import { describeUi, expectAccessible, uiSuite } from './browser';
import { catalogUi, ROOT_NAME } from './catalog-helpers';
import { ROOT_TOKEN } from '../helpers/server';

/** The catalog console: nodes and checks, live updates, the key/value store, sessions and locks. */
describeUi('catalog console: nodes, key/value, sessions', () => {
  const ui = uiSuite();
  const c = catalogUi(ui);

  beforeAll(async () => {
    const registered = await c.api('PUT', '/v1/catalog/register', {
      Node: 'web-1',
      Address: '10.0.0.1',
      Service: { Service: 'web', Port: 80, Tags: ['v1'] },
      Check: { CheckID: 'web-http', Name: 'HTTP on :80', Status: 'warning', ServiceID: 'web', Output: 'answered in 2.5 s' },
    });
    expect(registered.status).toBe(200);
  });

  test('the listener answers each console address with its page, and others with 404', async () => {
    for (const path of ['/ui/', '/ui/nodes/web-1', '/ui/kv/app/config/', '/ui/kv/a%20b', '/ui/sessions', '/ui/acl/policies/new', '/ui/namespaces']) {
      const res = await ui.server.call('catalog', 'GET', path);
      expect([path, res.status, res.headers['content-type']]).toEqual([path, 200, 'text/html; charset=utf-8']);
    }
    expect((await ui.server.call('catalog', 'GET', '/ui/no-such-page')).status).toBe(404);
  });

  test('a node registered through the API is listed with its checks; the token stays out of every URL', async () => {
    const page = await ui.newPage();
    const requested: string[] = [];
    page.on('request', (r) => requested.push(r.url()));
    await page.goto(c.url('/sign-in'));
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await expectAccessible(page);
    await c.signIn(page, ROOT_TOKEN, ROOT_NAME);
    await page.getByRole('heading', { level: 1, name: 'Nodes' }).waitFor();
    const row = page.getByRole('row', { name: /web-1/ });
    await row.getByText('10.0.0.1').waitFor();
    await row.getByText('warning', { exact: true }).waitFor(); // the worst status, as a word
    await row.getByText('1 passing, 1 warning').waitFor();
    await ui.screenshot(page, 'catalog-nodes');
    await expectAccessible(page);

    await page.getByRole('link', { name: 'web-1' }).click();
    await page.getByRole('heading', { level: 1, name: 'Node web-1' }).waitFor();
    const check = page.getByRole('row', { name: /HTTP on :80/ });
    await check.getByText('warning', { exact: true }).waitFor();
    await check.getByText('answered in 2.5 s').waitFor();
    await page.getByRole('row', { name: /Serf Health Status/ }).getByText('passing').waitFor();
    await ui.screenshot(page, 'catalog-node');
    await expectAccessible(page);

    await page.getByRole('link', { name: 'web', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Service web' }).waitFor();
    await expectAccessible(page);
    await page.getByText('10.0.0.1:80').waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Services' }).click();
    await page.getByRole('row', { name: /web v1/ }).waitFor();

    expect(page.url()).not.toContain(ROOT_TOKEN);
    expect(requested.length).toBeGreaterThan(5);
    expect(requested.filter((u) => u.includes(ROOT_TOKEN))).toEqual([]);
    expect(await page.context().cookies()).toEqual([]);
    expect(c.problems(page)).toEqual([]);
  });

  test('a change made through the API appears without a reload (blocking query)', async () => {
    const page = await ui.newPage();
    await c.signIn(page, ROOT_TOKEN, ROOT_NAME);
    await page.getByRole('link', { name: 'web-1' }).waitFor();
    await page.evaluate(() => ((window as any).sameDocument = true));
    await c.api('PUT', '/v1/catalog/register', {
      Node: 'db-1',
      Address: '10.0.0.2',
      Check: { CheckID: 'disk', Name: 'Disk', Status: 'critical' },
    });
    const row = page.getByRole('row', { name: /db-1/ });
    await row.getByText('critical', { exact: true }).waitFor();
    expect(await page.evaluate(() => (window as any).sameDocument)).toBe(true);

    // On the node's page, its deregistration shows up too.
    await row.getByRole('link', { name: 'db-1' }).click();
    await page.getByRole('heading', { level: 1, name: 'Node db-1' }).waitFor();
    await c.api('PUT', '/v1/catalog/deregister', { Node: 'db-1' });
    await page.getByText('This node was deregistered.').waitFor();
    expect(await page.evaluate(() => (window as any).sameDocument)).toBe(true);
    expect(c.problems(page)).toEqual([]);
  });

  test('key/value: create with flags, edit, follow a folder, delete', async () => {
    const page = await ui.newPage();
    await c.signIn(page, ROOT_TOKEN, ROOT_NAME);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Key/Value' }).click();
    await page.getByRole('heading', { level: 1, name: 'Key/Value' }).waitFor();
    await page.getByLabel('Key name').fill('app/config/port');
    await page.getByLabel('Value').fill('8080');
    await page.getByLabel('Flags').fill('42');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { level: 1, name: 'Key app/config/port' }).waitFor();
    await expectAccessible(page);
    await page.getByText('8080', { exact: true }).waitFor();
    let stored = await c.api('GET', '/v1/kv/app/config/port');
    expect(stored.body[0]).toMatchObject({ Flags: 42, Value: Buffer.from('8080').toString('base64') });

    await page.getByLabel('New value').fill('9090');
    await page.getByLabel('Flags').fill('7');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.locator('pre.catalog-value', { hasText: '9090' }).waitFor();
    stored = await c.api('GET', '/v1/kv/app/config/port');
    expect(stored.body[0]).toMatchObject({ Flags: 7, Value: Buffer.from('9090').toString('base64') });

    // The folder lists a key written from outside as it arrives.
    await page.getByRole('navigation', { name: 'Breadcrumb' }).getByRole('link', { name: 'config' }).click();
    await page.getByRole('heading', { level: 1, name: 'Key/Value: app/config/' }).waitFor();
    await c.api('PUT', '/v1/kv/app/config/host', 'db.internal');
    await page.getByRole('link', { name: 'host', exact: true }).waitFor();
    await ui.screenshot(page, 'catalog-kv-folder');
    await expectAccessible(page);

    await page.getByRole('link', { name: 'port', exact: true }).click();
    await page.getByRole('button', { name: 'Delete key' }).click();
    await page.getByRole('button', { name: 'Confirm delete' }).click();
    await page.getByRole('heading', { level: 1, name: 'Key/Value: app/config/' }).waitFor();
    await page.getByRole('link', { name: 'host', exact: true }).waitFor();
    expect(await page.getByRole('link', { name: 'port', exact: true }).count()).toBe(0);
    expect((await c.api('GET', '/v1/kv/app/config/port')).status).toBe(404);
    expect(c.problems(page)).toEqual([]);
  });

  test('a key held by a session shows its lock; the session counts down and is destroyed', async () => {
    const session = await c.api('PUT', '/v1/session/create', { Name: 'deploy-lock', Node: 'web-1', TTL: '10m', Behavior: 'release' });
    expect(session.status).toBe(200);
    const id: string = session.body.ID;
    expect((await c.api('PUT', `/v1/kv/locks/deploy?acquire=${id}`, 'held')).body).toBe(true);

    const page = await ui.newPage();
    await page.clock.install();
    await c.signIn(page, ROOT_TOKEN, ROOT_NAME);
    await page.goto(c.url('/kv/locks/deploy'));
    await page.getByRole('heading', { level: 1, name: 'Key locks/deploy' }).waitFor();
    await page.getByText('locked', { exact: true }).waitFor();
    await page.getByText('Lock index').waitFor();
    await page.getByText('on web-1').waitFor();
    await ui.screenshot(page, 'catalog-kv-key');
    await expectAccessible(page);
    await page.getByRole('link', { name: 'deploy-lock' }).click();
    await page.getByRole('heading', { level: 1, name: 'Session deploy-lock' }).waitFor();

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sessions' }).click();
    const row = page.getByRole('row', { name: /deploy-lock/ });
    await row.getByText('release').waitFor();
    const countdown = row.locator('.catalog-countdown');
    const seconds = async () => {
      const [m, s] = (await countdown.textContent())!.split(':').map(Number);
      return m * 60 + s;
    };
    const before = await seconds();
    expect(before).toBeLessThanOrEqual(600);
    await ui.screenshot(page, 'catalog-sessions');
    await expectAccessible(page);
    await page.clock.fastForward('02:00');
    await page.waitForFunction((limit) => {
      const [m, s] = document.querySelector('.catalog-countdown')!.textContent!.split(':').map(Number);
      return m * 60 + s <= limit;
    }, before - 120);

    await row.getByRole('button', { name: 'Destroy deploy-lock' }).click();
    await row.getByRole('button', { name: 'Confirm destroy' }).click();
    await page.getByText('No sessions.').waitFor();
    const key = await c.api('GET', '/v1/kv/locks/deploy');
    expect(key.body[0].Session).toBeUndefined();

    await page.goto(c.url('/kv/locks/deploy'));
    await page.getByText('not locked').waitFor();
    expect(c.problems(page)).toEqual([]);
  });
});
