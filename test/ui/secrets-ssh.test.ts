import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeUi, expectAccessible, uiSuite } from './browser';
import { asRoot, recordUrls, screenshot, signIn, tokenWith, unexpectedProblems } from './secrets-helpers';
import { ROOT_TOKEN } from '../helpers/server';

/** The secrets console's SSH pages: a CA, a role, a pasted public key signed; `ssh-keygen -L` reads the certificate. */
describeUi('secrets console: SSH', () => {
  const ui = uiSuite();
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'hangar-ui-ssh-'));
    execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', 'deploy@laptop', '-f', join(dir, 'id_ed25519')]);
    if (!(await asRoot(ui, 'GET', 'sys/mounts')).data['ssh/']) await asRoot(ui, 'POST', 'sys/mounts/ssh', { type: 'ssh' });
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test('generates a CA, creates a role, signs a pasted public key and downloads the certificate', async () => {
    const page = await ui.newPage();
    const urls = recordUrls(page);
    await signIn(ui, page);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Engines' }).click();
    await page.getByRole('link', { name: 'ssh/' }).click();
    await page.getByRole('heading', { level: 1, name: 'SSH ssh/' }).waitFor();
    await expectAccessible(page);
    await page.getByText('This mount has no CA yet.').waitFor();
    await page.getByRole('button', { name: 'Generate CA' }).click();
    await page.getByRole('button', { name: 'Copy CA public key' }).waitFor();
    const caDownload = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download CA public key' }).click();
    const caPath = (await (await caDownload).path())!;
    const caPub = readFileSync(caPath, 'utf8').trim();
    expect(caPub).toBe((await asRoot(ui, 'GET', 'ssh/config/ca')).data.public_key.trim());
    expect(caPub).toMatch(/^ssh-ed25519 /);

    await page.getByLabel('Role name', { exact: true }).fill('users');
    await page.getByLabel('Allowed users', { exact: true }).fill('deploy, ops');
    await page.getByLabel('Default user', { exact: true }).fill('deploy');
    await page.getByRole('button', { name: 'Create role' }).click();
    await page.getByRole('heading', { level: 1, name: 'SSH role users' }).waitFor();
    await expectAccessible(page);
    expect((await asRoot(ui, 'GET', 'ssh/roles/users')).data).toMatchObject({ key_type: 'ca', allowed_users: 'deploy,ops', default_user: 'deploy', ttl: 3600 });

    // Editing the role: the form shows what the API read; the save is the same write.
    const edit = page.getByRole('form', { name: 'Edit' });
    expect(await edit.getByLabel('Allowed users', { exact: true }).inputValue()).toBe('deploy,ops');
    expect(await edit.getByLabel('Default user', { exact: true }).inputValue()).toBe('deploy');
    expect(await edit.getByLabel('TTL', { exact: true }).inputValue()).toBe('1h');
    expect(await edit.getByLabel('Maximum TTL', { exact: true }).inputValue()).toBe('8h');
    await edit.getByLabel('Allowed users', { exact: true }).fill('deploy, ops, ci');
    await edit.getByLabel('TTL', { exact: true }).fill('2h');
    await edit.getByLabel('Also host certificates').check();
    await edit.getByRole('button', { name: 'Save role' }).click();
    await page.getByText('Saved role users.').waitFor();
    expect((await asRoot(ui, 'GET', 'ssh/roles/users')).data).toMatchObject({
      key_type: 'ca',
      allowed_users: 'deploy,ops,ci',
      default_user: 'deploy',
      ttl: 7200,
      max_ttl: 28800,
      allow_user_certificates: true,
      allow_host_certificates: true,
      default_extensions: { 'permit-pty': '' },
    });

    // A principal the role does not allow: the API's message.
    await page.getByLabel('Public key', { exact: true }).fill(readFileSync(join(dir, 'id_ed25519.pub'), 'utf8'));
    await page.getByLabel('Principals', { exact: true }).fill('root');
    await page.getByRole('button', { name: 'Sign public key' }).click();
    await page.getByRole('alert').getByText(/root/).waitFor();
    await page.getByLabel('Principals', { exact: true }).fill('deploy, ops');
    await page.getByLabel('Certificate TTL', { exact: true }).fill('30m');
    await page.getByRole('button', { name: 'Sign public key' }).click();
    await page.getByText(/Signed certificate [0-9a-f]+/).waitFor();
    await screenshot(ui, page, 'secrets-ssh');
    await expectAccessible(page);
    await page.getByText('Save it next to the private key as id_ed25519-cert.pub.').waitFor();
    const done = page.waitForEvent('download');
    await page.getByRole('link', { name: 'Download certificate' }).click();
    expect((await done).suggestedFilename()).toBe('id_ed25519-cert.pub');
    const cert = join(dir, 'id_ed25519-cert.pub');
    writeFileSync(cert, readFileSync((await (await done).path())!));
    const listing = execFileSync('ssh-keygen', ['-L', '-f', cert], { encoding: 'utf8' });
    const caFingerprint = execFileSync('ssh-keygen', ['-l', '-f', caPath], { encoding: 'utf8' }).split(' ')[1];
    expect(listing).toContain('ssh-ed25519-cert-v01@openssh.com user certificate');
    expect(listing).toContain(`Signing CA: ED25519 ${caFingerprint}`);
    expect(listing).toMatch(/Principals:\s+deploy\s+ops/);
    expect(listing).toContain('permit-pty');

    for (const u of urls) expect(u).not.toContain(ROOT_TOKEN);
    // 400: the CA read before there was one, the refused principal; 404: the empty role listing.
    expect(unexpectedProblems(ui, page, [400, 404])).toEqual([]);
  });

  test('a token without SSH rights: the mount page and the role page say permission denied', async () => {
    const { token } = await tokenWith(ui, ['default']);
    const page = await ui.newPage();
    await signIn(ui, page, token);
    await page.goto(`${ui.server.urls.secrets}/ui/ssh/ssh`);
    await page.getByText("Your token's policies do not allow reading the CA.").waitFor();
    await page.getByText("Your token's policies do not allow listing roles.").waitFor();
    await page.goto(`${ui.server.urls.secrets}/ui/ssh/ssh/roles/users`);
    await page.getByText("Your token's policies do not allow reading the role users.").waitFor();
    expect(unexpectedProblems(ui, page, [403])).toEqual([]);
  });
});
