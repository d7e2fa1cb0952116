/**
 * `GET /badge/{wallet}.svg` over HTTP (`createApp` + `app.request`) on the demo scenario: three
 * local EVM chains indexed by the real indexer, plus a few Solana rows written through the ingest
 * tables (a real zero, a single rater), then the aggregate refresh at a fixed clock. On PGlite, or
 * on PostgreSQL when TEST_DATABASE_URL / DATABASE_URL is set (a private schema).
 *
 * Every expected score and rater count is recomputed from the stored `ratings` and `agents` rows
 * with the pure scoring functions, and cross-checked against `GET /wallets/{wallet}/chains`;
 * nothing is hard-coded.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderBadge } from '../src/badge/svg.js';
import type { Demo } from '../src/demo/run-demo.js';
import { createApp } from '../src/doors/http/app.js';
import type { App } from '../src/doors/http/context.js';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import {
  classifyRating,
  displayScore,
  isBurnAddress,
  normalizeAddress,
  walletScore,
} from '../src/scoring/index.js';
import { findAll, parseXml, textOf } from './helpers/badge-xml.js';
import { openTestDatabase, testDatabaseUrl, type TestDatabase } from './helpers/db.js';
import { openDemoCopy } from './helpers/demo.js';
import { solanaSeeder } from './helpers/solana-seed.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const NOW = new Date('2026-11-20T08:00:00Z');
const DOT = ' \u00b7 ';
const BURN = '0x000000000000000000000000000000000000dEaD';
const NEVER_SEEN = '0x1234567890abcdef1234567890abcdef12345678';

// Solana fixture (base58: no 0, O, I, l). Lower-casing these keys keeps them valid base58 (another key).
const SOL_ZERO = `ZeroWa11et${'A'.repeat(34)}`; // 44 chars: owns an agent rated 0 by two raters
const SOL_ZERO_ASSET = `ZeroAsset${'B'.repeat(30)}`;
const SOL_ONE = `UnoRaterWa11et${'C'.repeat(26)}`; // 40 chars: one rater, twice
const SOL_ONE_ASSET = `UnoAsset${'D'.repeat(30)}`;
const SOL_RATER = (n: number) => `Rater${n}${'R'.repeat(30)}`;

let demo: Demo;
let app: App;
let date: string;

interface Row {
  network: string;
  agent_id: string;
  rater: string;
  value: string;
  revoked: boolean;
  owner: string | null;
}
let ratings: Row[] = [];
let owners: string[] = [];

async function seedSolana(): Promise<void> {
  const sol = solanaSeeder(demo.db, 'badge-sig');
  await sol.agent(SOL_ZERO_ASSET, SOL_ZERO);
  await sol.agent(SOL_ONE_ASSET, SOL_ONE);
  await sol.rate(SOL_ZERO_ASSET, SOL_RATER(1), '0');
  await sol.rate(SOL_ZERO_ASSET, SOL_RATER(2), '0');
  await sol.rate(SOL_ONE_ASSET, SOL_RATER(3), '90');
  await sol.rate(SOL_ONE_ASSET, SOL_RATER(3), '80');
}

beforeAll(async () => {
  // On PostgreSQL the demo writes into a private schema of the test server.
  demo = await openDemoCopy();
  await seedSolana();
  const refreshedAt = (await refreshAggregates(demo.db, () => NOW)).refreshed_at;
  date = refreshedAt.slice(0, 10);
  app = createApp({ config: demo.config, db: demo.db, now: () => NOW });
  ratings = await demo.db.query<Row & Record<string, unknown>>(
    `SELECT r.network, r.agent_id, r.rater, r.value::text AS value, r.revoked, a.owner
       FROM ratings r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id`,
  );
  const agents = await demo.db.query<{ owner: string | null }>(
    `SELECT DISTINCT owner FROM agents WHERE owner IS NOT NULL`,
  );
  owners = agents.map((a) => a.owner!).sort();
}, 300_000);

afterAll(async () => {
  await demo?.close();
});

// ------------------------------------------------------------------ helpers

/** The badge numbers of a wallet, recomputed from the stored rows (eligible ratings only). */
function expected(wallet: string): { score: string | null; raters: number } {
  const eligible = ratings
    .filter((r) => r.owner === wallet && classifyRating(r, wallet) === 'eligible')
    .map((r) => ({ network: r.network, rater: r.rater, value: r.value }));
  return {
    score: displayScore(walletScore(eligible).final_score),
    raters: new Set(eligible.map((e) => normalizeAddress(e.rater))).size,
  };
}

function expectedValue(wallet: string): string {
  const e = expected(wallet);
  if (e.score === null) return `sin calificaciones${DOT}${date}`;
  const n = `${e.raters} ${e.raters === 1 ? 'rater' : 'raters'}`;
  return [e.score, ...(isBurnAddress(wallet) ? ['burn address'] : []), n, date].join(DOT);
}

async function get(path: string, init?: RequestInit) {
  const res = await app.request(path, init);
  const bytes = Buffer.from(await res.arrayBuffer());
  return { res, status: res.status, bytes, text: bytes.toString('utf8') };
}

/** What a viewer of the badge sees: the texts outside the decorative shadow, the boxes, the sentence. */
function readBadge(svg: string) {
  const root = parseXml(svg);
  const shadow = new Set(
    findAll(root, 'g')
      .filter((g) => g.attrs['aria-hidden'] === 'true')
      .flatMap((g) => findAll(g, 'text')),
  );
  const texts = findAll(root, 'text')
    .filter((t) => !shadow.has(t))
    .map(textOf);
  const rects = findAll(root, 'rect');
  const title = findAll(root, 'title').map(textOf);
  return {
    root,
    width: Number(root.attrs.width),
    height: Number(root.attrs.height),
    label: texts[0],
    value: texts[1],
    title,
    ariaLabel: root.attrs['aria-label'],
    role: root.attrs.role,
    valueFill: rects.find((r) => r.attrs.x === '98')?.attrs.fill,
    labelBox: rects.find((r) => r.attrs.width === '98' && r.attrs.x === undefined),
  };
}

const sha256Etag = (bytes: Buffer) => `"${createHash('sha256').update(bytes).digest('base64url')}"`;

// ------------------------------------------------------------------ tests

describe('GET /badge/{wallet}.svg on the demo scenario', () => {
  it('runs on the database the suite was asked for, with owners of every kind', () => {
    expect(demo.db.kind).toBe(testDatabaseUrl ? 'postgres' : 'pglite');
    expect(owners.length).toBeGreaterThan(10);
    expect(owners).toContain(normalizeAddress(BURN));
    expect(owners).toContain(normalizeAddress(demo.facts.unratedOwner.address));
    expect(owners).toContain(SOL_ZERO);
  });

  it('serves every owner of the index the score and distinct raters recomputed from the stored rows, dated by the refresh', async () => {
    for (const wallet of owners) {
      const { status, res, text } = await get(`/badge/${wallet}.svg`);
      expect(status, wallet).toBe(200);
      expect(res.headers.get('content-type'), wallet).toBe('image/svg+xml');
      const b = readBadge(text);
      expect(b.height, wallet).toBe(20);
      expect(b.label, wallet).toBe('reputation');
      expect(b.value, wallet).toBe(expectedValue(wallet));
      expect(b.title, wallet).toEqual([`reputation: ${b.value}`]);
      expect(b.ariaLabel, wallet).toBe(`reputation: ${b.value}`);
      expect(b.role, wallet).toBe('img');
      const e = expected(wallet);
      expect(b.valueFill, wallet).toBe(e.score === null || isBurnAddress(wallet) ? '#5a5a66' : '#7c4dcc');
      expect(b.labelBox?.attrs.fill, wallet).toBe('#3a3a44');
      // Byte-identical to the pure renderer fed the independently recomputed numbers.
      expect(text, wallet).toBe(
        renderBadge({ scoreText: e.score, raters: e.raters, date, burn: isBurnAddress(wallet) }),
      );
    }
  });

  it('shows the same numbers as the free preview: global_score in the display convention, distinct_raters, refreshed_at', async () => {
    for (const wallet of owners) {
      const chains = (await (await app.request(`/wallets/${wallet}/chains`)).json()) as any;
      const b = readBadge((await get(`/badge/${wallet}.svg`)).text);
      expect(chains.refreshed_at.slice(0, 10)).toBe(date);
      if (chains.global_score === null) {
        expect(b.value, wallet).toBe(`sin calificaciones${DOT}${date}`);
      } else {
        const n = chains.distinct_raters;
        expect(b.value, wallet).toContain(`${displayScore(chains.global_score)}${DOT}`);
        expect(b.value, wallet).toMatch(new RegExp(`${DOT}${n} raters?${DOT}${date}$`));
      }
    }
  });

  it('headers: image/svg+xml, the edge cache, a strong ETag hashing the SVG, open CORS, the API headers', async () => {
    const w = demo.facts.multiChainOwner.address;
    const { res, bytes } = await get(`/badge/${w}.svg`);
    expect(res.headers.get('content-type')).toBe('image/svg+xml');
    expect(res.headers.get('cache-control')).toBe('public, max-age=3600, stale-if-error=604800');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('etag')).toBe(sha256Etag(bytes));
    expect(res.headers.get('etag')).toMatch(/^"[^"]+"$/); // strong: no W/
    expect(res.headers.get('api-version')).toBe('2.0.0');
    expect(res.headers.get('ratelimit-policy')).toBe('50;w=1;burst=40');
    expect(readBadge(bytes.toString('utf8')).value).toMatch(
      /^\d+(\.\d{1,2})? · \d+ raters? · \d{4}-\d{2}-\d{2}$/,
    );
  });

  it('an EVM address in any case, with or without 0x, gives the byte-identical image and ETag', async () => {
    for (const w of [demo.facts.multiChainOwner.address, BURN, demo.facts.unratedOwner.address]) {
      const hex = w.slice(2);
      const variants = [
        w,
        w.toLowerCase(),
        `0x${hex.toUpperCase()}`,
        hex.toLowerCase(),
        hex.toUpperCase(),
        hex,
      ];
      const answers = await Promise.all(variants.map((v) => get(`/badge/${v}.svg`)));
      for (const [k, a] of answers.entries()) {
        expect(a.status, variants[k]).toBe(200);
        expect(a.bytes.equals(answers[0]!.bytes), variants[k]).toBe(true);
        expect(a.res.headers.get('etag'), variants[k]).toBe(answers[0]!.res.headers.get('etag'));
      }
    }
  });

  it('a Solana key is read verbatim: its lower-cased twin is another wallet', async () => {
    const zero = readBadge((await get(`/badge/${SOL_ZERO}.svg`)).text);
    expect(zero.value).not.toContain('sin calificaciones');
    const twin = await get(`/badge/${SOL_ZERO.toLowerCase()}.svg`);
    expect(twin.status).toBe(200);
    expect(readBadge(twin.text).value).toBe(`sin calificaciones${DOT}${date}`);
  });

  it('ignores any query string: identical image and ETag', async () => {
    const w = demo.facts.multiChainOwner.address;
    const plain = await get(`/badge/${w}.svg`);
    for (const q of [
      '?',
      '?style=flat',
      '?v=2&label=x&color=red',
      '?wallet=0x0000000000000000000000000000000000000000',
      '?<script>=1',
    ]) {
      const a = await get(`/badge/${w}.svg${q}`);
      expect(a.status, q).toBe(200);
      expect(a.bytes.equals(plain.bytes), q).toBe(true);
      expect(a.res.headers.get('etag'), q).toBe(plain.res.headers.get('etag'));
    }
  });

  it('If-None-Match with the ETag (alone, in a list, weak-prefixed, or *) answers 304 with an empty body', async () => {
    const path = `/badge/${demo.facts.multiChainOwner.address}.svg`;
    const first = await get(path);
    const etag = first.res.headers.get('etag')!;
    for (const inm of [etag, `"nope", ${etag}`, `W/${etag}`, `"a",W/${etag} , "b"`, '*']) {
      const a = await get(path, { headers: { 'If-None-Match': inm } });
      expect(a.status, inm).toBe(304);
      expect(a.bytes.length, inm).toBe(0);
      expect(a.res.headers.get('etag'), inm).toBe(etag);
      expect(a.res.headers.get('cache-control'), inm).toBe('public, max-age=3600, stale-if-error=604800');
      expect(a.res.headers.get('api-version'), inm).toBe('2.0.0');
    }
    for (const inm of ['"nope"', `"${etag}"`, etag.slice(0, -2) + '"', '']) {
      const a = await get(path, { headers: { 'If-None-Match': inm } });
      expect(a.status, inm).toBe(200);
      expect(a.bytes.equals(first.bytes), inm).toBe(true);
    }
    // The ETag is the same for every spelling of the address and under /v1.
    const upper = await get(
      `/v1/badge/${demo.facts.multiChainOwner.address.slice(2).toUpperCase()}.svg?x=1`,
      {
        headers: { 'If-None-Match': etag },
      },
    );
    expect(upper.status).toBe(304);
  });

  it('registered-but-unrated and never-registered render identically: `sin calificaciones · <date>` on grey', async () => {
    const unrated = await get(`/badge/${demo.facts.unratedOwner.address}.svg`);
    const never = await get(`/badge/${NEVER_SEEN}.svg`);
    const chains = (await (
      await app.request(`/wallets/${demo.facts.unratedOwner.address}/chains`)
    ).json()) as any;
    expect(chains.chains.length).toBeGreaterThan(0); // it IS registered
    expect(chains.global_score).toBeNull();
    expect(unrated.bytes.equals(never.bytes)).toBe(true);
    expect(unrated.res.headers.get('etag')).toBe(never.res.headers.get('etag'));
    const b = readBadge(never.text);
    expect(b.value).toBe(`sin calificaciones${DOT}${date}`);
    expect(b.valueFill).toBe('#5a5a66');
  });

  it('burn address: `<score> · burn address · <n> raters · <date>` on grey, with the real score', async () => {
    const chains = (await (await app.request(`/wallets/${BURN}/chains`)).json()) as any;
    expect(chains.caveats.map((c: any) => c.code)).toEqual(['burn-address']);
    expect(chains.global_score).not.toBeNull();
    const b = readBadge((await get(`/badge/${BURN}.svg`)).text);
    const n = chains.distinct_raters;
    expect(b.value).toBe(
      `${displayScore(chains.global_score)}${DOT}burn address${DOT}${n} ${n === 1 ? 'rater' : 'raters'}${DOT}${date}`,
    );
    expect(b.valueFill).toBe('#5a5a66');
    expect(b.ariaLabel).toBe(`reputation: ${b.value}`);
  });

  it('a real zero renders `0 · <n> raters`, never the no-ratings text; one rater is singular', async () => {
    const zero = readBadge((await get(`/badge/${SOL_ZERO}.svg`)).text);
    expect(expected(SOL_ZERO)).toEqual({ score: '0', raters: 2 });
    expect(zero.value).toBe(`0${DOT}2 raters${DOT}${date}`);
    expect(zero.valueFill).toBe('#7c4dcc');
    const one = readBadge((await get(`/badge/${SOL_ONE}.svg`)).text);
    expect(expected(SOL_ONE)).toEqual({ score: '85', raters: 1 });
    expect(one.value).toBe(`85${DOT}1 rater${DOT}${date}`);
    // The scenario's zero rating is served, and its subject's badge shows a number.
    const z = demo.facts.zeroRating;
    const owner = ratings.find((r) => r.network === z.network && r.agent_id === String(z.agentId))?.owner;
    expect(owner).toBeTruthy();
    expect(readBadge((await get(`/badge/${owner}.svg`)).text).value).not.toContain('sin calificaciones');
  });

  it('the width grows with the text; the label box stays 98 px', async () => {
    const short = readBadge((await get(`/badge/${SOL_ONE}.svg`)).text); // "85 · 1 rater · date"
    const burn = readBadge((await get(`/badge/${BURN}.svg`)).text); // longer: "… · burn address · …"
    expect(burn.value!.length).toBeGreaterThan(short.value!.length);
    expect(burn.width).toBeGreaterThan(short.width);
    expect(short.labelBox).toBeDefined();
    expect(burn.labelBox).toBeDefined();
  });

  it('anything but an address is 422 {detail:{error:"not_an_address", wallet:<input>}}, the input echoed as JSON', async () => {
    const garbage = [
      'nope',
      '<script>alert(1)</script>',
      '"><svg onload=alert(1)>',
      'x'.repeat(5000),
      `0x${'a'.repeat(39)}`,
      `0x${'a'.repeat(41)}`,
      `0x${'g'.repeat(40)}`,
      `0X${'a'.repeat(40)}`,
      '0'.repeat(39),
      `${'1'.repeat(31)}`, // base58, too short
      `${'1'.repeat(45)}`, // base58, too long
      `So1ana${'0'.repeat(30)}`, // not base58
      '',
      ' ',
      '../../etc/passwd',
    ];
    for (const input of garbage) {
      const a = await get(`/badge/${encodeURIComponent(input)}.svg`);
      expect(a.status, input.slice(0, 60)).toBe(422);
      expect(a.res.headers.get('content-type'), input.slice(0, 60)).toMatch(/^application\/json/);
      const body = JSON.parse(a.text);
      expect(body, input.slice(0, 60)).toEqual({
        detail: { error: 'not_an_address', wallet: input, message: expect.any(String) },
      });
      expect(a.res.headers.get('api-version')).toBe('2.0.0');
      expect(a.res.headers.get('access-control-allow-origin')).toBe('*');
      // JSON, never sniffed into markup by a browser.
      expect(a.res.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('exactly one route: no extension-less, PNG, JSON or per-agent badge (404 JSON)', async () => {
    const w = demo.facts.multiChainOwner.address;
    const z = demo.facts.zeroRating;
    for (const p of [
      `/badge/${w}`,
      `/badge/${w}.png`,
      `/badge/${w}.json`,
      `/badge/${w}.svg.png`,
      `/badge/${w}.svg/`,
      `/badge/${w}/chains.svg`,
      `/badge/agent/${z.network}/${z.agentId}`,
      `/badge/agent/${z.network}/${z.agentId}.svg`,
      `/badge/${z.network}/${z.agentId}.svg`,
      '/badge',
      '/badge/',
      '/badges/x.svg',
    ]) {
      for (const prefix of ['', '/v1']) {
        const a = await get(`${prefix}${p}`);
        expect(a.status, prefix + p).toBe(404);
        expect(JSON.parse(a.text), prefix + p).toEqual({ detail: expect.any(String) });
      }
    }
  });

  it('/v1 is an alias: same status, bytes and headers for 200, 304, 404 and 422', async () => {
    const w = demo.facts.multiChainOwner.address;
    for (const p of [
      `/badge/${w}.svg`,
      `/badge/${BURN}.svg`,
      `/badge/${SOL_ZERO}.svg`,
      `/badge/${NEVER_SEEN}.svg?x=1`,
      '/badge/nope.svg',
      `/badge/${w}.png`,
    ]) {
      const [a, b] = [await get(p), await get(`/v1${p}`)];
      expect(b.status, p).toBe(a.status);
      expect(b.bytes.equals(a.bytes), p).toBe(true);
      for (const h of [
        'content-type',
        'etag',
        'cache-control',
        'access-control-allow-origin',
        'api-version',
        'ratelimit-policy',
      ]) {
        expect(b.res.headers.get(h), `${p} ${h}`).toBe(a.res.headers.get(h));
      }
    }
  });

  it('HEAD answers the GET status and ETag without a body', async () => {
    const path = `/badge/${demo.facts.multiChainOwner.address}.svg`;
    const g = await get(path);
    const h = await get(path, { method: 'HEAD' });
    expect(h.status).toBe(200);
    expect(h.bytes.length).toBe(0);
    expect(h.res.headers.get('etag')).toBe(g.res.headers.get('etag'));
  });

  it('is in /openapi.json once, as /badge/{wallet}.svg with an image/svg+xml 200, a 304 and a 422', async () => {
    const doc = (await (await app.request('/openapi.json')).json()) as any;
    const badgePaths = Object.keys(doc.paths).filter((p) => p.includes('badge'));
    expect(badgePaths).toEqual(['/badge/{wallet}.svg']);
    const op = doc.paths['/badge/{wallet}.svg'];
    expect(Object.keys(op)).toEqual(['get']);
    expect(op.get.parameters).toEqual([
      expect.objectContaining({ name: 'wallet', in: 'path', required: true }),
    ]);
    expect(Object.keys(op.get.responses['200'].content)).toEqual(['image/svg+xml']);
    expect(op.get.responses['304']).toBeDefined();
    expect(op.get.responses['422'].content['application/json']).toBeDefined();
  });
});

describe('GET /badge/{wallet}.svg before the first index refresh', () => {
  let t: TestDatabase;
  let empty: App;
  beforeAll(async () => {
    t = await openTestDatabase();
    empty = createApp({ config: demo.config, db: t.db, now: () => NOW });
  });
  afterAll(() => t?.close());

  it('has no refresh date: `sin calificaciones · sin indexar` on grey, with the usual headers', async () => {
    for (const w of [NEVER_SEEN, BURN, SOL_ZERO]) {
      const res = await empty.request(`/badge/${w}.svg`);
      expect(res.status, w).toBe(200);
      expect(res.headers.get('cache-control')).toBe('public, max-age=3600, stale-if-error=604800');
      const b = readBadge(await res.text());
      expect(b.value, w).toBe(`sin calificaciones${DOT}sin indexar`);
      expect(b.valueFill, w).toBe('#5a5a66');
    }
  });
});
