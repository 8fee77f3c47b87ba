import type { Page } from 'playwright-core';
import type { UiSuite } from './browser';
import { ROOT_TOKEN } from '../helpers/server';

/** The secrets API as root, for setting up what a test clicks through. */
export async function asRoot(ui: UiSuite, method: string, path: string, body?: unknown): Promise<any> {
  const res = await ui.server.call('secrets', method, `/v1/${path}`, { body, headers: { 'x-secrets-token': ROOT_TOKEN } });
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${res.text}`);
  return res.body;
}

/** A token with these policies, made through the API. */
export async function tokenWith(ui: UiSuite, policies: string[], extra: Record<string, unknown> = {}): Promise<{ token: string; accessor: string }> {
  const res = await asRoot(ui, 'POST', 'auth/token/create', { policies, ...extra });
  return { token: res.auth.client_token, accessor: res.auth.accessor };
}

/**
 * Every URL the page asks for (documents, scripts, API calls), to check that no token ever
 * travels in one; also the URLs the address bar showed.
 */
export function recordUrls(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', (r) => urls.push(r.url()));
  page.on('framenavigated', (f) => urls.push(f.url()));
  return urls;
}

/** Signs in on the console's sign-in page with a token and waits for the overview. */
export async function signIn(ui: UiSuite, page: Page, token = ROOT_TOKEN): Promise<void> {
  await page.goto(`${ui.server.urls.secrets}/ui/sign-in`);
  await page.getByLabel('Token', { exact: true }).fill(token);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { level: 2, name: 'Your token' }).waitFor();
}

/** The console's problems but the failed responses a test provoked on purpose (a 400, a 403). */
export function unexpectedProblems(ui: UiSuite, page: Page, expectedStatuses: number[] = []): string[] {
  return ui.problems(page).filter((p) => !expectedStatuses.some((s) => p.includes(`status of ${s}`)));
}

/** A screenshot for docs/ui.md from the top of the page. */
export async function screenshot(ui: UiSuite, page: Page, name: string): Promise<void> {
  await page.evaluate(() => window.scrollTo(0, 0));
  await ui.screenshot(page, name);
}

/** Follows a link of the header: one of the Engines menu (PKI, Transit, ...) is shown by opening the menu first. */
export async function navTo(page: Page, name: string): Promise<void> {
  const nav = page.getByRole('navigation', { name: 'Main' });
  const link = nav.getByRole('link', { name, exact: true });
  if (!(await link.isVisible())) await nav.getByRole('button', { name: 'Engines menu' }).click();
  await link.click();
}
