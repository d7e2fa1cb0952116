/**
 * Headless Debian Chromium driven by playwright-core, for the tests that render pages in a real
 * browser (the API docs, the explorer). Nothing is downloaded: the browser is /usr/bin/chromium
 * (`apt-get install -y chromium`; .ci/run installs it). Without it the callers skip, loudly.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** Screenshots of the browser tests (gitignored). */
export const ARTIFACTS = join(process.cwd(), 'test-results');

/** The skip reason, naming what the test would have rendered. */
export function skipReason(what: string): string {
  return `${CHROMIUM} is absent: install Debian chromium (apt-get install -y chromium) to render ${what}`;
}

/** Says loudly that browser tests are skipped (a skipped test is easy to miss in a green run). */
export function warnSkipped(what: string): void {
  console.warn(`\n*** BROWSER TESTS SKIPPED: no browser found. ${skipReason(what)} ***\n`);
}

export async function launchChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface IsolatedPage {
  page: Page;
  /** Requests to anywhere but `origin` (aborted). */
  external: string[];
  /** Uncaught page errors. */
  errors: string[];
  /** Console messages of type error (a CSP violation is one). */
  consoleErrors: string[];
  /** Dialogs opened (alert, confirm, prompt): dismissed and recorded. */
  dialogs: string[];
}

/** A page whose requests outside `origin` are aborted and recorded. */
export async function isolatedPage(
  browser: Browser,
  origin: string,
  options: BrowserContextOptions = { viewport: { width: 1280, height: 1000 } },
): Promise<IsolatedPage> {
  const page = await browser.newPage(options);
  const external: string[] = [];
  const errors: string[] = [];
  const consoleErrors: string[] = [];
  const dialogs: string[] = [];
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith('data:') || url.startsWith('blob:'))
      return route.continue();
    external.push(url);
    return route.abort();
  });
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text());
  });
  page.on('dialog', (d) => {
    dialogs.push(`${d.type()}: ${d.message()}`);
    void d.dismiss();
  });
  return { page, external, errors, consoleErrors, dialogs };
}
