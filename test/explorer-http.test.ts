/**
 * The explorer over plain HTTP (no browser), on the demo index: the HTML pages carry the numbers
 * of the JSON routes they are built from, the Content-Security-Policy, every on-chain string as
 * escaped text, the API's error meanings as HTML pages, and stay out of the OpenAPI document.
 * test/explorer-browser.test.ts renders the same pages in Chromium.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/doors/http/app.js';
import { InProcessRateLimitStore, TokenBucketLimiter } from '../src/doors/http/rate-limit.js';
import { BUYER_KEY_PLACEHOLDER, EXPLORER_CSP, EXPLORER_PATH } from '../src/doors/explorer/routes.js';
import { escapeHtml } from '../src/doors/explorer/html.js';
import type { Demo } from '../src/demo/run-demo.js';
import { servingBanner } from '../src/demo/run-demo.js';
import { HOSTILE_TAG1 } from '../src/demo/scenario.js';
import { matchTier } from '../src/payments/pricing.js';
import { displayScore } from '../src/scoring/display.js';
import { startHttpServer } from '../src/server.js';
import { openDemoCopy } from './helpers/demo.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const NOW = new Date('2026-11-01T12:00:00Z');
const TREASURY = '0x439b7ba02B05f82793BFF5034755E913d8578339';

let demo: Demo;
let app: ReturnType<typeof createApp>;

const page = async (path: string, init?: RequestInit) => {
  const res = await app.request(path, init);
  return { res, status: res.status, html: await res.text() };
};
const json = async (path: string) => {
  const res = await app.request(path);
  expect(res.status, path).toBe(200);
  return (await res.json()) as any;
};
/** The text of the element with that id (the pages put every headline figure in one). */
const byId = (html: string, id: string): string | undefined =>
  new RegExp(`id="${id}"[^>]*>([^<]*)<`).exec(html)?.[1];
/** The cells of the table row carrying `attr="value"`, tags stripped. */
const rowCells = (html: string, attr: string, value: string): string[] => {
  const row = new RegExp(`<tr ${attr}="${escapeRe(escapeHtml(value))}"[^>]*>(.*?)</tr>`, 's').exec(html)?.[1];
  if (row === undefined) return [];
  return [...row.matchAll(/<td[^>]*>(.*?)<\/td>/gs)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim());
};
function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function expectSiteHeaders(res: Response): void {
  expect(res.headers.get('content-type')).toMatch(/^text\/html; charset=utf-8/i);
  const csp = res.headers.get('content-security-policy') ?? '';
  expect(csp).toBe(EXPLORER_CSP);
  for (const d of [
    "default-src 'self'",
    "script-src 'self'",
    "img-src 'self' data:",
    "style-src 'self'",
    "frame-ancestors 'none'",
  ]) {
    expect(csp).toContain(d);
  }
  expect(csp).not.toContain('unsafe-inline');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
}

beforeAll(async () => {
  demo = await openDemoCopy();
  demo.config = { ...demo.config, treasuryAddress: TREASURY, baseUrl: 'http://explorer.test' };
  app = createApp({ config: demo.config, db: demo.db, now: () => NOW });
}, 300_000);
afterAll(async () => {
  await demo?.close();
});

describe('explorer pages over plain HTTP', () => {
  it('/ is the home page: the totals, every scanned chain, the leaderboard and the feed of the JSON routes', async () => {
    const { res, status, html } = await page('/');
    expect(status).toBe(200);
    expectSiteHeaders(res);
    expect(res.headers.get('vary')).toMatch(/accept/i);
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('<meta name="viewport"');
    expect(html).toContain('href="/explore/assets/explorer.css"');
    const health = await json('/health');
    expect(byId(html, 'total-agents')).toBe(String(health.agents));
    expect(byId(html, 'total-ratings')).toBe(String(health.feedback_entries));
    const chains = (await json('/chains')) as any[];
    const scanned = chains.filter((c) => c.enabled);
    expect(scanned.map((c) => c.network).sort()).toEqual(['arbitrum', 'base', 'optimism']);
    for (const c of scanned) {
      const cells = rowCells(html, 'data-network', c.network);
      expect(cells.slice(0, 5), c.network).toEqual([
        c.network,
        String(c.agents),
        String(c.ratings),
        String(c.distinct_raters),
        String(c.scored_wallets),
      ]);
      expect(cells[6]).toBe(c.stale_hours === null ? 'never synced' : String(c.stale_hours));
    }
    const lb = await json('/leaderboard');
    expect(lb.rows.length).toBeGreaterThan(5);
    const rows = [...html.matchAll(/<tr data-wallet="/g)];
    expect(rows.length).toBe(lb.rows.length);
    for (const r of lb.rows.slice(0, 5)) {
      const cells = rowCells(html, 'data-wallet', r.wallet);
      expect(cells[0]).toBe(String(r.rank));
      // people see the display convention; the served number is in data-value
      expect(cells[2]).toBe(displayScore(r.shrunk_score) ?? 'unrated');
      expect(html).toContain(`data-value="${r.shrunk_score}">${displayScore(r.shrunk_score)}<`);
      expect(cells[4]).toBe(String(r.distinct_raters));
    }
    const feed = (await json('/feed?limit=10')) as any[];
    expect(feed.length).toBe(10);
    expect([...html.matchAll(/<tr data-tx="/g)].length).toBe(feed.length);
    for (const e of feed) expect(html).toContain(`data-tx="${e.tx_hash}" data-log="${e.log_index}"`);
    for (const link of ['/docs', '/redoc', '/manifesto.html', '/pricing'])
      expect(html).toContain(`href="${link}"`);
    expect(html).toContain('action="/explore/search"');
  });

  it('/ keeps the JSON 404 for a client that asks for JSON only; /v1 is the same home page', async () => {
    const { res, status, html } = await page('/', { headers: { accept: 'application/json' } });
    expect(status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(JSON.parse(html)).toEqual({ detail: 'Not Found' });
    const browser = await page('/', { headers: { accept: 'text/html,application/json;q=0.9,*/*;q=0.8' } });
    expect(browser.status).toBe(200);
    expect(browser.html).toContain('id="total-agents"');
    expect((await page('/v1')).html).toContain('id="total-agents"');
  });

  it('the search page renders /search: an agent id found on two chains, with different owners', async () => {
    const { agentId, owners } = demo.facts.sameAgentIdOnTwoChains;
    const { res, status, html } = await page(`/explore/search?q=${agentId}`);
    expect(status).toBe(200);
    expectSiteHeaders(res);
    const api = await json(`/search/${agentId}`);
    expect(byId(html, 'match-count')).toContain(`${api.match_count} match`);
    for (const o of owners) {
      const cells = rowCells(html, 'data-network', o.network);
      expect(cells[1]).toBe(o.network);
      // the API serves owners lower-case; the page links each to its wallet page
      expect(html).toContain(`href="/explore/wallets/${o.owner.toLowerCase()}"`);
    }
    for (const m of api.matches) {
      const cells = rowCells(html, 'data-network', m.network);
      expect(cells[3]).toBe(m.agent_ids.join(', '));
      expect(cells[6]).toBe(String(m.total_reviews));
      expect(cells[7]).toBe(String(m.distinct_raters));
    }
    // no query: the form alone
    const empty = await page('/explore/search');
    expect(empty.status).toBe(200);
    expect(empty.html).toContain('name="q"');
    expect(empty.html).not.toContain('id="match-count"');
  });

  it('the wallet page: the free preview, the badge and its snippet, the caveats, the paid routes priced by the table', async () => {
    const w = demo.facts.multiChainOwner.address;
    const { res, status, html } = await page(`/explore/wallets/${w.toLowerCase()}`);
    expect(status).toBe(200);
    expectSiteHeaders(res);
    const preview = await json(`/wallets/${w}/chains`);
    expect(preview.chains.length).toBe(3);
    expect(byId(html, 'wallet')).toBe(preview.wallet);
    expect(byId(html, 'identity-count')).toBe(String(preview.identity_count));
    expect(byId(html, 'wallet-reviews')).toBe(String(preview.total_reviews));
    expect(byId(html, 'wallet-raters')).toBe(String(preview.distinct_raters));
    expect(html).toContain(`<img src="/badge/${preview.wallet}.svg"`);
    for (const ch of preview.chains) {
      const cells = rowCells(html, 'data-network', ch.network);
      expect(cells).toEqual([
        ch.network,
        ch.agent_ids.join(', '),
        displayScore(ch.final_score) ?? 'unrated',
        String(ch.total_reviews),
        String(ch.distinct_raters),
      ]);
    }
    for (const c of preview.caveats) expect(html).toContain(`<code>${c.code}</code>`);
    // the embed snippet is text inside <pre><code>, with the configured base URL
    expect(html).toContain(
      escapeHtml(
        `<a href="http://explorer.test/explore/wallets/${preview.wallet}"><img src="http://explorer.test/badge/${preview.wallet}.svg"`,
      ),
    );
    // paid routes: the wallet's metered routes with the paywall's own prices
    for (const [path, tier] of [
      [`/reputation/wallet/${preview.wallet}`, 'wallet-lookup'],
      [`/reputation/wallet/${preview.wallet}?snapshot=true`, 'wallet-snapshot'],
      [`/reputation/wallet/${preview.wallet}/history`, 'wallet-history'],
      [`/reputation/rater/${preview.wallet}`, 'rater-profile'],
    ] as const) {
      const [p, q = ''] = path.split('?');
      const t = matchTier('GET', p!, new URLSearchParams(q));
      expect(t?.id).toBe(tier);
      const cells = rowCells(html, 'data-tier', tier);
      expect(cells[0]).toBe(`GET ${escapeHtml(path)}`);
      expect(cells[1]).toBe(t!.price_usd);
    }
    const ch0 = preview.chains[0];
    expect(html).toContain(`GET /reputation/agent/${ch0.network}/${ch0.agent_ids[0]}`);
    // the copy-paste paid example: the treasury and asset /pricing publishes, a placeholder key
    const pricing = await json('/pricing');
    const example = /id="paid-example"><code>([^<]*)</.exec(html)?.[1] ?? '';
    expect(example).toContain(`TREASURY_ADDRESS=${pricing.treasury}`);
    expect(example).toContain(`X402_ASSET=${pricing.accepted_networks[0].asset}`);
    expect(example).toContain(`BUYER_KEY=${BUYER_KEY_PLACEHOLDER}`);
    expect(example).toContain(`examples/pay-with-x402-fetch.ts /reputation/wallet/${preview.wallet}`);
  });

  it('the chain page: stats, top wallets, facets and the activity chart of /chains/{network}', async () => {
    const { res, status, html } = await page('/explore/chains/base');
    expect(status).toBe(200);
    expectSiteHeaders(res);
    const d = await json('/chains/base');
    expect(byId(html, 'chain-agents')).toBe(String(d.stats.agents));
    expect(byId(html, 'chain-ratings')).toBe(String(d.stats.ratings));
    expect(byId(html, 'chain-raters')).toBe(String(d.stats.distinct_raters));
    expect(byId(html, 'stat-revoked')).toBe(String(d.stats.revoked));
    expect(byId(html, 'stat-self-rated')).toBe(String(d.stats.self_rated));
    expect([...html.matchAll(/<tr data-wallet="/g)].length).toBe(d.top.length);
    const bars = [
      ...html.matchAll(/<rect class="bar" data-day="([^"]+)" data-ratings="(\d+)" data-raters="(\d+)"/g),
    ];
    expect(bars.map((b) => [b[1], Number(b[2]), Number(b[3])])).toEqual(
      d.activity.map((a: any) => [a.day, a.ratings, a.raters]),
    );
    expect(d.activity.some((a: any) => a.ratings > 0)).toBe(true);
    expect([...html.matchAll(/<td class="facet">/g)].length).toBe(d.facets.length);
  });

  it('a hostile tag1 is escaped text: no tag of it reaches the markup', async () => {
    const network = demo.facts.hostileTag1.network;
    const { html } = await page(`/explore/chains/${network}`);
    expect(HOSTILE_TAG1).toContain('<script>alert(1)</script>');
    expect(html).toContain(escapeHtml(HOSTILE_TAG1));
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img src=x/i);
    expect(html).not.toContain('<b>x</b>');
  });

  it('errors are HTML pages with the API meaning: 422 not an address, 404 unknown network, 422 unrecognized query, 404 elsewhere', async () => {
    const bad = await page(`/explore/wallets/${encodeURIComponent('<script>alert(1)</script>')}`);
    expect(bad.status).toBe(422);
    expectSiteHeaders(bad.res);
    const api = await app.request(`/wallets/${encodeURIComponent('<script>alert(1)</script>')}/chains`);
    expect(api.status).toBe(422);
    const apiBody = (await api.json()) as any;
    expect(bad.html).toContain(escapeHtml(apiBody.detail.message));
    expect(bad.html).not.toContain('<script>alert(1)');

    const net = await page('/explore/chains/atlantis');
    expect(net.status).toBe(404);
    expectSiteHeaders(net.res);
    const apiNet = (await (await app.request('/chains/atlantis')).json()) as any;
    expect(net.html).toContain(escapeHtml(apiNet.detail.message));
    for (const n of apiNet.detail.known_networks) expect(net.html).toContain(`href="/explore/chains/${n}"`);

    const q = await page('/explore/search?q=not-a-thing');
    expect(q.status).toBe(422);
    expect(q.html).toContain('Unrecognized query');

    const nowhere = await page('/explore/nowhere');
    expect(nowhere.status).toBe(404);
    expect(nowhere.res.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it("a dot-only query (`..`, `.`) is the search route's own 422 page, never the answer of another route", async () => {
    // `/search/..` would be `/` and `/search/.` would be `/search/` once the URL parser removed the
    // dot segment: the page must show what /search answers for a query it cannot parse.
    const api = (await (await app.request('/search/not-a-thing')).json()) as any;
    expect(api.detail.error).toBe('unrecognized_query');
    for (const q of ['..', '.']) {
      const p = await page(`/explore/search?q=${encodeURIComponent(q)}`);
      expect(p.status, q).toBe(422);
      expectSiteHeaders(p.res);
      expect(p.res.headers.get('cache-control'), q).toBe('no-store');
      expect(p.html, q).toContain('422 · Unrecognized query');
      expect(p.html, q).toContain(escapeHtml(api.detail.message));
      for (const shape of api.detail.accepted_shapes)
        expect(p.html, q).toContain(`<li>${escapeHtml(shape)}</li>`);
      expect(p.html, q).not.toContain('id="total-agents"');
    }
  });

  it('a page view costs its client exactly one token: its reads are not charged again; over the budget, the HTML 429', async () => {
    // burst 1: a page whose reads spent tokens too would be refused on its first read.
    const tight = createApp({
      config: { ...demo.config, rateLimit: { rate: 0.001, burst: 1 } },
      db: demo.db,
      now: () => NOW,
    });
    const w = demo.facts.multiChainOwner.address;
    const pages: [string, number][] = [
      ['/', 200],
      [`/explore/search?q=${demo.facts.sameAgentIdOnTwoChains.agentId}`, 200],
      ['/explore/search?q=..', 422],
      [`/explore/wallets/${w}`, 200],
      ['/explore/chains/base', 200],
      ['/explore/chains/atlantis', 404],
    ];
    for (const [i, [path, status]] of pages.entries()) {
      const client = { inProcessClient: `explorer-test-${i}` };
      const first = await tight.request(path, {}, client);
      expect(first.status, path).toBe(status);
      await first.body?.cancel();
      const second = await tight.request(path, {}, client);
      expect(second.status, path).toBe(429);
      expect(second.headers.get('retry-after')).toBe('1');
      expect(second.headers.get('content-security-policy')).toBe(EXPLORER_CSP);
      expect(await second.text()).toContain('429 · Too many requests');
    }
    for (const p of ['/explore', '/explore/']) {
      const r = await app.request(p);
      expect(r.status, p).toBe(302);
      expect(r.headers.get('location'), p).toBe('/');
    }
  });

  it('over a socket: N home page views spend exactly N tokens, and no header a client sends skips the limit', async () => {
    const BURST = 5;
    // A frozen clock: the bucket never refills during the test, so every token is counted.
    const frozen = Date.now();
    const server = await startHttpServer(
      {
        config: { ...demo.config, rateLimit: { rate: 1, burst: BURST } },
        db: demo.db,
        now: () => NOW,
        rateLimit: new InProcessRateLimitStore(new TokenBucketLimiter(() => frozen)),
      },
      { host: '127.0.0.1', port: 0 },
    );
    try {
      // Header names a client might try in order to pass for an in-process, already charged read
      // (or another client), and any other token; values of any printable text.
      const name = fc.oneof(
        fc.constantFrom(
          'inprocesscharged',
          'inprocessclient',
          'inprocesspath',
          'x-in-process-charged',
          'x-inprocess-client',
          'x-already-charged',
          'incoming',
          'x-forwarded-for',
          'forwarded',
          'x-real-ip',
          'x-client-ip',
          'authorization',
          'cookie',
          'x-payment',
        ),
        fc
          .stringMatching(/^[a-z][a-z0-9-]{0,20}$/)
          // what fetch itself manages (or refuses to send)
          .filter(
            (n) =>
              !/^(host|connection|content-length|transfer-encoding|keep-alive|upgrade|expect|te|trailer|accept)$/.test(
                n,
              ),
          ),
      );
      const value = fc.oneof(
        fc.constantFrom('true', '1', 'yes', '127.0.0.1', '203.0.113.7', 'explorer', '/health'),
        fc.stringMatching(/^[\x21-\x7e]{1,30}$/),
      );
      const headerSets = fc.sample(fc.dictionary(name, value, { maxKeys: 6 }), { seed: 8004, numRuns: 40 });
      const get = async (path: string, headers: Record<string, string>) => {
        const res = await fetch(`${server.url}${path}`, { headers: { ...headers, accept: 'text/html' } });
        const html = await res.text();
        return { res, html };
      };
      for (let i = 0; i < BURST; i++) {
        const { res, html } = await get('/', headerSets[i]!);
        expect(res.status, `home page view ${i + 1} of ${BURST}`).toBe(200);
        expect(html).toContain('id="total-agents"');
      }
      // The bucket is empty: whatever is sent, every page (and any route) is refused before work.
      const paths = [
        '/',
        '/explore/search?q=1',
        `/explore/wallets/${demo.facts.multiChainOwner.address}`,
        '/health',
      ];
      for (const [i, headers] of headerSets.slice(BURST).entries()) {
        const path = paths[i % paths.length]!;
        const { res, html } = await get(path, headers);
        expect(res.status, `${path} ${JSON.stringify(headers)}`).toBe(429);
        expect(res.headers.get('retry-after')).toBe('1');
        if (path !== '/health') expect(html).toContain('429 · Too many requests');
      }
    } finally {
      await server.close();
    }
  });

  it('the stylesheet is served locally; no site path is in the OpenAPI document', async () => {
    const css = await app.request('/explore/assets/explorer.css');
    expect(css.status).toBe(200);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
    expect((await css.text()).length).toBeGreaterThan(500);
    const doc = await json('/openapi.json');
    const paths = Object.keys(doc.paths);
    expect(paths).not.toContain('/');
    expect(paths.filter((p) => p.startsWith('/explore') || EXPLORER_PATH.test(p))).toEqual([]);
    // every route the explorer registers is a site path
    const site = app.routes.filter((r) => EXPLORER_PATH.test(r.path)).map((r) => r.path);
    expect(site).toEqual(expect.arrayContaining(['/', '/explore/search', '/explore/wallets/:wallet']));
    expect(EXPLORER_PATH.test('/explorer')).toBe(false);
    expect(paths).toContain('/chains/{network}');
  });

  it('the demo prints the explorer address, and the pages it names answer', async () => {
    const banner = servingBanner('http://127.0.0.1:8080', demo.facts, 'paid');
    const line = banner.split('\n').find((l) => l.startsWith('[demo] explorer:'));
    expect(line).toContain('http://127.0.0.1:8080/ ');
    const links = [...line!.matchAll(/http:\/\/127\.0\.0\.1:8080(\/[^\s,)]*)/g)].map((m) => m[1]!);
    expect(links).toEqual([
      '/',
      `/explore/wallets/${demo.facts.multiChainOwner.address}`,
      '/explore/chains/base',
    ]);
    for (const l of links) {
      const r = await page(l);
      expect(r.status, l).toBe(200);
      expect(r.res.headers.get('content-type')).toMatch(/^text\/html/);
    }
  });
});
