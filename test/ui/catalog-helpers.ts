import type { Page } from 'playwright-core';
import type { UiSuite } from './browser';
import { ROOT_TOKEN } from '../helpers/server';

/** The catalog console's test helpers: API calls with a token, signing in, what a page may log. */
export function catalogUi(ui: UiSuite) {
  const url = (path: string) => `${ui.server.urls.catalog}/ui${path}`;
  return {
    url,
    /** A catalog API request (root token unless another is given). */
    api: (method: string, path: string, body?: unknown, token = ROOT_TOKEN) =>
      ui.server.call('catalog', method, path, {
        ...(typeof body === 'string' ? { raw: body } : body === undefined ? {} : { body }),
        headers: { 'x-catalog-token': token },
      }),
    /** Signs in on the sign-in page and waits for the header to say who. */
    async signIn(page: Page, token: string, name: string): Promise<void> {
      await page.goto(url('/sign-in'));
      await page.getByLabel('Token').fill(token);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText(`Signed in as ${name}`).waitFor();
    },
    /** Console errors other than the browser's own line for an API answer of 400, 403 or 404 (the page shows them). */
    problems: (page: Page) => ui.problems(page).filter((p) => !/status of 40[034]/.test(p)),
  };
}

/** The root token's name in the header. */
export const ROOT_NAME = 'Initial Management Token';
