import type { Page } from 'playwright-core';
import { describeUi, expectAccessible, uiSuite } from './browser';
import { asRoot, recordUrls, screenshot, signIn, tokenWith, unexpectedProblems } from './secrets-helpers';
import { ROOT_TOKEN } from '../helpers/server';
import { haveSlapd, openldapAccount, Slapd, startSlapd } from '../helpers/slapd';
import { until } from '../helpers/until';

/** The secrets console's directory accounts pages against a private slapd: ldapwhoami judges every password. */
(haveSlapd() ? describeUi : describe.skip)('secrets console: directory accounts (ad)', () => {
  const ui = uiSuite();
  let ldap: Slapd;
  const people = () => `ou=people,${ldap.suffix}`;
  const uidDn = (uid: string) => `uid=${uid},${people()}`;
  const url = (path: string) => `${ui.server.urls.secrets}/ui${path}`;

  beforeAll(async () => {
    ldap = await startSlapd();
    for (const uid of ['svc-app', 'lend1', 'lend2']) await ldap.add(openldapAccount(ldap.suffix, uid, `initial-${uid}`));
    if (!(await asRoot(ui, 'GET', 'sys/mounts')).data['ad/']) await asRoot(ui, 'POST', 'sys/mounts/ad', { type: 'ad' });
  });
  afterAll(() => ldap?.stop());

  const figure = async (page: Page, label: string) => {
    const code = page.getByRole('figure', { name: label, exact: true }).locator('code');
    await code.waitFor();
    return (await code.textContent())!;
  };

  test('configures the directory (the password never shown), a role whose password binds, a library set lent and returned, rotate-root', async () => {
    const page = await ui.newPage();
    const urls = recordUrls(page);
    await signIn(ui, page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Engines' }).click();
    await page.getByRole('link', { name: 'ad/' }).click();
    await page.getByRole('heading', { level: 1, name: 'Directory accounts ad/' }).waitFor();
    await page.getByText('This mount is not configured yet.').waitFor();
    await expectAccessible(page);

    // A URL that is not LDAP: the API's message.
    await page.getByLabel('LDAP URL', { exact: true }).fill('http://127.0.0.1');
    await page.getByLabel('Schema', { exact: true }).selectOption('openldap');
    await page.getByLabel('Bind DN', { exact: true }).fill(ldap.managerDn);
    await page.getByLabel('Bind password', { exact: true }).fill(ldap.managerPw);
    await page.getByLabel('User DN', { exact: true }).fill(people());
    await page.getByLabel('Password TTL', { exact: true }).fill('1h');
    await page.getByRole('button', { name: 'Save configuration' }).click();
    await page.getByRole('alert').getByText(/must be an ldap:\/\/ or ldaps:\/\/ URL/).waitFor();
    await page.getByLabel('LDAP URL', { exact: true }).fill(ldap.url);
    await page.getByRole('button', { name: 'Save configuration' }).click();
    await page.getByText('Saved the configuration.').waitFor();
    expect((await asRoot(ui, 'GET', 'ad/config')).data).toMatchObject({ url: ldap.url, binddn: ldap.managerDn, userdn: people(), schema: 'openldap', ttl: 3600 });
    expect(await page.getByLabel('Bind password', { exact: true }).inputValue()).toBe('');
    expect(await page.content()).not.toContain(ldap.managerPw);

    // A role: an account the directory does not have is refused; then one that exists.
    await page.getByLabel('Role name', { exact: true }).fill('app');
    await page.getByLabel('Service account', { exact: true }).fill('nobody');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('alert').getByText(/nobody/).waitFor();
    await page.getByLabel('Service account', { exact: true }).fill('svc-app');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('heading', { level: 1, name: 'Directory role app' }).waitFor();
    expect((await asRoot(ui, 'GET', 'ad/roles/app')).data).toMatchObject({ service_account_name: 'svc-app', ttl: 3600 });

    // Get credentials: the new password binds, the first one no longer does.
    await page.getByRole('button', { name: 'Get credentials' }).click();
    expect(await figure(page, 'Username')).toBe('svc-app');
    const password = await figure(page, 'Current password');
    expect(await ldap.canBind(uidDn('svc-app'), password)).toBe(true);
    expect(await ldap.canBind(uidDn('svc-app'), 'initial-svc-app')).toBe(false);
    await screenshot(ui, page, 'secrets-ad');
    await expectAccessible(page);
    await page.getByLabel('Role password TTL', { exact: true }).fill('2h');
    await page.getByRole('button', { name: 'Save role' }).click();
    await page.getByText('Saved role app.').waitFor();
    expect((await asRoot(ui, 'GET', 'ad/roles/app')).data.ttl).toBe(7200);
    // Rotate the role's password now, after a confirmation: the password shown before stops binding.
    await page.getByRole('button', { name: 'Rotate password now' }).click();
    await page.getByRole('button', { name: 'Rotate', exact: true }).click();
    await until('the rotated-away password to stop binding', async () => !(await ldap.canBind(uidDn('svc-app'), password)));
    const rotated = (await asRoot(ui, 'GET', 'ad/creds/app')).data;
    expect(rotated.last_password).toBe(password);
    expect(await ldap.canBind(uidDn('svc-app'), rotated.current_password)).toBe(true);

    // A library set: check out an account (its password binds), check it in (the password changes).
    await page.getByRole('link', { name: 'ad/' }).click();
    await page.getByLabel('Set name', { exact: true }).fill('ops');
    await page.getByLabel('Service accounts', { exact: true }).fill('lend1, lend2');
    await page.getByLabel('Check-out TTL', { exact: true }).fill('1h');
    await page.getByRole('button', { name: 'Create library set' }).click();
    await page.getByRole('heading', { level: 1, name: 'Library set ops' }).waitFor();
    expect((await asRoot(ui, 'GET', 'ad/library/ops')).data).toMatchObject({ service_account_names: ['lend1', 'lend2'], ttl: 3600 });
    await page.getByRole('button', { name: 'Check out', exact: true }).click();
    const account = await figure(page, 'Account');
    const lent = await figure(page, 'Password');
    expect(await ldap.canBind(uidDn(account), lent)).toBe(true);
    const lease = (await page.getByRole('definition').filter({ hasText: 'ad/library/ops/check-out/' }).textContent())!.trim();
    expect((await asRoot(ui, 'PUT', 'sys/leases/lookup', { lease_id: lease })).data.id).toBe(lease);
    const row = page.getByRole('row').filter({ has: page.getByRole('cell', { name: account, exact: true }) });
    await row.getByText('checked out').waitFor();
    await expectAccessible(page);
    expect((await asRoot(ui, 'GET', 'ad/library/ops/status')).data[account].available).toBe(false);
    await row.getByRole('button', { name: `Check in ${account}`, exact: true }).click();
    await row.getByText('available').waitFor();
    expect((await asRoot(ui, 'GET', 'ad/library/ops/status')).data[account].available).toBe(true);
    expect(await ldap.canBind(uidDn(account), lent)).toBe(false);

    // An account another token borrowed: a plain check-in is refused (the API's message), a forced one is not.
    const { token: other } = await tokenWith(ui, ['root']);
    const borrowed = (await ui.server.call('secrets', 'POST', '/v1/ad/library/ops/check-out', { body: {}, headers: { 'x-secrets-token': other } })).body.data;
    await page.reload();
    const theirs = page.getByRole('row').filter({ has: page.getByRole('cell', { name: borrowed.service_account_name, exact: true }) });
    await theirs.getByRole('button', { name: `Check in ${borrowed.service_account_name}`, exact: true }).click();
    await theirs.getByRole('alert').getByText(/wasn't checked out by the caller/).waitFor();
    await theirs.getByRole('button', { name: `Force check in ${borrowed.service_account_name}` }).click();
    await theirs.getByRole('button', { name: 'Force check in', exact: true }).click();
    await theirs.getByText('available').waitFor();
    expect(await ldap.canBind(uidDn(borrowed.service_account_name), borrowed.password)).toBe(false);

    // Rotate root, after a confirmation: the old bind password no longer binds; the engine still works.
    await page.getByRole('link', { name: 'ad/' }).click();
    await page.getByRole('button', { name: 'Rotate root password' }).click();
    await page.getByRole('button', { name: 'Rotate', exact: true }).click();
    await page.getByText('Rotated the root password.').waitFor();
    expect(await ldap.canBind(ldap.managerDn, ldap.managerPw)).toBe(false);
    const next = (await asRoot(ui, 'POST', 'ad/library/ops/check-out', {})).data;
    expect(await ldap.canBind(uidDn(next.service_account_name), next.password)).toBe(true);

    // A set with an account out cannot be deleted (the API's message); once it is in, it can. Then the role.
    await page.getByRole('link', { name: 'ops', exact: true }).click();
    await page.getByRole('button', { name: 'Delete library set' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('alert').getByText(/currently checked out/).waitFor();
    await asRoot(ui, 'POST', 'ad/library/ops/check-in', {});
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('No library sets yet.').waitFor();
    await page.getByRole('link', { name: 'app', exact: true }).click();
    await page.getByRole('button', { name: 'Delete role' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByText('No roles yet.').waitFor();
    expect((await ui.server.call('secrets', 'GET', '/v1/ad/roles/app', { headers: { 'x-secrets-token': ROOT_TOKEN } })).status).toBe(404);

    for (const u of urls) expect(u).not.toContain(ROOT_TOKEN);
    // 400: the refused writes; 404: the configuration and listings before there were any.
    expect(unexpectedProblems(ui, page, [400, 404])).toEqual([]);
  });

  test('a token without directory rights: the mount page and a role page say permission denied', async () => {
    const { token } = await tokenWith(ui, ['default']);
    const page = await ui.newPage();
    await signIn(ui, page, token);
    await page.goto(url('/ad/ad'));
    await page.getByText("Your token's policies do not allow reading the configuration.").waitFor();
    await page.getByText("Your token's policies do not allow listing library sets.").waitFor();
    await page.goto(url('/ad/ad/roles/app'));
    await page.getByText("Your token's policies do not allow reading the role app.").waitFor();
    expect(unexpectedProblems(ui, page, [403])).toEqual([]);
  });
});
