import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, chromium, Page } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../engine/secrets/oidc-provider';
import { startTestServer, TestServer } from '../helpers/server';

/**
 * The web UI's end-to-end suites: Debian's Chromium driven by playwright-core (no browser download)
 * against a real server. Without Chromium the suites are skipped with a message; under CI=true
 * `chromiumPath` throws instead.
 */
const executablePath = chromiumPath();

/** `describe` when Chromium is there, else `describe.skip` (after saying why). */
export function describeUi(name: string, fn: () => void): void {
  if (!executablePath) {
    process.stderr.write(`\n${name}: Chromium not found (/usr/bin/chromium or HANGAR_CHROMIUM): skipped (CI fails instead)\n`);
    describe.skip(name, fn);
    return;
  }
  describe(name, fn);
}

/**
 * Where screenshots are written: docs/ui (shown by docs/ui.md) under `npm run ui:screenshots`
 * (HANGAR_UI_SCREENSHOTS=docs/ui), else .cache/ui-screenshots, so that `npm test` leaves the tree as it is.
 */
const ROOT = join(__dirname, '..', '..');
export const SCREENSHOT_DIR = join(ROOT, process.env.HANGAR_UI_SCREENSHOTS ?? join('.cache', 'ui-screenshots'));

export interface UiSuite {
  /** The server (all three listeners, root token ROOT_TOKEN). */
  readonly server: TestServer;
  readonly browser: Browser;
  /**
   * A page in a fresh browser context (its own sessionStorage: nobody signed in), 1280x800.
   * Console errors and failed requests (a CSP violation is one) are collected: see `problems`.
   */
  newPage(): Promise<Page>;
  /** The console errors of a page opened with newPage: a test expects none. */
  problems(page: Page): readonly string[];
  /** Saves a PNG of the page to SCREENSHOT_DIR/<name>.png (docs/ui under `npm run ui:screenshots`). */
  screenshot(page: Page, name: string): Promise<void>;
}

/**
 * Starts Chromium and a server once for the enclosing describe (beforeAll/afterAll) and returns
 * the handle the tests use. Call it at the top of a `describeUi` body.
 */
export function uiSuite(options: { kind?: 'sqlite' | 'postgres' } = {}): UiSuite {
  let server: TestServer | undefined;
  let browser: Browser | undefined;
  const problems = new WeakMap<Page, string[]>();

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startTestServer(options.kind ?? 'sqlite'),
      chromium.launch({ executablePath, args: CHROMIUM_ARGS }),
    ]);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  return {
    get server() {
      if (!server) throw new Error('the server is not started yet (use it inside a test)');
      return server;
    },
    get browser() {
      if (!browser) throw new Error('the browser is not started yet (use it inside a test)');
      return browser;
    },
    async newPage() {
      const context = await this.browser.newContext({ viewport: { width: 1280, height: 800 } });
      const page = await context.newPage();
      const seen: string[] = [];
      problems.set(page, seen);
      page.on('console', (msg) => {
        if (msg.type() === 'error') seen.push(msg.text());
      });
      page.on('pageerror', (err) => seen.push(err.message));
      return page;
    },
    problems(page) {
      return problems.get(page) ?? [];
    },
    async screenshot(page, name) {
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), type: 'png' });
    },
  };
}

/**
 * Waits until the focused element's text is `text`: components move the focus in an effect, which
 * runs after the render the click caused, so an immediate look may still see the old focus.
 */
export async function expectFocus(page: Page, text: string): Promise<void> {
  try {
    await page.waitForFunction((t) => document.activeElement?.textContent === t, text, { timeout: 10_000 });
  } catch {
    const focused = await page.evaluate(() => document.activeElement?.textContent?.slice(0, 80));
    throw new Error(`the focus is on "${focused}", not on "${text}"`);
  }
}

/** axe-core's browser build, evaluated in a page by expectAccessible. */
let axeSource: string | undefined;

/** The axe-core rules expectAccessible runs: WCAG 2.0 and 2.1, levels A and AA (color-contrast among them). */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/**
 * Checks the page as it is now with axe-core's WCAG 2 A/AA rules and fails with the rule, the
 * element and the message of every violation. axe is evaluated through the DevTools protocol
 * (playwright's evaluate), which the pages' Content-Security-Policy does not govern: the served CSP
 * stays as strict as users get it. Call it once a page has rendered. `include` limits the check to
 * the elements a selector matches (an opened menu, whose page was checked before it opened: the
 * page's targets under the menu are not what the user is working with then).
 */
export async function expectAccessible(page: Page, options: { include?: string } = {}): Promise<void> {
  axeSource ??= readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const violations = await page.evaluate(async ({ tags, include }) => {
    const axe = (window as unknown as { axe: { run: (context: Document | object, options: object) => Promise<any> } }).axe;
    const result = await axe.run(include ? { include: [include] } : document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
    return (result.violations as any[]).flatMap((v) =>
      (v.nodes as any[]).map((n) => `${v.id}: ${(n.target as string[]).join(' ')} ${String(n.html).slice(0, 160)}\n    ${n.failureSummary ?? v.help}`),
    );
  }, { tags: AXE_TAGS, include: options.include });
  if (violations.length > 0) throw new Error(`${violations.length} accessibility violation(s) on ${page.url()}:\n${violations.join('\n')}`);
}
