import { describeUi, expectAccessible, uiSuite } from './browser';
import { catalogUi, ROOT_NAME } from './catalog-helpers';
import { ROOT_TOKEN } from '../helpers/server';

/** The catalog console's namespace selector: every call of a page goes to the chosen namespace. */
describeUi('catalog console: namespace selector', () => {
  const ui = uiSuite();
  const c = catalogUi(ui);

  beforeAll(async () => {
    // As in production: what no rule allows is denied (the test server's catalog allows it, as --dev does).
    (ui.server.engine as { catalogDefaultPolicy: string }).catalogDefaultPolicy = 'deny';
    for (const Name of ['team-a', 'team-b']) expect((await c.api('PUT', '/v1/namespace', { Name })).status).toBe(200);
    expect((await c.api('PUT', '/v1/kv/shared/only-in-a?ns=team-a', 'in team a')).status).toBe(200);
    expect((await c.api('PUT', '/v1/kv/shared/in-default', 'in default')).status).toBe(200);
  });

  test('a key written in team-a shows only when team-a is selected; the choice is kept for the tab and carried by the URL', async () => {
    const page = await ui.newPage();
    await c.signIn(page, ROOT_TOKEN, ROOT_NAME);
    await page.goto(c.url('/kv/shared/'));
    const select = page.getByLabel('Namespace', { exact: true });
    await page.getByRole('link', { name: 'in-default' }).waitFor();
    expect(await select.inputValue()).toBe('default');
    expect(await page.getByRole('link', { name: 'only-in-a' }).count()).toBe(0);

    await select.locator('option', { hasText: 'team-a' }).waitFor({ state: 'attached' });
    await select.selectOption('team-a');
    await page.getByRole('link', { name: 'only-in-a' }).waitFor();
    expect(await page.getByRole('link', { name: 'in-default' }).count()).toBe(0);
    expect(new URL(page.url()).searchParams.get('ns')).toBe('team-a');
    await ui.screenshot(page, 'catalog-namespace');
    await expectAccessible(page);

    // A key created from the page is written in the chosen namespace.
    await page.getByLabel('Key name', { exact: true }).fill('made-in-a');
    await page.getByLabel('Value', { exact: true }).fill('from the browser');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { level: 1, name: /made-in-a/ }).waitFor();
    expect((await c.api('GET', '/v1/kv/shared/made-in-a?ns=team-a&raw')).text).toBe('from the browser');
    expect((await c.api('GET', '/v1/kv/shared/made-in-a')).status).toBe(404);

    // The header's links carry no namespace: the tab remembers it.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Key/Value' }).click();
    await page.getByRole('heading', { level: 1, name: 'Key/Value', exact: true }).waitFor();
    expect(await page.getByLabel('Namespace', { exact: true }).inputValue()).toBe('team-a');
    await page.getByRole('link', { name: 'shared/' }).click();
    await page.getByRole('link', { name: 'only-in-a' }).waitFor();

    // A shared link names its namespace: another tab (no memory yet) opens it there.
    const other = await ui.newPage();
    await c.signIn(other, ROOT_TOKEN, ROOT_NAME);
    await other.goto(c.url('/kv/shared/?ns=team-a'));
    await other.getByRole('link', { name: 'only-in-a' }).waitFor();
    await other.goto(c.url('/kv/shared/'));
    await other.getByRole('link', { name: 'only-in-a' }).waitFor();
    expect(c.problems(page)).toEqual([]);
    expect(c.problems(other)).toEqual([]);
  });

  test('a token without access to a namespace does not see it in the list', async () => {
    const rules = 'namespace "team-a" {\n  policy = "read"\n  key_prefix "" { policy = "list" }\n}\nnode_prefix "" { policy = "read" }';
    expect((await c.api('PUT', '/v1/acl/policy', { Name: 'team-a-reader', Rules: rules })).status).toBe(200);
    const created = await c.api('PUT', '/v1/acl/token', { Description: 'team a reader', Policies: [{ Name: 'team-a-reader' }] });
    expect(created.status).toBe(200);
    const page = await ui.newPage();
    await c.signIn(page, created.body.SecretID, 'team a reader');
    await page.goto(c.url('/kv/shared/?ns=team-a'));
    await page.getByRole('link', { name: 'only-in-a' }).waitFor();
    const select = page.getByLabel('Namespace', { exact: true });
    await select.locator('option', { hasText: 'team-a' }).waitFor({ state: 'attached' });
    await page.waitForFunction(() => document.querySelector('select[name="ns"]')?.getAttribute('aria-busy') === null);
    expect(await select.locator('option').allTextContents()).toEqual(['team-a']);
    expect(c.problems(page)).toEqual([]);
  });
});
