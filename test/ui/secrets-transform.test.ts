import type { Page } from 'playwright-core';
import { describeUi, expectAccessible, uiSuite } from './browser';
import { asRoot, recordUrls, screenshot, signIn, tokenWith, unexpectedProblems } from './secrets-helpers';
import { ROOT_TOKEN } from '../helpers/server';

/** The secrets console's transform pages: alphabets, templates, transformations, roles, and encoding through a role. */
describeUi('secrets console: transform', () => {
  const ui = uiSuite();
  const url = (path: string) => `${ui.server.urls.secrets}/ui${path}`;

  beforeAll(async () => {
    if (!(await asRoot(ui, 'GET', 'sys/mounts')).data['transform/']) await asRoot(ui, 'POST', 'sys/mounts/transform', { type: 'transform' });
  });

  /** The text a CopyText shows (an encoded value, a token). */
  const shown = async (page: Page, label: string) => {
    const code = page.getByRole('figure', { name: label, exact: true }).locator('code');
    await code.waitFor();
    return (await code.textContent())!;
  };

  test('creates an alphabet, a template, FPE and tokenization transformations, a role; encodes, decodes, validates; deletion guards', async () => {
    const page = await ui.newPage();
    const urls = recordUrls(page);
    await signIn(ui, page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Engines' }).click();
    await page.getByRole('link', { name: 'transform/' }).click();
    await page.getByRole('heading', { level: 1, name: 'Transform transform/' }).waitFor();
    await page.getByText('No roles yet.').waitFor();
    // Built-ins are listed read-only: no Delete button in their rows.
    const builtinRow = page.getByRole('row').filter({ has: page.getByRole('cell', { name: 'builtin/creditcardnumber', exact: true }) });
    await builtinRow.getByText('built-in').waitFor();
    expect(await builtinRow.getByRole('button').count()).toBe(0);
    await expectAccessible(page);

    // An alphabet: a repeated character is the API's error; then a good one.
    await page.getByLabel('Alphabet name', { exact: true }).fill('hex');
    await page.getByLabel('Characters', { exact: true }).fill('0123456789abcdefa');
    await page.getByRole('button', { name: 'Create alphabet' }).click();
    await page.getByRole('alert').getByText(/"a" appears more than once/).waitFor();
    await page.getByLabel('Characters', { exact: true }).fill('0123456789abcdef');
    await page.getByRole('button', { name: 'Create alphabet' }).click();
    await page.getByRole('cell', { name: '0123456789abcdef', exact: true }).waitFor();
    expect((await asRoot(ui, 'GET', 'transform/alphabet/hex')).data).toEqual({ alphabet: '0123456789abcdef' });

    // A template over it.
    await page.getByLabel('Template name', { exact: true }).fill('order-id');
    await page.getByLabel('Pattern', { exact: true }).fill('ord-([0-9a-f]{8})');
    await page.getByLabel('Template alphabet', { exact: true }).selectOption('hex');
    await page.getByRole('button', { name: 'Create template' }).click();
    await page.getByRole('cell', { name: 'ord-([0-9a-f]{8})', exact: true }).waitFor();
    expect((await asRoot(ui, 'GET', 'transform/template/order-id')).data).toEqual({ type: 'regex', pattern: 'ord-([0-9a-f]{8})', alphabet: 'hex', encode_format: '', decode_formats: {} });

    // An FPE transformation on the card template with an internal tweak.
    const form = page.getByRole('form', { name: 'New transformation' });
    await form.getByLabel('Transformation name', { exact: true }).fill('cards');
    await form.getByLabel('Template', { exact: true }).selectOption('builtin/creditcardnumber');
    await form.getByLabel('Tweak source', { exact: true }).selectOption('internal');
    await form.getByLabel('Allowed roles', { exact: true }).fill('payments');
    await form.getByRole('button', { name: 'Create transformation' }).click();
    await page.getByRole('heading', { level: 1, name: 'Transformation cards' }).waitFor();
    await expectAccessible(page);
    expect((await asRoot(ui, 'GET', 'transform/transformation/cards')).data).toEqual({
      type: 'fpe',
      templates: ['builtin/creditcardnumber'],
      tweak_source: 'internal',
      allowed_roles: ['payments'],
      deletion_allowed: false,
    });

    // A tokenization transformation: a bad TTL is the API's error, shown in the form.
    await page.getByRole('link', { name: 'transform/' }).click();
    await form.getByLabel('Transformation name', { exact: true }).fill('tokens');
    await form.getByLabel('Type', { exact: true }).selectOption('tokenization');
    await form.getByLabel('Stores', { exact: true }).fill('builtin/internal');
    await form.getByLabel('Allowed roles', { exact: true }).fill('pay*');
    await form.getByLabel('Maximum token TTL', { exact: true }).fill('a while');
    await form.getByRole('button', { name: 'Create transformation' }).click();
    await form.getByRole('alert').getByText(/max_ttl/).waitFor();
    await form.getByLabel('Maximum token TTL', { exact: true }).fill('24h');
    await form.getByRole('button', { name: 'Create transformation' }).click();
    await page.getByRole('heading', { level: 1, name: 'Transformation tokens' }).waitFor();
    expect((await asRoot(ui, 'GET', 'transform/transformation/tokens')).data).toMatchObject({ type: 'tokenization', stores: ['builtin/internal'], max_ttl: 86400, allowed_roles: ['pay*'] });

    // The list filtered by type (a link, kept in the URL).
    await page.getByRole('link', { name: 'transform/' }).click();
    await page.getByRole('navigation', { name: 'Transformation types' }).getByRole('link', { name: 'Tokenization' }).click();
    await page.waitForURL(/\?type=tokenization$/);
    const list = page.getByRole('table', { name: 'Transformations of transform/' });
    await list.getByRole('link', { name: 'tokens' }).waitFor();
    expect(await list.getByRole('link', { name: 'cards' }).count()).toBe(0);

    // FPE over the user's template with a supplied tweak, and masking (made through the API).
    await asRoot(ui, 'POST', 'transform/transformation/fpe/ids', { template: 'order-id', tweak_source: 'supplied', allowed_roles: 'payments' });
    await asRoot(ui, 'POST', 'transform/transformation/masking/ssn', { template: 'builtin/socialsecuritynumber', masking_character: '#', allowed_roles: 'payments' });

    // A role with them all.
    await page.getByLabel('Role name', { exact: true }).fill('payments');
    await page.getByLabel('Role transformations', { exact: true }).fill('cards, tokens, ids, ssn');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('heading', { level: 1, name: 'Transform role payments' }).waitFor();
    expect((await asRoot(ui, 'GET', 'transform/role/payments')).data).toEqual({ transformations: ['cards', 'tokens', 'ids', 'ssn'] });

    // FPE: the encoded card keeps its format; the API decodes it; the page decodes it back.
    const codec = page.getByRole('form', { name: 'Encode and decode' });
    await codec.getByLabel('Transformation', { exact: true }).selectOption('cards');
    expect(await codec.getByLabel('Tweak', { exact: true }).count()).toBe(0);
    await codec.getByLabel('Value', { exact: true }).fill('4111-1111-1111-1111');
    await codec.getByRole('button', { name: 'Encode', exact: true }).click();
    const encoded = await shown(page, 'Encoded value');
    expect(encoded).toMatch(/^\d{4}-\d{4}-\d{4}-\d{4}$/);
    expect(encoded).not.toBe('4111-1111-1111-1111');
    expect((await asRoot(ui, 'POST', 'transform/decode/payments', { value: encoded, transformation: 'cards' })).data.decoded_value).toBe('4111-1111-1111-1111');
    await codec.getByLabel('Value', { exact: true }).fill(encoded);
    await codec.getByRole('button', { name: 'Decode', exact: true }).click();
    expect(await shown(page, 'Decoded value')).toBe('4111-1111-1111-1111');
    // A value the template does not match: the API's message next to the form.
    await codec.getByLabel('Value', { exact: true }).fill('not a card');
    await codec.getByRole('button', { name: 'Encode', exact: true }).click();
    await codec.getByRole('alert').getByText(/does not match the template/).waitFor();

    // Tokenization: a token that validates and decodes (through the API), and an unknown one that does not.
    await codec.getByLabel('Transformation', { exact: true }).selectOption('tokens');
    await codec.getByLabel('Value', { exact: true }).fill('patient 1234');
    await codec.getByRole('button', { name: 'Encode', exact: true }).click();
    const token = await shown(page, 'Encoded value');
    expect((await asRoot(ui, 'POST', 'transform/decode/payments', { value: token, transformation: 'tokens' })).data.decoded_value).toBe('patient 1234');
    await screenshot(ui, page, 'secrets-transform');
    await expectAccessible(page);
    await codec.getByLabel('Value', { exact: true }).fill(token);
    await codec.getByRole('button', { name: 'Validate', exact: true }).click();
    await codec.getByRole('status').getByText('The token is known and not expired.').waitFor();
    await codec.getByLabel('Value', { exact: true }).fill('unknownToken');
    await codec.getByRole('button', { name: 'Validate', exact: true }).click();
    await codec.getByRole('status').getByText('The token is unknown or expired.').waitFor();
    await codec.getByRole('button', { name: 'Decode', exact: true }).click();
    await codec.getByRole('alert').getByText(/not a valid token/).waitFor();

    // A supplied tweak: asked for, required by the API, the same one decodes.
    const tweak = Buffer.from('tweak07').toString('base64');
    await codec.getByLabel('Transformation', { exact: true }).selectOption('ids');
    await codec.getByLabel('Value', { exact: true }).fill('ord-0a1b2c3d');
    await codec.getByRole('button', { name: 'Encode', exact: true }).click();
    await codec.getByRole('alert').getByText(/tweak is required/).waitFor();
    await codec.getByLabel('Tweak', { exact: true }).fill(tweak);
    await codec.getByRole('button', { name: 'Encode', exact: true }).click();
    const id = await shown(page, 'Encoded value');
    expect(id).toMatch(/^ord-[0-9a-f]{8}$/);
    expect(id).not.toBe('ord-0a1b2c3d');
    expect((await asRoot(ui, 'POST', 'transform/decode/payments', { value: id, transformation: 'ids', tweak })).data.decoded_value).toBe('ord-0a1b2c3d');

    // Masking: no tweak, no decode.
    await codec.getByLabel('Transformation', { exact: true }).selectOption('ssn');
    expect(await codec.getByLabel('Tweak', { exact: true }).count()).toBe(0);
    expect(await codec.getByRole('button', { name: 'Decode', exact: true }).count()).toBe(0);
    await codec.getByLabel('Value', { exact: true }).fill('123-45-6789');
    await codec.getByRole('button', { name: 'Encode', exact: true }).click();
    await page.getByRole('figure', { name: 'Encoded value', exact: true }).getByText('###-##-####').waitFor();

    // Editing the role; a transformation a role uses cannot be deleted (the API's message), then can.
    await page.getByLabel('Role transformations', { exact: true }).fill('tokens');
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByText('Saved role payments.').waitFor();
    expect((await asRoot(ui, 'GET', 'transform/role/payments')).data).toEqual({ transformations: ['tokens'] });
    for (const t of ['ids', 'ssn']) await asRoot(ui, 'DELETE', `transform/transformation/${t}`);
    await page.goto(url('/transform/transform/transformations/tokens'));
    await page.getByRole('button', { name: 'Delete transformation' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('alert').getByText(/cannot be deleted: it is used by role "payments"/).waitFor();
    await page.goto(url('/transform/transform/transformations/cards'));
    await page.getByLabel('Allowed roles', { exact: true }).fill('payments, billing');
    await page.getByRole('button', { name: 'Save transformation' }).click();
    await page.getByText('Saved transformation cards.').waitFor();
    expect((await asRoot(ui, 'GET', 'transform/transformation/cards')).data.allowed_roles).toEqual(['payments', 'billing']);
    await page.getByRole('button', { name: 'Delete transformation' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Transform transform/' }).waitFor();
    expect((await ui.server.call('secrets', 'GET', '/v1/transform/transformation/cards', { headers: { 'x-secrets-token': ROOT_TOKEN } })).status).toBe(404);

    // The template, then the alphabet it used.
    await page.getByRole('button', { name: 'Delete template order-id' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('cell', { name: 'order-id', exact: true }).waitFor({ state: 'detached' });
    await page.getByRole('button', { name: 'Delete alphabet hex' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('cell', { name: 'hex', exact: true }).waitFor({ state: 'detached' });
    expect((await ui.server.call('secrets', 'GET', '/v1/transform/alphabet/hex', { headers: { 'x-secrets-token': ROOT_TOKEN } })).status).toBe(404);

    // The role, then the transformation it used.
    await page.getByRole('link', { name: 'payments', exact: true }).click();
    await page.getByRole('button', { name: 'Delete role' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('No roles yet.').waitFor();
    expect((await ui.server.call('secrets', 'GET', '/v1/transform/role/payments', { headers: { 'x-secrets-token': ROOT_TOKEN } })).status).toBe(404);
    await page.getByRole('link', { name: 'tokens', exact: true }).click();
    await page.getByRole('button', { name: 'Delete transformation' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('No transformations yet.').waitFor();

    for (const u of urls) expect(u).not.toContain(ROOT_TOKEN);
    // 400: the refused writes and operations; 404: the empty listings.
    expect(unexpectedProblems(ui, page, [400, 404])).toEqual([]);
  });

  test('a token without transform rights: the mount page and a role page say permission denied', async () => {
    const { token } = await tokenWith(ui, ['default']);
    const page = await ui.newPage();
    await signIn(ui, page, token);
    await page.goto(url('/transform/transform'));
    await page.getByText("Your token's policies do not allow listing roles.").waitFor();
    await page.getByText("Your token's policies do not allow listing transformations.").waitFor();
    await page.goto(url('/transform/transform/roles/payments'));
    await page.getByText("Your token's policies do not allow reading the role payments.").waitFor();
    expect(unexpectedProblems(ui, page, [403])).toEqual([]);
  });
});
