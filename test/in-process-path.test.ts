/**
 * The one path-segment helper of the in-process doors (`pathSegment`, src/doors/in-process.ts):
 * any string becomes a single path segment that the route reads back as the same value. A URL
 * cannot carry `.` or `..` as a segment (the WHATWG parser removes dot segments and what they point
 * at), so those two are flagged (`isDotSegment`) and `requestInProcess` routes their path as
 * written: the route named, with the literal value, answers, never another route. The doors' own
 * answers to `..` are in test/explorer-http.test.ts and test/mcp.test.ts.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createAppShell } from '../src/doors/http/app.js';
import type { AppContext } from '../src/doors/http/context.js';
import { registerPaidRoute } from '../src/doors/http/routes/reputation.js';
import { isDotSegment, pathSegment, requestInProcess } from '../src/doors/in-process.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { walletEchoHandler } from './helpers/paid-handler.js';
import { payment, StubFacilitator, TREASURY } from './helpers/x402-stub.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** What a route reads back from a string no URL can carry unchanged (lone surrogates). */
const wellFormed = (s: string) =>
  s.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');

/** Strings rich in what a URL treats specially: dots, `%2e`, slashes, `?`, `#`, `%`, backslash. */
const tricky = fc.oneof(
  fc.constantFrom(
    '.',
    '..',
    '...',
    '.%2E',
    '%2e',
    '%2E%2e',
    '%2e.',
    '/',
    '..%2F',
    '\\..',
    '?',
    '#',
    '%',
    ' . ',
    '',
  ),
  fc
    .array(fc.constantFrom('.', '%', '2', 'e', 'E', '/', '\\', '?', '#', '+', ' ', 'é', '\u{1F600}'), {
      maxLength: 8,
    })
    .map((a) => a.join('')),
  fc.string({ unit: 'binary', maxLength: 24 }),
);

describe('pathSegment: any string is one path segment', () => {
  it('never spans segments; a dot segment only for `.` and `..` (flagged); else it round-trips through new URL and the param decoding', () => {
    fc.assert(
      fc.property(tricky, (s) => {
        const seg = pathSegment(s);
        expect(seg).not.toMatch(/[/?#\\]/);
        expect(isDotSegment(seg)).toBe(s === '.' || s === '..');
        if (isDotSegment(seg)) return;
        const path = `/r/${seg}/t`;
        expect(new URL(path, 'http://localhost').pathname).toBe(path);
        expect(decodeURIComponent(seg)).toBe(wellFormed(s));
      }),
      { numRuns: 2000 },
    );
  });

  it('flags every spelling the URL parser removes, and nothing else', () => {
    for (const d of ['.', '..', '%2e', '%2E', '.%2e', '.%2E', '%2e.', '%2E.', '%2e%2e', '%2E%2e']) {
      expect(isDotSegment(d), d).toBe(true);
      expect(new URL(`/a/${d}/b`, 'http://localhost').pathname, d).not.toBe(`/a/${d}/b`);
    }
    for (const d of ['', '...', '.a', 'a.', '%2e%2e%2e', '%252e', '. ', '%2f']) {
      expect(isDotSegment(d), d).toBe(false);
    }
  });
});

describe('requestInProcess: the route named gets the value as typed', () => {
  let t: TestDatabase;
  let app: ReturnType<typeof createAppShell>;
  const runs = { count: 0 };
  const stub = new StubFacilitator();

  beforeAll(async () => {
    t = await openTestDatabase();
    const ctx: AppContext = {
      config: loadConfig({
        TREASURY_ADDRESS: TREASURY,
        X402_FACILITATOR_URL: 'http://127.0.0.1:9/facilitator',
      }),
      db: t.db,
      now: () => new Date('2026-11-01T00:00:00Z'),
      facilitator: stub,
    };
    app = createAppShell(ctx);
    app.get('/echo/:v', (c) => c.json({ route: 'last', v: c.req.param('v'), path: c.req.path }));
    app.get('/echo/:v/tail', (c) => c.json({ route: 'middle', v: c.req.param('v') }));
    app.get('/', (c) => c.json({ route: 'root' }));
    app.get('/tail', (c) => c.json({ route: 'tail' }));
    registerPaidRoute(app, ctx, {
      path: '/reputation/wallet/{wallet}',
      handler: walletEchoHandler('wallet-lookup', runs),
    });
  });
  afterAll(async () => {
    await t?.close();
  });

  const get = async (path: string) => {
    const res = await requestInProcess(app, path, {}, undefined);
    return { status: res.status, body: (await res.json()) as any };
  };

  it('any value, as the last segment or between two, reaches /echo/{v} as itself (and `/v1` too)', async () => {
    await fc.assert(
      fc.asyncProperty(tricky, async (s) => {
        fc.pre(s !== '');
        const seg = pathSegment(s);
        const last = await get(`/echo/${seg}?x=1`);
        expect(last.status).toBe(200);
        expect(last.body).toMatchObject({ route: 'last', v: wellFormed(s) });
        const middle = await get(`/v1/echo/${seg}/tail`);
        expect(middle.body).toEqual({ route: 'middle', v: wellFormed(s) });
      }),
      { numRuns: 300 },
    );
  });

  it('`..` and `.` never reach the route a URL parser would make of them', async () => {
    expect((await get('/echo/../tail')).body).toEqual({ route: 'middle', v: '..' });
    expect((await get('/echo/./tail')).body).toEqual({ route: 'middle', v: '.' });
    expect((await get('/echo/..')).body).toEqual({ route: 'last', v: '..', path: '/echo/..' });
    // without the binding (what any URL gives): the other routes
    expect(await (await app.request('/echo/../tail')).json()).toEqual({ route: 'tail' });
    expect(await (await app.request('/echo/..')).json()).toEqual({ route: 'root' });
    // a request from a socket is routed by its URL, whatever bindings sit beside it
    const socket = { incoming: { socket: { remoteAddress: '127.0.0.1' } }, inProcessPath: '/echo/..' };
    expect(await (await app.request('/tail', {}, socket)).json()).toEqual({ route: 'tail' });
  });

  it('a metered route reached with `..` quotes and refuses the resource it was asked for, charging nothing', async () => {
    const quote = await get(`/reputation/wallet/${pathSegment('..')}`);
    expect(quote.status).toBe(402);
    expect(quote.body.resource).toBe('GET /reputation/wallet/..');
    const settles = stub.settles.length;
    const res = await requestInProcess(
      app,
      `/reputation/wallet/${pathSegment('..')}`,
      { headers: { 'X-PAYMENT': payment() } },
      undefined,
    );
    expect(res.status).toBe(422);
    expect(await res.json()).toEqual({ detail: { error: 'not_an_address', wallet: '..' } });
    expect(stub.settles.length).toBe(settles);
    expect(runs.count).toBe(0);
  });
});
