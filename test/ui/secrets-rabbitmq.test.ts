import type { Page } from 'playwright-core';
import { describeUi, expectAccessible, uiSuite } from './browser';
import { asRoot, recordUrls, screenshot, signIn, tokenWith, unexpectedProblems } from './secrets-helpers';
import { haveRabbit, startRabbit, TestRabbit } from '../helpers/rabbitmq';
import { ROOT_TOKEN } from '../helpers/server';

/** The secrets console's RabbitMQ pages against a private broker: its management API judges the issued users. */
(haveRabbit() ? describeUi : describe.skip)('secrets console: RabbitMQ', () => {
  const ui = uiSuite();
  let rabbit: TestRabbit;
  const url = (path: string) => `${ui.server.urls.secrets}/ui${path}`;

  beforeAll(async () => {
    rabbit = await startRabbit();
    if (!(await asRoot(ui, 'GET', 'sys/mounts')).data['rabbitmq/']) await asRoot(ui, 'POST', 'sys/mounts/rabbitmq', { type: 'rabbitmq' });
  }, 120_000);
  afterAll(() => rabbit?.stop(), 60_000);

  const figure = async (page: Page, label: string) => {
    const code = page.getByRole('figure', { name: label, exact: true }).locator('code');
    await code.waitFor();
    return (await code.textContent())!;
  };

  test('connects to the broker (the password never shown), sets leases, creates a role, generates a user that logs in, edits and deletes the role', async () => {
    const page = await ui.newPage();
    const urls = recordUrls(page);
    await signIn(ui, page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Engines' }).click();
    await page.getByRole('link', { name: 'rabbitmq/' }).click();
    await page.getByRole('heading', { level: 1, name: 'RabbitMQ rabbitmq/' }).waitFor();
    await page.getByText('This mount is not connected to a broker yet.').waitFor();
    await expectAccessible(page);

    // A wrong password: the connection is verified first, the API's message shown.
    await page.getByLabel('Connection URI', { exact: true }).fill(rabbit.managementUrl);
    await page.getByLabel('Administrator', { exact: true }).fill(rabbit.username);
    await page.getByLabel('Administrator password', { exact: true }).fill('wrong-password');
    await page.getByRole('button', { name: 'Save connection' }).click();
    await page.getByRole('alert').getByText(/failed to validate the connection/).waitFor();
    await page.getByLabel('Administrator password', { exact: true }).fill(rabbit.password);
    await page.getByRole('button', { name: 'Save connection' }).click();
    await page.getByText('Saved the connection.').waitFor();
    expect((await asRoot(ui, 'GET', 'rabbitmq/config/connection')).data).toEqual({
      connection_uri: rabbit.managementUrl,
      username: rabbit.username,
      verify_connection: true,
      password_policy: '',
      username_template: '',
    });
    expect(await page.getByLabel('Administrator password', { exact: true }).inputValue()).toBe('');
    expect(await page.content()).not.toContain(rabbit.password);

    // Lease settings: a TTL above the maximum is refused; then saved, read back in seconds.
    await page.getByLabel('Lease TTL', { exact: true }).fill('2h');
    await page.getByLabel('Maximum lease TTL', { exact: true }).fill('1h');
    await page.getByRole('button', { name: 'Save lease settings' }).click();
    await page.getByRole('alert').getByText(/must not exceed max_ttl/).waitFor();
    await page.getByLabel('Lease TTL', { exact: true }).fill('1h');
    await page.getByLabel('Maximum lease TTL', { exact: true }).fill('2h');
    await page.getByRole('button', { name: 'Save lease settings' }).click();
    await page.getByText('Saved the lease settings.').waitFor();
    expect((await asRoot(ui, 'GET', 'rabbitmq/config/lease')).data).toEqual({ ttl: 3600, max_ttl: 7200 });

    // A role: malformed JSON is the API's message; then a role with tags and permissions.
    const vhosts = { '/': { configure: '^app-', write: '^app-', read: '^app-' } };
    const topics = { '/': { 'amq.topic': { write: '^orders\\.', read: '.*' } } };
    await page.getByLabel('Role name', { exact: true }).fill('app');
    await page.getByLabel('Tags', { exact: true }).fill('management');
    await page.getByLabel('Virtual host permissions', { exact: true }).fill('{"/": {"read": ".*"');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('alert').getByText(/failed to unmarshal vhosts/).waitFor();
    await page.getByLabel('Virtual host permissions', { exact: true }).fill(JSON.stringify(vhosts));
    await page.getByLabel('Topic permissions', { exact: true }).fill(JSON.stringify(topics));
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('heading', { level: 1, name: 'RabbitMQ role app' }).waitFor();
    expect((await asRoot(ui, 'GET', 'rabbitmq/roles/app')).data).toEqual({ tags: 'management', vhosts, vhost_topics: topics });
    await page.getByRole('table', { name: 'Topic permissions' }).getByRole('cell', { name: 'amq.topic' }).waitFor();

    // Generated credentials log in to the management API as the new user, with the role's tag and permissions.
    await page.getByRole('button', { name: 'Generate credentials' }).click();
    const username = await figure(page, 'Username');
    const password = await figure(page, 'Password');
    const lease = (await page.getByRole('definition').filter({ hasText: 'rabbitmq/creds/app/' }).textContent())!.trim();
    await screenshot(ui, page, 'secrets-rabbitmq');
    await expectAccessible(page);
    const whoami = await rabbit.api('GET', 'whoami', undefined, { username, password });
    expect(whoami.status).toBe(200);
    expect(whoami.body).toMatchObject({ name: username, tags: ['management'] });
    expect((await rabbit.api('GET', `permissions/%2F/${encodeURIComponent(username)}`)).body).toMatchObject(vhosts['/']);
    const looked = (await asRoot(ui, 'PUT', 'sys/leases/lookup', { lease_id: lease })).data;
    expect(looked.id).toBe(lease);
    expect(looked.ttl).toBeLessThanOrEqual(3600);
    // Revoking the lease deletes the user: the password no longer logs in.
    await asRoot(ui, 'PUT', 'sys/leases/revoke', { lease_id: lease });
    expect((await rabbit.api('GET', 'whoami', undefined, { username, password })).status).toBe(401);

    // Editing replaces the role; deleting it returns to the mount.
    await page.getByLabel('Tags', { exact: true }).fill('management, monitoring');
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByText('Saved role app.').waitFor();
    expect((await asRoot(ui, 'GET', 'rabbitmq/roles/app')).data.tags).toBe('management, monitoring');
    await page.getByRole('button', { name: 'Delete role' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'RabbitMQ rabbitmq/' }).waitFor();
    await page.getByText('No roles yet.').waitFor();
    expect((await ui.server.call('secrets', 'GET', '/v1/rabbitmq/roles/app', { headers: { 'x-secrets-token': ROOT_TOKEN } })).status).toBe(404);

    for (const u of urls) expect(u).not.toContain(ROOT_TOKEN);
    // 400: the refused writes; 404: the settings and listings before there were any.
    expect(unexpectedProblems(ui, page, [400, 404])).toEqual([]);
  });

  test('a token without RabbitMQ rights: the mount page and a role page say permission denied', async () => {
    const { token } = await tokenWith(ui, ['default']);
    const page = await ui.newPage();
    await signIn(ui, page, token);
    await page.goto(url('/rabbitmq/rabbitmq'));
    await page.getByText("Your token's policies do not allow reading the connection.").waitFor();
    await page.getByText("Your token's policies do not allow listing roles.").waitFor();
    await page.goto(url('/rabbitmq/rabbitmq/roles/app'));
    await page.getByText("Your token's policies do not allow reading the role app.").waitFor();
    expect(unexpectedProblems(ui, page, [403])).toEqual([]);
  });
});
