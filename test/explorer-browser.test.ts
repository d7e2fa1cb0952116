/**
 * The explorer in headless Debian Chromium (playwright-core), served by a real listening server on
 * the demo index: every page shows the numbers of the JSON routes it is built from (read from the
 * same server, never written here), the search form finds an agent id on two chains, the hostile
 * tag1 of the scenario shows as text and runs nothing, the pages need nothing outside the server,
 * break no CSP rule, read without JavaScript and fit a phone's width. Screenshots go to
 * test-results/ (gitignored). Skipped, with the reason, only when /usr/bin/chromium is absent.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { Demo } from '../src/demo/run-demo.js';
import { HOSTILE_TAG1 } from '../src/demo/scenario.js';
import { displayScore } from '../src/scoring/display.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import {
  ARTIFACTS,
  hasChromium,
  isolatedPage,
  launchChromium,
  skipReason,
  warnSkipped,
  type IsolatedPage,
} from './helpers/chromium.js';
import { openDemoCopy } from './helpers/demo.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const SKIP = skipReason('the explorer');
const TREASURY = '0x439b7ba02B05f82793BFF5034755E913d8578339';
const MOBILE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };

let demo: Demo;
let server: RunningServer;
let browser: Browser | null = null;
const opened: IsolatedPage[] = [];

beforeAll(async () => {
  if (!hasChromium) {
    warnSkipped('the explorer');
    return;
  }
  demo = await openDemoCopy();
  demo.config = { ...demo.config, treasuryAddress: TREASURY, port: 0 };
  server = await startHttpServer(
    { config: demo.config, db: demo.db, now: () => new Date() },
    { host: '127.0.0.1', port: 0 },
  );
  demo.config.baseUrl = server.url;
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await demo?.close();
});

async function api(path: string): Promise<any> {
  const res = await fetch(`${server.url}${path}`);
  expect(res.status, path).toBe(200);
  return res.json();
}

async function open(path: string, options?: Parameters<typeof isolatedPage>[2]): Promise<IsolatedPage> {
  const p = await isolatedPage(browser!, server.url, options);
  opened.push(p);
  const res = await p.page.goto(`${server.url}${path}`, { waitUntil: 'load' });
  expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
  return p;
}

/** Nothing left the server, nothing threw, no CSP violation, no dialog; then the page is closed. */
async function clean(p: IsolatedPage): Promise<void> {
  expect(p.external).toEqual([]);
  expect(p.errors).toEqual([]);
  expect(p.consoleErrors).toEqual([]);
  expect(p.dialogs).toEqual([]);
  expect(await p.page.locator('script').count()).toBe(0);
  await p.page.close();
}

async function shot(page: Page, name: string): Promise<void> {
  const file = join(ARTIFACTS, name);
  await page.screenshot({ path: file, fullPage: false });
  expect(statSync(file).size).toBeGreaterThan(10_000);
}

const text = async (page: Page, selector: string) => ((await page.textContent(selector)) ?? '').trim();
const cellTexts = (page: Page, rowSelector: string) =>
  page.$$eval(`${rowSelector} td`, (tds) => tds.map((td) => (td.textContent ?? '').trim()));

describe('the explorer in headless Chromium', () => {
  it('home: the totals, the chains, the leaderboard and the feed of the JSON routes, styled by the local sheet', async (ctx) => {
    if (!hasChromium) return ctx.skip(SKIP);
    const p = await open('/');
    const { page } = p;
    const health = await api('/health');
    expect(await text(page, '#total-agents')).toBe(String(health.agents));
    expect(await text(page, '#total-ratings')).toBe(String(health.feedback_entries));
    const chains = ((await api('/chains')) as any[]).filter((c) => c.enabled);
    expect(await page.locator('#chains tbody tr').count()).toBe(chains.length);
    for (const c of chains) {
      const cells = await cellTexts(page, `#chains tr[data-network="${c.network}"]`);
      expect(cells.slice(0, 5)).toEqual([
        c.network,
        String(c.agents),
        String(c.ratings),
        String(c.distinct_raters),
        String(c.scored_wallets),
      ]);
    }
    const lb = await api('/leaderboard');
    expect(await page.locator('#leaderboard tbody tr').count()).toBe(lb.rows.length);
    const first = await cellTexts(page, '#leaderboard tbody tr:first-child');
    expect(first[0]).toBe(String(lb.rows[0].rank));
    expect(first[2]).toBe(displayScore(lb.rows[0].shrunk_score));
    const served = await page.getAttribute(
      '#leaderboard tbody tr:first-child td.shrunk .score',
      'data-value',
    );
    expect(Number(served)).toBe(lb.rows[0].shrunk_score);
    expect(first[4]).toBe(String(lb.rows[0].distinct_raters));
    const feed = (await api('/feed?limit=10')) as any[];
    const txs = await page.$$eval('#feed tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-tx')));
    expect(txs).toEqual(feed.map((e) => e.tx_hash));
    // the stylesheet loaded under the CSP
    const bg = await page.$eval('header.site', (el) => getComputedStyle(el).backgroundColor);
    expect(bg).toBe('rgb(15, 42, 74)');
    for (const href of ['/docs', '/redoc', '/manifesto.html', '/pricing'])
      expect(await page.locator(`a[href="${href}"]`).count()).toBeGreaterThan(0);
    await shot(page, 'explorer-home.png');
    await clean(p);
  });

  it('search: the form finds an agent id on two chains, each with its own owner', async (ctx) => {
    if (!hasChromium) return ctx.skip(SKIP);
    const { agentId, owners } = demo.facts.sameAgentIdOnTwoChains;
    const p = await open('/');
    const { page } = p;
    await page.fill('#q', String(agentId));
    await Promise.all([page.waitForURL(/\/explore\/search\?q=/), page.click('form.search button')]);
    expect(new URL(page.url()).searchParams.get('q')).toBe(String(agentId));
    const result = await api(`/search/${agentId}`);
    expect(await page.locator('#matches tbody tr').count()).toBe(result.match_count);
    for (const o of owners) {
      const cells = await cellTexts(page, `#matches tr[data-network="${o.network}"]`);
      expect(cells[1]).toBe(o.network);
      expect(cells[3]).toBe(String(agentId));
      const href = await page.getAttribute(`#matches tr[data-network="${o.network}"] td.owner a`, 'href');
      expect(href?.toLowerCase()).toBe(`/explore/wallets/${o.owner.toLowerCase()}`);
    }
    expect(new Set(owners.map((o) => o.owner.toLowerCase())).size).toBe(owners.length);
    await shot(page, 'explorer-search.png');
    await clean(p);
  });

  it('wallet: the per-chain preview, the badge image and its snippet, the paid routes and example', async (ctx) => {
    if (!hasChromium) return ctx.skip(SKIP);
    const w = demo.facts.multiChainOwner.address;
    const p = await open(`/explore/wallets/${w}`);
    const { page } = p;
    const preview = await api(`/wallets/${w}/chains`);
    expect(await text(page, '#global-score')).toBe(displayScore(preview.global_score));
    expect(await text(page, '#wallet-reviews')).toBe(String(preview.total_reviews));
    expect(await text(page, '#wallet-raters')).toBe(String(preview.distinct_raters));
    for (const ch of preview.chains) {
      const cells = await cellTexts(page, `#wallet-chains tr[data-network="${ch.network}"]`);
      expect(cells).toEqual([
        ch.network,
        ch.agent_ids.join(', '),
        displayScore(ch.final_score),
        String(ch.total_reviews),
        String(ch.distinct_raters),
      ]);
    }
    const natural = await page.$eval('.badge img', (img) => (img as HTMLImageElement).naturalWidth);
    expect(natural).toBeGreaterThan(50);
    const snippet = await text(page, '#badge-snippet');
    expect(snippet).toBe(
      `<a href="${server.url}/explore/wallets/${preview.wallet}"><img src="${server.url}/badge/${preview.wallet}.svg" alt="ERC-8004 reputation of ${preview.wallet}"></a>`,
    );
    const pricing = await api('/pricing');
    const lookup = pricing.tiers.find((t: any) => t.id === 'wallet-lookup');
    expect(await text(page, '#paid-routes tr[data-tier="wallet-lookup"] td.price')).toBe(lookup.price_usd);
    expect(await text(page, '#paid-example')).toContain(`TREASURY_ADDRESS=${pricing.treasury}`);
    await shot(page, 'explorer-wallet.png');
    await clean(p);
  });

  it('chain: stats, top wallets, facets and the activity chart; the hostile tag1 is text and runs nothing', async (ctx) => {
    if (!hasChromium) return ctx.skip(SKIP);
    const network = demo.facts.hostileTag1.network;
    const p = await open(`/explore/chains/${network}`);
    const { page } = p;
    const d = await api(`/chains/${network}`);
    expect(await text(page, '#chain-agents')).toBe(String(d.stats.agents));
    expect(await text(page, '#chain-ratings')).toBe(String(d.stats.ratings));
    expect(await text(page, '#stat-revoked')).toBe(String(d.stats.revoked));
    expect(await page.locator('#top tbody tr').count()).toBe(d.top.length);
    expect(await page.locator('#facets tbody tr').count()).toBe(d.facets.length);
    const bars = await page.$$eval('svg.chart rect.bar', (rs) =>
      rs.map((r) => [r.getAttribute('data-day'), Number(r.getAttribute('data-ratings'))]),
    );
    expect(bars).toEqual(d.activity.map((a: any) => [a.day, a.ratings]));
    // the tallest bar is drawn taller than an empty day's
    const heights = await page.$$eval('svg.chart rect.bar', (rs) =>
      rs.map((r) => Number(r.getAttribute('height'))),
    );
    const busiest = d.activity.reduce(
      (m: number, a: any, i: number) => (a.ratings > d.activity[m].ratings ? i : m),
      0,
    );
    expect(heights[busiest]).toBeGreaterThan(Math.min(...heights));
    const facets = await page.$$eval('#facets td.facet', (tds) => tds.map((td) => td.textContent ?? ''));
    expect(facets).toContain(HOSTILE_TAG1);
    expect(
      await page.locator('#facets td.facet img, #facets td.facet b, #facets td.facet script').count(),
    ).toBe(0);
    await page.locator('#facets').scrollIntoViewIfNeeded();
    await shot(page, 'explorer-chain-facets.png');
    await page.locator('svg.chart').scrollIntoViewIfNeeded();
    await shot(page, 'explorer-chain.png');
    await clean(p);
  });

  it('errors: an unknown network is the HTML 404, a bad wallet the HTML 422, with the API message', async (ctx) => {
    if (!hasChromium) return ctx.skip(SKIP);
    const p = await isolatedPage(browser!, server.url);
    const r404 = await p.page.goto(`${server.url}/explore/chains/atlantis`);
    expect(r404?.status()).toBe(404);
    const apiNet = (await (await fetch(`${server.url}/chains/atlantis`)).json()) as any;
    expect(await text(p.page, '#error-message')).toBe(apiNet.detail.message);
    const r422 = await p.page.goto(
      `${server.url}/explore/wallets/${encodeURIComponent('<img src=x onerror=alert(1)>')}`,
    );
    expect(r422?.status()).toBe(422);
    expect(await text(p.page, 'h1')).toContain('422');
    // Chromium logs the two error statuses of the documents themselves, and nothing else
    expect(p.consoleErrors.splice(0)).toEqual([
      'Failed to load resource: the server responded with a status of 404 (Not Found)',
      'Failed to load resource: the server responded with a status of 422 (Unprocessable Entity)',
    ]);
    await clean(p);
  });

  it('readable without JavaScript, and fits a phone screen without horizontal scrolling', async (ctx) => {
    if (!hasChromium) return ctx.skip(SKIP);
    const noJs = await open('/', { viewport: { width: 1024, height: 800 }, javaScriptEnabled: false });
    const health = await api('/health');
    expect(await text(noJs.page, '#total-agents')).toBe(String(health.agents));
    await clean(noJs);
    for (const [path, name] of [
      ['/', 'explorer-home-mobile.png'],
      [`/explore/wallets/${demo.facts.multiChainOwner.address}`, 'explorer-wallet-mobile.png'],
      ['/explore/chains/base', 'explorer-chain-mobile.png'],
    ] as const) {
      const p = await open(path, MOBILE);
      const [scroll, client] = await p.page.evaluate(() => [
        document.documentElement.scrollWidth,
        document.documentElement.clientWidth,
      ]);
      expect(scroll, path).toBeLessThanOrEqual(client);
      await shot(p.page, name);
      await clean(p);
    }
  });
});
