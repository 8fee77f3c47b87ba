import type { Page } from 'playwright-core';
import { describeUi, expectAccessible, uiSuite } from './browser';
import { asRoot, recordUrls, screenshot, signIn, tokenWith, unexpectedProblems } from './secrets-helpers';
import { closeDatabaseSessions } from '../../src/engine/secrets/engines/database/store';
import { havePostgres, startTargetPostgres, TargetPostgres } from '../helpers/postgres-target';
import { ROOT_TOKEN } from '../helpers/server';

const CREATE = 'CREATE ROLE "{{name}}" WITH LOGIN PASSWORD \'{{password}}\' VALID UNTIL \'{{expiration}}\';\nGRANT SELECT ON ALL TABLES IN SCHEMA public TO "{{name}}";';

/** The secrets console's database pages against a private PostgreSQL: psql is the judge of the credentials. */
(havePostgres() ? describeUi : describe.skip)('secrets console: database', () => {
  const ui = uiSuite();
  let pg: TargetPostgres;

  beforeAll(async () => {
    pg = await startTargetPostgres();
    await pg.admin('CREATE TABLE items (id int); INSERT INTO items VALUES (1); CREATE ROLE app_static WITH LOGIN PASSWORD \'initial-password\'');
    if (!(await asRoot(ui, 'GET', 'sys/mounts')).data['database/']) await asRoot(ui, 'POST', 'sys/mounts/database', { type: 'database' });
  }, 120_000);
  afterAll(async () => {
    await closeDatabaseSessions();
    await pg?.stop();
  });

  const figure = async (page: Page, label: string) => {
    const code = page.getByRole('figure', { name: label, exact: true }).locator('code');
    await code.waitFor();
    return (await code.textContent())!;
  };

  test('creates and edits a connection (the password never shown), a role, credentials that log in, a static role that rotates', async () => {
    const page = await ui.newPage();
    const urls = recordUrls(page);
    await signIn(ui, page);
    // The engines page links each mount to its pages.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Engines' }).click();
    await page.getByRole('link', { name: 'database/' }).click();
    await page.getByRole('heading', { level: 1, name: 'Database database/' }).waitFor();
    await expectAccessible(page);

    // A wrong password: the connection is verified before it is stored, the API's message shown.
    await page.getByLabel('Connection name', { exact: true }).fill('app');
    await page.getByLabel('Connection URL', { exact: true }).fill(pg.urlTemplate);
    await page.getByLabel('Username', { exact: true }).fill(pg.adminUser);
    await page.getByLabel('Password', { exact: true }).fill('wrong-password');
    await page.getByLabel('Allowed roles', { exact: true }).fill('ro');
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('alert').getByText(/could not verify the connection/).waitFor();
    await page.getByLabel('Password', { exact: true }).fill(pg.adminPassword);
    await page.getByRole('button', { name: 'Create connection' }).click();
    await page.getByRole('heading', { level: 1, name: 'Connection app' }).waitFor();
    await expectAccessible(page);
    expect((await asRoot(ui, 'GET', 'database/config/app')).data).toMatchObject({ allowed_roles: ['ro'], connection_details: { username: pg.adminUser } });
    expect(await page.getByLabel('Password', { exact: true }).inputValue()).toBe('');
    expect(await page.content()).not.toContain(pg.adminPassword);

    // Editing with the password left empty keeps the stored one (the connection still verifies).
    await page.getByLabel('Allowed roles', { exact: true }).fill('ro, static-*');
    await page.getByRole('button', { name: 'Save connection' }).click();
    await page.getByText('Saved connection app.').waitFor();
    expect((await asRoot(ui, 'GET', 'database/config/app')).data.allowed_roles).toEqual(['ro', 'static-*']);

    // A role, and credentials from it: psql logs in with them; the lease is the API's.
    await page.getByRole('link', { name: 'database/' }).click();
    await page.getByLabel('Role name', { exact: true }).fill('ro');
    await page.getByLabel('Connection', { exact: true }).fill('app');
    await page.getByLabel('Creation statements', { exact: true }).fill(CREATE);
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('heading', { level: 1, name: 'Database role ro' }).waitFor();
    expect((await asRoot(ui, 'GET', 'database/roles/ro')).data).toMatchObject({ db_name: 'app', default_ttl: 3600, max_ttl: 86400 });

    // Editing the role: the form shows what the API read; the save is the same write.
    const editRole = page.getByRole('form', { name: 'Edit role ro' });
    expect(await editRole.getByLabel('Connection', { exact: true }).inputValue()).toBe('app');
    expect(await editRole.getByLabel('Creation statements', { exact: true }).inputValue()).toBe(CREATE);
    expect(await editRole.getByLabel('Default TTL', { exact: true }).inputValue()).toBe('1h');
    await editRole.getByLabel('Default TTL', { exact: true }).fill('2h');
    await editRole.getByText('Revocation, rollback and renewal').click();
    await editRole.getByLabel('Revocation statements', { exact: true }).fill('DROP ROLE IF EXISTS "{{name}}";');
    await editRole.getByRole('button', { name: 'Save role' }).click();
    await page.getByText('Saved role ro.').waitFor();
    expect((await asRoot(ui, 'GET', 'database/roles/ro')).data).toMatchObject({
      db_name: 'app',
      default_ttl: 7200,
      max_ttl: 86400,
      creation_statements: CREATE.split('\n'),
      revocation_statements: ['DROP ROLE IF EXISTS "{{name}}";'],
    });
    await page.getByRole('button', { name: 'Generate credentials' }).click();
    const username = await figure(page, 'Username');
    const password = await figure(page, 'Password');
    const lease = (await page.getByRole('definition').filter({ hasText: 'database/creds/ro/' }).textContent())!.trim();
    await screenshot(ui, page, 'secrets-database');
    await expectAccessible(page);
    expect((await pg.psql(username, password, 'SELECT count(*) FROM items')).status).toBe(0);
    expect((await asRoot(ui, 'PUT', 'sys/leases/lookup', { lease_id: lease })).data.id).toBe(lease);

    // A static role: the password rotates at once, and again on "Rotate now".
    await page.getByRole('link', { name: 'database/' }).click();
    await page.getByLabel('Static role name', { exact: true }).fill('static-app');
    await page.getByLabel('Connection of the user', { exact: true }).fill('app');
    await page.getByLabel('Database user', { exact: true }).fill('app_static');
    await page.getByLabel('Rotation period', { exact: true }).fill('1h');
    await page.getByRole('button', { name: 'Create static role' }).click();
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'static-app', exact: true }) });
    await row.getByRole('cell', { name: 'app_static' }).waitFor();
    // Rotates every 1h; the next rotation in 1h (or a few seconds less).
    await row.getByRole('cell', { name: '1h', exact: true }).first().waitFor();
    const first = (await asRoot(ui, 'GET', 'database/static-creds/static-app')).data;
    expect(first.password).not.toBe('initial-password');
    expect((await pg.psql('app_static', first.password, 'SELECT 1')).status).toBe(0);
    // The page reads the role again after the rotation.
    const reread = page.waitForResponse((r) => r.url().endsWith('/static-roles/static-app') && r.request().method() === 'GET');
    await row.getByRole('button', { name: 'Rotate static-app now' }).click();
    await reread;
    const second = (await asRoot(ui, 'GET', 'database/static-creds/static-app')).data;
    expect(second.password).not.toBe(first.password);
    expect((await pg.psql('app_static', second.password, 'SELECT 1')).status).toBe(0);

    // Editing the static role from its row: the user is shown, not editable; the period and statements change.
    await row.getByRole('button', { name: 'Edit static-app' }).click();
    const editStatic = page.getByRole('form', { name: 'Edit static role static-app' });
    expect(await editStatic.getByLabel('Database user', { exact: true }).inputValue()).toBe('app_static');
    expect(await editStatic.getByLabel('Database user', { exact: true }).getAttribute('readonly')).not.toBeNull();
    expect(await editStatic.getByLabel('Rotation period', { exact: true }).inputValue()).toBe('1h');
    await editStatic.getByLabel('Rotation period', { exact: true }).fill('2h');
    await editStatic.getByLabel('Rotation statements', { exact: true }).fill('ALTER ROLE "{{name}}" WITH PASSWORD \'{{password}}\';');
    await editStatic.getByRole('button', { name: 'Save static role' }).click();
    await row.getByRole('cell', { name: '2h', exact: true }).first().waitFor();
    expect((await asRoot(ui, 'GET', 'database/static-roles/static-app')).data).toMatchObject({
      username: 'app_static',
      rotation_period: 7200,
      rotation_statements: ['ALTER ROLE "{{name}}" WITH PASSWORD \'{{password}}\';'],
    });

    for (const u of urls) expect(u).not.toContain(ROOT_TOKEN);
    // 400: the refused connection; 404: the empty listings.
    expect(unexpectedProblems(ui, page, [400, 404])).toEqual([]);
  });

  test('a token that may only generate credentials: the listings say permission denied, and the role page', async () => {
    await asRoot(ui, 'PUT', 'sys/policies/acl/db-creds', { policy: 'path "database/creds/ro" { capabilities = ["read"] }' });
    const { token } = await tokenWith(ui, ['db-creds']);
    const page = await ui.newPage();
    await signIn(ui, page, token);
    await page.goto(`${ui.server.urls.secrets}/ui/database/database`);
    await page.getByText("Your token's policies do not allow listing connections.").waitFor();
    await page.getByText("Your token's policies do not allow listing static roles.").waitFor();
    await page.goto(`${ui.server.urls.secrets}/ui/database/database/roles/ro`);
    await page.getByText("Your token's policies do not allow reading the role ro.").waitFor();
    expect(unexpectedProblems(ui, page, [403])).toEqual([]);
  });
});
