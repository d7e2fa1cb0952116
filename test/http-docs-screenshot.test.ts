/**
 * /docs (Swagger UI) and /redoc (Redoc) really render, in headless Debian Chromium driven by
 * playwright-core, from a real listening server, with every request outside the server aborted
 * and recorded (the pages must need nothing but local assets). Screenshots go to test-results/
 * (gitignored). Skipped, with the reason, only when /usr/bin/chromium is absent
 * (`apt-get install -y chromium`; CI installs it).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { loadConfig } from '../src/config.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import {
  ARTIFACTS as OUT,
  hasChromium,
  isolatedPage as isolated,
  launchChromium,
  skipReason,
  warnSkipped,
} from './helpers/chromium.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

const SKIP_REASON = skipReason('/docs and /redoc');

let t: TestDatabase;
let server: RunningServer;
let browser: Browser | null = null;

beforeAll(async () => {
  if (!hasChromium) {
    warnSkipped('/docs and /redoc');
    return;
  }
  t = await openTestDatabase();
  const config = loadConfig({ PORT: '0' });
  server = await startHttpServer({ config, db: t.db, now: () => new Date() }, { host: '127.0.0.1', port: 0 });
  config.baseUrl = server.url;
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await t?.close();
});

/** A page whose requests outside the server are aborted and recorded. */
async function isolatedPage(): Promise<{ page: Page; external: string[]; errors: string[] }> {
  return isolated(browser!, server.url);
}

describe('documentation pages in headless Chromium', () => {
  it('renders Swagger UI at /docs with the operations of the live schema', async (ctx) => {
    if (!hasChromium) return ctx.skip(SKIP_REASON);
    const { page, external, errors } = await isolatedPage();
    await page.goto(`${server.url}/docs`, { waitUntil: 'load' });
    await page.waitForSelector('.opblock', { timeout: 30_000 });
    await page.waitForSelector('.opblock-summary-path[data-path="/health"]', { timeout: 30_000 });
    const paths = await page.$$eval('.opblock-summary-path', (els) =>
      els.map((e) => e.getAttribute('data-path')),
    );
    for (const p of ['/health', '/search/{q}', '/wallets/{wallet}/chains', '/pricing', '/manifesto'])
      expect(paths).toContain(p);
    expect(await page.textContent('.info .title')).toContain('2.0.0');
    const file = join(OUT, 'docs-swagger-ui.png');
    await page.screenshot({ path: file, fullPage: false });
    expect(statSync(file).size).toBeGreaterThan(10_000);
    await page.locator('.opblock-summary-path[data-path="/search/{q}"]').scrollIntoViewIfNeeded();
    const ops = join(OUT, 'docs-swagger-ui-operations.png');
    await page.screenshot({ path: ops, fullPage: false });
    expect(statSync(ops).size).toBeGreaterThan(10_000);
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });

  it('renders Redoc at /redoc with the operations of the live schema', async (ctx) => {
    if (!hasChromium) return ctx.skip(SKIP_REASON);
    const { page, external, errors } = await isolatedPage();
    await page.goto(`${server.url}/redoc`, { waitUntil: 'load' });
    const health = '[data-section-id$="paths/~1health/get"]';
    await page.waitForSelector(`${health} h2`, { timeout: 30_000 });
    expect(await page.textContent(health)).toContain('/health');
    // Redoc names a section after its operationId when there is one, else after its path.
    const sections = await page.$$eval('[data-section-id]', (els) =>
      els.map((e) => e.getAttribute('data-section-id') ?? ''),
    );
    expect(sections.filter((s) => s.includes('/operation/') || s.includes('/paths/')).length).toBeGreaterThan(
      15,
    );
    for (const op of ['search', 'getWalletChains', 'getWalletExists', 'getPricing', 'getManifesto']) {
      expect(
        sections.some((s) => s.endsWith(`/operation/${op}`)),
        op,
      ).toBe(true);
    }
    expect(await page.textContent('.api-info h1')).toContain('2.0.0');
    const file = join(OUT, 'docs-redoc.png');
    await page.screenshot({ path: file, fullPage: false });
    expect(statSync(file).size).toBeGreaterThan(10_000);
    await page.locator('[data-section-id$="/operation/getWalletChains"]').scrollIntoViewIfNeeded();
    const ops = join(OUT, 'docs-redoc-operations.png');
    await page.screenshot({ path: ops, fullPage: false });
    expect(statSync(ops).size).toBeGreaterThan(10_000);
    expect(external).toEqual([]);
    expect(errors).toEqual([]);
    await page.close();
  });
});
