import { verify } from 'node:crypto';
import type { Page } from 'playwright-core';
import { describeUi, expectAccessible, uiSuite } from './browser';
import { asRoot, navTo, recordUrls, screenshot, signIn, tokenWith, unexpectedProblems } from './secrets-helpers';
import { ROOT_TOKEN } from '../helpers/server';

/** The secrets console's transit pages: keys, their versions and configuration, and the operations, typed as text. */
describeUi('secrets console: transit', () => {
  const ui = uiSuite();
  const url = (path: string) => `${ui.server.urls.secrets}/ui${path}`;
  const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

  beforeAll(async () => {
    await asRoot(ui, 'POST', 'sys/mounts/transit', { type: 'transit' });
  });

  /** The text a CopyText of a form shows (a ciphertext, a signature). */
  const shown = async (page: Page, form: string, label: string) => {
    const code = page.getByRole('form', { name: form, exact: true }).getByRole('figure', { name: label }).locator('code');
    await code.waitFor();
    return (await code.textContent())!;
  };

  test('creates a key, encrypts and decrypts text, rotates it, raises the minimum decryption version, deletes it', async () => {
    const page = await ui.newPage();
    const urls = recordUrls(page);
    await signIn(ui, page);
    await navTo(page, 'Transit');
    await page.getByRole('heading', { level: 1, name: 'Transit' }).waitFor();
    await expectAccessible(page);
    await page.getByRole('link', { name: 'transit/' }).click();
    await page.getByRole('heading', { level: 1, name: 'Transit transit/' }).waitFor();
    await expectAccessible(page);
    await page.getByText('No keys yet.').waitFor();

    // A name of blanks is refused before any request (namedSubmit, which every create form uses).
    await page.getByLabel('Key name', { exact: true }).fill('   ');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('alert').getByText('name is required').waitFor();
    await page.getByText('No keys yet.').waitFor();

    // A bad rotation period: the API's message, no key.
    await page.getByLabel('Key name', { exact: true }).fill('orders');
    await page.getByLabel('Rotate every', { exact: true }).fill('10m');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('alert').getByText(/auto_rotate_period: must be 0 \(never\) or at least 1h/).waitFor();
    expect((await ui.server.call('secrets', 'GET', '/v1/transit/keys/orders', { headers: { 'x-secrets-token': ROOT_TOKEN } })).status).toBe(404);
    await page.getByLabel('Rotate every', { exact: true }).fill('');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { level: 1, name: 'Transit key orders' }).waitFor();
    expect((await asRoot(ui, 'GET', 'transit/keys/orders')).data).toMatchObject({ type: 'aes256-gcm96', latest_version: 1, derived: false });

    // Encrypt text: the ciphertext decrypts, through the API, to its UTF-8 bytes.
    const secret = 'card 4111 — crédit ✓';
    const encrypt = page.getByRole('form', { name: 'Encrypt', exact: true });
    await encrypt.getByLabel('Plaintext', { exact: true }).fill(secret);
    await encrypt.getByRole('button', { name: 'Encrypt', exact: true }).click();
    const ciphertext = await shown(page, 'Encrypt', 'Ciphertext');
    expect(ciphertext).toMatch(/^vault:v1:/);
    expect((await asRoot(ui, 'POST', 'transit/decrypt/orders', { ciphertext })).data.plaintext).toBe(b64(secret));

    // Decrypt what the API encrypted: shown as text.
    const fromApi = (await asRoot(ui, 'POST', 'transit/encrypt/orders', { plaintext: b64('from the API') })).data.ciphertext;
    const decrypt = page.getByRole('form', { name: 'Decrypt', exact: true });
    await decrypt.getByLabel('Ciphertext to decrypt', { exact: true }).fill(fromApi);
    await decrypt.getByRole('button', { name: 'Decrypt', exact: true }).click();
    expect(await shown(page, 'Decrypt', 'Decrypted plaintext')).toBe('from the API');
    // Bytes that are not UTF-8 text: shown as base64.
    const binary = Buffer.from([0xff, 0xfe, 0x00, 0x81]);
    await decrypt.getByLabel('Ciphertext to decrypt', { exact: true }).fill((await asRoot(ui, 'POST', 'transit/encrypt/orders', { plaintext: binary.toString('base64') })).data.ciphertext);
    await decrypt.getByRole('button', { name: 'Decrypt', exact: true }).click();
    expect(await shown(page, 'Decrypt', 'Decrypted plaintext (base64: not UTF-8 text)')).toBe(binary.toString('base64'));
    // Not a ciphertext: the API's message.
    await decrypt.getByLabel('Ciphertext to decrypt', { exact: true }).fill('not a ciphertext');
    await decrypt.getByRole('button', { name: 'Decrypt', exact: true }).click();
    await decrypt.getByRole('alert').getByText(/ciphertext/).waitFor();

    // Rotate: version 2 in the table and in the API; new ciphertexts use it.
    await page.getByRole('button', { name: 'Rotate key' }).click();
    await page.getByRole('table', { name: 'Versions' }).getByRole('cell', { name: '2', exact: true }).waitFor();
    expect((await asRoot(ui, 'GET', 'transit/keys/orders')).data.latest_version).toBe(2);
    await encrypt.getByRole('button', { name: 'Encrypt', exact: true }).click();
    await page.getByRole('form', { name: 'Encrypt', exact: true }).getByText(/^vault:v2:/).waitFor();
    await screenshot(ui, page, 'secrets-transit');
    await expectAccessible(page);

    // Version 1 no longer decrypts once the minimum is 2.
    const config = page.getByRole('form', { name: 'Configuration', exact: true });
    await config.getByLabel('Minimum decryption version', { exact: true }).fill('2');
    await config.getByRole('button', { name: 'Save configuration' }).click();
    await page.getByText('Saved the configuration of orders.').waitFor();
    expect((await asRoot(ui, 'GET', 'transit/keys/orders')).data).toMatchObject({ min_decryption_version: 2, deletion_allowed: false });
    await page.getByText('no decryption').waitFor();
    await decrypt.getByLabel('Ciphertext to decrypt', { exact: true }).fill(ciphertext);
    await decrypt.getByRole('button', { name: 'Decrypt', exact: true }).click();
    await decrypt.getByRole('alert').waitFor();

    // Deleting needs deletion_allowed: first the API's refusal, then the deletion.
    await page.getByRole('button', { name: 'Delete key' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('alert').getByText(/deletion is not allowed for this key/).waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    await config.getByLabel('Deletion allowed').check();
    await config.getByRole('button', { name: 'Save configuration' }).click();
    await page.getByText('Saved the configuration of orders.').waitFor();
    await page.getByRole('button', { name: 'Delete key' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Transit transit/' }).waitFor();
    await page.getByText('No keys yet.').waitFor();
    expect((await ui.server.call('secrets', 'GET', '/v1/transit/keys/orders', { headers: { 'x-secrets-token': ROOT_TOKEN } })).status).toBe(404);

    for (const u of urls) expect(u).not.toContain(ROOT_TOKEN);
    // 404: the empty key listing; 400: the refused rotation period, ciphertexts and deletion.
    expect(unexpectedProblems(ui, page, [400, 404])).toEqual([]);
  });

  test('signs text with an ECDSA key (verified with node:crypto), verifies signatures and HMACs', async () => {
    const page = await ui.newPage();
    await signIn(ui, page);
    await page.goto(url('/transit/transit'));
    await page.getByLabel('Key name', { exact: true }).fill('release');
    await page.getByLabel('Key type', { exact: true }).selectOption('ecdsa-p256');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByRole('heading', { level: 1, name: 'Transit key release' }).waitFor();
    // A signing key offers no encryption.
    expect(await page.getByRole('form', { name: 'Encrypt', exact: true }).count()).toBe(0);

    const message = 'release 1.2.3 ✓';
    const sign = page.getByRole('form', { name: 'Sign', exact: true });
    await sign.getByLabel('Input to sign', { exact: true }).fill(message);
    await sign.getByLabel('Hash algorithm', { exact: true }).selectOption('sha2-384');
    await sign.getByRole('button', { name: 'Sign', exact: true }).click();
    const signature = await shown(page, 'Sign', 'Signature');
    const [, version, der] = /^vault:v(\d+):(.+)$/.exec(signature)!;
    const publicKey = (await asRoot(ui, 'GET', 'transit/keys/release')).data.keys[version].public_key;
    expect(verify('sha384', Buffer.from(message), publicKey, Buffer.from(der, 'base64'))).toBe(true);

    const check = page.getByRole('form', { name: 'Verify a signature', exact: true });
    await check.getByLabel('Input the signature is of', { exact: true }).fill(message);
    await check.getByLabel('Signature to verify', { exact: true }).fill(signature);
    await check.getByLabel('Hash algorithm', { exact: true }).selectOption('sha2-384');
    await check.getByRole('button', { name: 'Verify', exact: true }).click();
    await check.getByText('The signature matches the input.').waitFor();
    await check.getByLabel('Input the signature is of', { exact: true }).fill(`${message}!`);
    await check.getByRole('button', { name: 'Verify', exact: true }).click();
    await check.getByText('The signature does not match the input.').waitFor();

    // HMAC: the same value as the API's for the same bytes; verified in the form.
    const hmac = page.getByRole('form', { name: 'HMAC', exact: true });
    await hmac.getByLabel('Input to authenticate', { exact: true }).fill(message);
    await hmac.getByRole('button', { name: 'Compute HMAC', exact: true }).click();
    const mac = await shown(page, 'HMAC', 'HMAC');
    expect(mac).toBe((await asRoot(ui, 'POST', 'transit/hmac/release', { input: b64(message) })).data.hmac);
    const checkMac = page.getByRole('form', { name: 'Verify an HMAC', exact: true });
    await checkMac.getByLabel('Input the HMAC is of', { exact: true }).fill(message);
    await checkMac.getByLabel('HMAC to verify', { exact: true }).fill(mac);
    await checkMac.getByRole('button', { name: 'Verify', exact: true }).click();
    await checkMac.getByText('The HMAC matches the input.').waitFor();
    // 404: the mount's key listing while it was empty.
    expect(unexpectedProblems(ui, page, [404])).toEqual([]);
  });

  test('a derived key: the forms ask for the context and send it as base64', async () => {
    await asRoot(ui, 'POST', 'transit/keys/tenants', { derived: true });
    const page = await ui.newPage();
    await signIn(ui, page);
    await page.goto(url('/transit/transit/keys/tenants'));
    const encrypt = page.getByRole('form', { name: 'Encrypt', exact: true });
    await encrypt.getByLabel('Plaintext', { exact: true }).fill('tenant data');
    await encrypt.getByLabel('Context', { exact: true }).fill('tenant-7');
    await encrypt.getByRole('button', { name: 'Encrypt', exact: true }).click();
    const ciphertext = await shown(page, 'Encrypt', 'Ciphertext');
    expect((await asRoot(ui, 'POST', 'transit/decrypt/tenants', { ciphertext, context: b64('tenant-7') })).data.plaintext).toBe(b64('tenant data'));
    const decrypt = page.getByRole('form', { name: 'Decrypt', exact: true });
    await decrypt.getByLabel('Ciphertext to decrypt', { exact: true }).fill(ciphertext);
    await decrypt.getByLabel('Context', { exact: true }).fill('tenant-8');
    await decrypt.getByRole('button', { name: 'Decrypt', exact: true }).click();
    await decrypt.getByRole('alert').waitFor();
    await decrypt.getByLabel('Context', { exact: true }).fill('tenant-7');
    await decrypt.getByRole('button', { name: 'Decrypt', exact: true }).click();
    expect(await shown(page, 'Decrypt', 'Decrypted plaintext')).toBe('tenant data');
    // 400: the wrong context.
    expect(unexpectedProblems(ui, page, [400])).toEqual([]);
  });

  test('a token that may only encrypt: the key page says permission denied, the listing too', async () => {
    await asRoot(ui, 'POST', 'transit/keys/limited', {});
    await asRoot(ui, 'PUT', 'sys/policies/acl/encrypt-only', { policy: 'path "transit/encrypt/limited" { capabilities = ["update"] }' });
    const { token } = await tokenWith(ui, ['encrypt-only']);
    const page = await ui.newPage();
    await signIn(ui, page, token);
    await page.goto(url('/transit/transit'));
    await page.getByText('Permission denied.').waitFor();
    await page.goto(url('/transit/transit/keys/limited'));
    await page.getByRole('heading', { level: 1, name: 'Transit key limited' }).waitFor();
    await page.getByRole('alert').getByText(/do not allow reading the key limited/).waitFor();
    expect(unexpectedProblems(ui, page, [403])).toEqual([]);
  });
});
