import { createHash, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Browser, chromium } from 'playwright-core';
import { describeUi, expectAccessible } from './browser';
import { makeDevTls } from '../../src/engine/http/dev-tls';
import { loadTls } from '../../src/engine/http/tls';
import { CHROMIUM_ARGS, chromiumPath } from '../engine/secrets/oidc-provider';
import { ROOT_TOKEN, startTestServer, TestServer } from '../helpers/server';
import { tempDir } from '../helpers/storage';

/**
 * Chromium loads the web UI over https (the --dev-tls certificates). Chromium on Linux trusts what
 * its NSS database holds, which only NSS's certutil writes (not installed here); it is given the
 * server key's SPKI hash instead (`--ignore-certificate-errors-spki-list`), which trusts that one key,
 * not any certificate. A Chromium without it refuses the page.
 */
describeUi('the web UI over https', () => {
  let server: TestServer;
  let trusting: Browser;
  let untrusting: Browser;

  beforeAll(async () => {
    const files = await makeDevTls(tempDir());
    const tls = loadTls({ cert: { path: files.cert, flag: '--tls-cert-file' }, key: { path: files.key, flag: '--tls-key-file' }, minVersion: 'tls12', clientAuth: 'none' });
    server = await startTestServer('sqlite', { tls: { registry: tls, secrets: tls, catalog: tls } });
    const spki = createPublicKey(readFileSync(files.key)).export({ type: 'spki', format: 'der' });
    const pin = createHash('sha256').update(spki).digest('base64');
    [trusting, untrusting] = await Promise.all([
      chromium.launch({ executablePath: chromiumPath(), args: [...CHROMIUM_ARGS, `--ignore-certificate-errors-spki-list=${pin}`] }),
      chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([trusting?.close(), untrusting?.close()]);
    await server?.close();
  });

  test('the secrets console signs in over https and the box catalog renders', async () => {
    const page = await (await trusting.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${server.urls.secrets}/ui/sign-in`);
    expect(page.url()).toMatch(/^https:/);
    await page.getByLabel('Token', { exact: true }).fill(ROOT_TOKEN);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('Signed in as root').waitFor();
    await expectAccessible(page);
    await page.goto(`${server.urls.registry}/`);
    await page.getByLabel('Search', { exact: true }).waitFor();
    await expectAccessible(page);
    expect(errors).toEqual([]);
  });

  test('a Chromium that does not trust the key refuses the page', async () => {
    const page = await (await untrusting.newContext()).newPage();
    await expect(page.goto(`${server.urls.registry}/`)).rejects.toThrow(/ERR_CERT_AUTHORITY_INVALID/);
  });
});
