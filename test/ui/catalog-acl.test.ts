import { generateKeyPairSync } from 'node:crypto';
import { describeUi, expectAccessible, expectFocus, uiSuite } from './browser';
import { catalogUi, ROOT_NAME } from './catalog-helpers';
import { ROOT_TOKEN } from '../helpers/server';

/** The catalog console's ACL pages and namespaces, signed in as the root token and as a restricted one. */
describeUi('catalog console: ACLs and namespaces', () => {
  const ui = uiSuite();
  const c = catalogUi(ui);

  beforeAll(() => {
    // The test server's catalog allows what no rule decides (as --dev does); here, as in production, it denies.
    (ui.server.engine as { catalogDefaultPolicy: string }).catalogDefaultPolicy = 'deny';
  });

  test('a policy (rules checked by the API) and a token with it; signing in with that token; permission denied', async () => {
    const page = await ui.newPage();
    await c.signIn(page, ROOT_TOKEN, ROOT_NAME);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'ACL' }).click();
    await page.getByRole('heading', { level: 1, name: 'Tokens' }).waitFor();
    await page.getByRole('row', { name: /Anonymous Token/ }).waitFor();
    await expectAccessible(page);

    await page.getByRole('navigation', { name: 'ACL' }).getByRole('link', { name: 'Policies' }).click();
    await page.getByRole('link', { name: 'New policy' }).click();
    await page.getByLabel('Name', { exact: true }).fill('app-reader');
    await page.getByLabel('Description').fill('Reads the app/ keys');
    await page.getByLabel('Rules').fill('key_prefix "app/" { policy = "reed" }');
    await page.getByRole('button', { name: 'Create policy' }).click();
    await page.getByRole('alert').getByText(/Invalid key_prefix policy: "reed"/).waitFor();
    await page.getByLabel('Rules').fill('key_prefix "app/" { policy = "read" }\nnode_prefix "" { policy = "read" }');
    await page.getByRole('button', { name: 'Create policy' }).click();
    await page.getByRole('heading', { level: 1, name: 'Policy app-reader' }).waitFor();
    await ui.screenshot(page, 'catalog-policy');
    await expectAccessible(page);

    await page.getByRole('navigation', { name: 'ACL' }).getByRole('link', { name: 'Tokens' }).click();
    await page.getByRole('link', { name: 'New token' }).click();
    await page.getByLabel('Description').fill('app reader');
    await page.getByLabel('Policies').fill('app-reader');
    await page.getByRole('button', { name: 'Create token' }).click();
    await page.getByRole('heading', { level: 1, name: /^Token / }).waitFor();
    await ui.screenshot(page, 'catalog-token');
    await expectAccessible(page);
    await page.getByText('Show the secret ID').click();
    const secret = (await page.locator('figure.copy code').textContent())!.trim();
    expect(secret).toMatch(/^[0-9a-f-]{36}$/);
    const self = await c.api('GET', '/v1/acl/token/self', undefined, secret);
    expect(self.body).toMatchObject({ Description: 'app reader', Policies: [{ Name: 'app-reader' }] });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await c.signIn(page, secret, 'app reader');
    await page.getByRole('heading', { level: 1, name: 'Nodes' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'ACL' }).click();
    await page.getByRole('heading', { level: 1, name: 'Permission denied' }).waitFor();
    await page.getByRole('alert').getByText(/lacks permission 'acl:read'/).waitFor();
    await ui.screenshot(page, 'catalog-permission-denied');
    await expectAccessible(page);

    // What it may do works: the key/value store under app/.
    await c.api('PUT', '/v1/kv/app/name', 'hangar');
    await page.goto(c.url('/kv/app/name'));
    await page.getByText('hangar', { exact: true }).waitFor();
    await page.getByLabel('New value').fill('changed');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('alert').getByText(/Permission denied/).waitFor();
    expect(page.url()).not.toContain(secret);
    expect(c.problems(page)).toEqual([]);
  });

  test('anonymous use: without signing in the console acts as the anonymous token', async () => {
    const policy = await c.api('PUT', '/v1/acl/policy', { Name: 'anonymous-nodes', Rules: 'node_prefix "" { policy = "read" }' });
    expect(policy.status).toBe(200);
    const anonymous = await c.api('PUT', '/v1/acl/token/00000000-0000-0000-0000-000000000002', { Policies: [{ Name: 'anonymous-nodes' }] });
    expect(anonymous.status).toBe(200);
    await c.api('PUT', '/v1/catalog/register', { Node: 'public-1', Address: '10.0.1.1' });

    const page = await ui.newPage();
    await page.goto(c.url('/'));
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    await page.getByRole('row', { name: /public-1 10\.0\.1\.1/ }).waitFor();
    await page.goto(c.url('/kv'));
    await page.getByText('No keys here').waitFor();
    expect(c.problems(page)).toEqual([]);
  });

  test('roles: create with a policy, then delete', async () => {
    await c.api('PUT', '/v1/acl/policy', { Name: 'role-policy', Rules: 'service_prefix "" { policy = "read" }' });
    const page = await ui.newPage();
    await c.signIn(page, ROOT_TOKEN, ROOT_NAME);
    await page.goto(c.url('/acl/roles/new'));
    await page.getByLabel('Name', { exact: true }).fill('readers');
    await page.getByLabel('Policies').fill('role-policy');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('heading', { level: 1, name: 'Role readers' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('navigation', { name: 'ACL' }).getByRole('link', { name: 'Roles' }).click();
    await page.getByRole('row', { name: /readers.*role-policy/ }).waitFor();
    await page.getByRole('link', { name: 'readers' }).click();
    await page.getByRole('button', { name: 'Delete role' }).click();
    await page.getByRole('button', { name: 'Confirm delete' }).click();
    await page.getByText('No roles.').waitFor();
    expect(c.problems(page)).toEqual([]);
  });

  test('an auth method, then binding rules: create, edit and delete', async () => {
    const publicKey = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const page = await ui.newPage();
    await c.signIn(page, ROOT_TOKEN, ROOT_NAME);
    await page.goto(c.url('/acl/auth-methods/new'));
    await page.getByLabel('Name', { exact: true }).fill('ci-jwt');
    await page.getByLabel('Type').selectOption('jwt');
    await page.getByLabel('Config').fill('{"JWTValidationPubKeys": "not a list"');
    await page.getByRole('button', { name: 'Create auth method' }).click();
    await page.getByRole('alert').getByText(/Config must be a JSON object/).waitFor();
    await page.getByLabel('Config').fill(JSON.stringify({ JWTValidationPubKeys: [publicKey], ClaimMappings: { project: 'project' } }));
    await page.getByRole('button', { name: 'Create auth method' }).click();
    await page.getByRole('heading', { level: 1, name: 'Auth method ci-jwt' }).waitFor();
    await expectAccessible(page);
    expect((await c.api('GET', '/v1/acl/auth-method/ci-jwt')).body).toMatchObject({ Type: 'jwt', Config: { ClaimMappings: { project: 'project' } } });
    await page.getByRole('navigation', { name: 'ACL' }).getByRole('link', { name: 'Auth methods' }).click();
    await page.getByRole('row', { name: /ci-jwt jwt/ }).waitFor();
    await page.getByRole('navigation', { name: 'ACL' }).getByRole('link', { name: 'Binding rules' }).click();
    await page.getByText('No binding rules.').waitFor();
    await page.getByRole('link', { name: 'New binding rule' }).click();
    await page.getByLabel('Auth method').fill('ci-jwt');
    await page.getByLabel('Bind type').selectOption('service');
    await page.getByLabel('Bind name').fill('${value.project}');
    await page.getByLabel('Description').fill('CI projects');
    await page.getByLabel('Selector').fill('value.project != ""');
    await page.getByRole('button', { name: 'Create binding rule' }).click();
    await page.getByRole('heading', { level: 1, name: 'Binding rule CI projects' }).waitFor();
    const rules = await c.api('GET', '/v1/acl/binding-rules');
    expect(rules.body).toEqual([expect.objectContaining({ AuthMethod: 'ci-jwt', BindType: 'service', BindName: '${value.project}' })]);

    await page.getByLabel('Bind type').selectOption('node');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await c.api('GET', `/v1/acl/binding-rule/${rules.body[0].ID}`)).body).toMatchObject({ BindType: 'node', AuthMethod: 'ci-jwt' });
    await ui.screenshot(page, 'catalog-binding-rule');
    await expectAccessible(page);

    await page.getByRole('button', { name: 'Delete binding rule' }).click();
    await page.getByRole('button', { name: 'Confirm delete' }).click();
    await page.getByRole('heading', { level: 1, name: 'Binding rules' }).waitFor();
    await page.getByText('No binding rules.').waitFor();
    expect((await c.api('GET', '/v1/acl/binding-rules')).body).toEqual([]);
    expect(c.problems(page)).toEqual([]);
  });

  test('namespaces: create and delete', async () => {
    const page = await ui.newPage();
    await c.signIn(page, ROOT_TOKEN, ROOT_NAME);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Namespaces' }).click();
    await page.getByRole('row', { name: /default/ }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('team-a');
    await page.getByLabel('Description').fill('Team A');
    await page.getByRole('button', { name: 'Create namespace' }).click();
    const row = page.getByRole('row', { name: /team-a/ });
    await row.getByText('active').waitFor();
    await ui.screenshot(page, 'catalog-namespaces');
    await expectAccessible(page);

    // Keyboard: the confirmation takes the focus of the button it replaces.
    await row.getByRole('button', { name: 'Delete team-a' }).focus();
    await page.keyboard.press('Enter');
    await row.getByRole('button', { name: 'Confirm delete of team-a' }).waitFor();
    await expectFocus(page, 'Confirm delete of team-a');
    await page.keyboard.press('Enter');
    // Marked for deletion at once (no Delete button any more), then removed by the server's background job.
    await page.getByRole('button', { name: /team-a/ }).waitFor({ state: 'detached' });
    const ns = await c.api('GET', '/v1/namespace/team-a');
    expect(ns.status === 404 || Boolean(ns.body.DeletedAt)).toBe(true);
    expect(c.problems(page)).toEqual([]);
  });
});
