import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { describeUi, expectAccessible, uiSuite } from './browser';
import { configureRegistry } from '../../src/engine/registry/config';
import { formatBytes } from '../../src/ui/shared/format';
import { adminOwner, as, registry } from '../engine/registry/registry-helpers';
import { makeBoxFile } from '../helpers/box-file';
import { ROOT_TOKEN, userWithToken } from '../helpers/server';
import { tempDir } from '../helpers/storage';
import { until } from '../helpers/until';

/** The box catalog for owners: signing in (token, password, two-factor) and publishing a box from the browser. */
describeUi('box catalog: signing in and publishing', () => {
  const ui = uiSuite();
  const work = tempDir();
  const url = (path: string) => `${ui.server.urls.registry}${path}`;
  let carolToken: string;

  beforeAll(async () => {
    configureRegistry(ui.server.engine, { twoFactorCommand: `echo "$HANGAR_2FA_CODE" > '${join(work, 'code')}'` });
    carolToken = await userWithToken(ui.server, 'carol', 'carol password 1');
    await userWithToken(ui.server, 'dave', 'dave password 1');
    await adminOwner(ui.server, 'dave', { two_factor: 'sms', phone: '+1 555 010 9876' });
  });

  async function signInWithPassword(page: Page, login: string, password: string): Promise<void> {
    await page.goto(url('/-/sign-in'));
    await page.getByLabel('Username or e-mail', { exact: true }).fill(login);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  test('a wrong password shows the API error; the right one signs in', async () => {
    const page = await ui.newPage();
    await signInWithPassword(page, 'carol', 'wrong');
    await page.getByRole('alert').getByText('Invalid login or password').waitFor();
    await ui.screenshot(page, 'registry-sign-in');
    await expectAccessible(page);
    await page.getByLabel('Password', { exact: true }).fill('carol password 1');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('Signed in as carol').waitFor();
    // The token lives in sessionStorage only: never in the URL or a cookie.
    expect(page.url()).toBe(url('/'));
    expect(await page.context().cookies()).toEqual([]);
    const stored = await page.evaluate(() => sessionStorage.getItem('hangar.registry.session'));
    const { token } = JSON.parse(stored!);
    expect(JSON.parse(stored!)).toMatchObject({ name: 'carol', token: expect.stringMatching(/^hgr\./) });
    expect((await ui.server.call('registry', 'GET', '/api/v1/authenticate', { headers: as(token) })).status).toBe(200);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('link', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('hangar.registry.session'))).toBeNull();
    // The token the sign-in created is deleted with the sign-out.
    expect((await ui.server.call('registry', 'GET', '/api/v1/authenticate', { headers: as(token) })).status).toBe(401);
  });

  test('two-factor sign-in: the code is requested by SMS and entered', async () => {
    const page = await ui.newPage();
    await signInWithPassword(page, 'dave', 'dave password 1');
    await page.getByRole('button', { name: 'Send a code by SMS' }).click();
    await page.getByText('A code was sent to +* *** *** **76.').waitFor();
    const code = readFileSync(join(work, 'code'), 'utf8').trim();
    await page.getByLabel('Two-factor code', { exact: true }).fill(code);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByText('Signed in as dave').waitFor();
    expect(ui.problems(page).filter((p) => !/status of 40[16]/.test(p))).toEqual([]);
  });

  test('the root token signs in as the administrator', async () => {
    const page = await ui.newPage();
    await page.goto(url('/-/sign-in'));
    await page.getByLabel('Token', { exact: true }).fill(ROOT_TOKEN);
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await page.getByText('Signed in as administrator (root token)').waitFor();
  });

  test('an owner creates a box, a version and a provider, uploads the file with progress, releases and revokes', async () => {
    const page = await ui.newPage();
    await signInWithPassword(page, 'carol', 'carol password 1');
    await page.getByText('Signed in as carol').waitFor();

    await page.getByRole('link', { name: 'New box' }).click();
    await page.getByLabel('Name', { exact: true }).fill('bookworm');
    await expectAccessible(page);
    await page.getByLabel('Short description', { exact: true }).fill('Debian 12, minimal');
    await page.getByLabel('Description', { exact: true }).fill('A **minimal** Debian.');
    await page.getByRole('button', { name: 'Create box' }).click();
    await page.getByRole('heading', { level: 1, name: 'carol/bookworm private' }).waitFor();
    expect(page.url()).toBe(url('/carol/boxes/bookworm'));

    // Edit the box: public now.
    await page.getByText('Edit box').click();
    await page.getByLabel('Private (only the owner and its members see it)', { exact: true }).uncheck();
    await page.getByRole('button', { name: 'Save box' }).click();
    await page.getByRole('heading', { level: 1, name: 'carol/bookworm', exact: true }).waitFor();
    await expectAccessible(page);

    // A version, then a provider with the box file's checksum.
    const box = makeBoxFile(work, 'bookworm.box');
    await page.getByText('New version').click();
    await page.getByLabel('Version number', { exact: true }).fill('1.0.0');
    await page.getByLabel('Release notes', { exact: true }).fill('First *release*');
    await page.getByRole('button', { name: 'Create version' }).click();
    await page.getByRole('heading', { name: 'Version 1.0.0 unreleased' }).waitFor();
    await page.getByText('Edit release notes of 1.0.0').click();
    await page.getByLabel('Release notes of 1.0.0', { exact: true }).fill('First *release*, edited');
    await page.getByRole('button', { name: 'Save notes' }).click();
    // The notes are rendered as the API renders Markdown.
    await page.locator('.version .markdown em', { hasText: 'release' }).waitFor();
    await page.locator('.version .markdown', { hasText: ', edited' }).waitFor();
    await page.getByText('Add a provider to 1.0.0').click();
    await page.getByLabel('Provider', { exact: true }).fill('virtualbox');
    await page.getByLabel('Architecture', { exact: true }).fill('amd64');
    await page.getByLabel('Checksum type', { exact: true }).selectOption('sha256');
    await page.getByLabel('Checksum', { exact: true }).fill(box.sha256);
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByRole('cell', { name: 'not uploaded' }).waitFor();

    // Upload: the progress bar ends full and the provider shows its size.
    await page.getByLabel('Box file for virtualbox (amd64) of 1.0.0', { exact: true }).setInputFiles(box.path);
    await page.getByRole('button', { name: 'Upload' }).click();
    const size = statSync(box.path).size;
    const progress = page.getByRole('progressbar', { name: 'Upload progress of virtualbox (amd64) of 1.0.0' });
    await progress.waitFor();
    await page.getByRole('link', { name: 'Download' }).waitFor();
    expect(await progress.evaluate((el: HTMLProgressElement) => [el.value, el.max])).toEqual([size, size]);
    await page.getByRole('cell', { name: `sha256:${box.sha256}` }).waitFor();
    await page.getByRole('cell', { name: formatBytes(size), exact: true }).waitFor();

    await page.getByRole('button', { name: 'Release 1.0.0' }).click();
    await page.getByRole('heading', { name: 'Version 1.0.0 released' }).waitFor();
    await page.getByText(/vagrant box add carol\/bookworm --box-version 1\.0\.0/).first().waitFor();
    await page.getByRole('heading', { name: 'Version 1.0.0 released' }).scrollIntoViewIfNeeded();
    await ui.screenshot(page, 'registry-owner');
    await expectAccessible(page);

    // What the browser did, seen through the API by an anonymous reader: released, hosted, the same bytes.
    const read = await ui.server.call('registry', 'GET', '/api/v2/box/carol/bookworm');
    expect(read.body).toMatchObject({ private: false, short_description: 'Debian 12, minimal', current_version: { version: '1.0.0' } });
    expect(read.body.current_version.providers[0]).toMatchObject({ name: 'virtualbox', architecture: 'amd64', hosted: true, checksum: box.sha256 });
    // The page read the file's size with HEAD, which counts no download.
    expect(read.body.downloads).toBe(0);
    const file = await ui.server.call('registry', 'GET', new URL(read.body.current_version.providers[0].download_url).pathname);
    expect(file.status).toBe(200);

    await page.getByRole('button', { name: 'Revoke 1.0.0' }).click();
    await page.getByRole('heading', { name: 'Version 1.0.0 revoked' }).waitFor();
    expect((await ui.server.call('registry', 'GET', '/api/v1/box/carol/bookworm')).body.current_version).toBeNull();

    // A provider hosted elsewhere, then its URL edited.
    await page.getByText('Add a provider to 1.0.0').click();
    await page.getByLabel('Provider', { exact: true }).fill('libvirt');
    await page.getByLabel('Architecture', { exact: true }).fill('amd64');
    await page.getByLabel('External URL', { exact: true }).fill('https://boxes.example.com/a.box');
    await page.getByRole('button', { name: 'Add provider' }).click();
    await page.getByText('Edit provider libvirt (amd64) of 1.0.0').click();
    await page.getByLabel('External URL of libvirt (amd64) of 1.0.0', { exact: true }).fill('https://boxes.example.com/b.box');
    await page.getByRole('button', { name: 'Save provider' }).click();
    const libvirt = () => ui.server.call('registry', 'GET', '/api/v2/box/carol/bookworm/version/1.0.0/provider/libvirt/amd64', { headers: as(ROOT_TOKEN) });
    await until('the edited provider URL', async () => (await libvirt()).body.original_url === 'https://boxes.example.com/b.box');
    expect(ui.problems(page).filter((p) => !/status of 401/.test(p))).toEqual([]);
  });

  test('owner tools appear only to those who may write the box', async () => {
    await ui.server.call('registry', 'PUT', '/api/v1/box/carol/bookworm/version/1.0.0/release', { headers: as(ROOT_TOKEN) });
    const eve = await userWithToken(ui.server, 'eve');
    const page = await ui.newPage();
    await page.goto(url('/-/sign-in'));
    await page.getByLabel('Token', { exact: true }).fill(eve);
    await page.getByRole('button', { name: 'Sign in with token' }).click();
    await page.getByText('Signed in as eve').waitFor();
    await page.goto(url('/carol/boxes/bookworm'));
    await page.getByRole('heading', { name: 'Version 1.0.0 released' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Manage' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Release|Revoke|Upload/ }).count()).toBe(0);

    // A member of the owning organization gets them.
    const carol = registry(ui.server, carolToken);
    await ui.server.call('registry', 'POST', '/api/v1/admin/organizations', { body: { organization: { username: 'acme', owner: 'carol' } }, headers: as(ROOT_TOKEN) });
    await carol.publishedBox('acme/tools', '0.1.0');
    await carol.call('PUT', '/api/v1/organization/acme/members/eve', { member: { role: 'member' } });
    await page.goto(url('/acme/boxes/tools'));
    await page.getByRole('heading', { name: 'Manage' }).waitFor();
    await page.getByRole('button', { name: 'Revoke 0.1.0' }).waitFor();
  });
});
