/**
 * The paywall with a stub facilitator: the 402 challenge (22 fields, headers), the order of the
 * checks, receipts, claims, the 503s and hostile headers. The real rail (a local chain, an EIP-3009
 * token, the x402 facilitator library) is exercised in payments-e2e.test.ts.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createAppShell } from '../src/doors/http/app.js';
import type { AppContext } from '../src/doors/http/context.js';
import { registerApiChallenge } from '../src/doors/http/routes/reputation.js';
import { canonicalResource } from '../src/payments/challenge.js';
import { registerPaidRoute } from '../src/doors/http/routes/reputation.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { walletEchoHandler } from './helpers/paid-handler.js';
import { BASE_USDC, PAYER, payment, StubFacilitator, TREASURY } from './helpers/x402-stub.js';

const WALLET = '0x3333333333333333333333333333333333333333';

const FIELDS = [
  'x402Version',
  'scheme',
  'resource',
  'amount',
  'price_usd',
  'token',
  'maxTimeoutSeconds',
  'retryable',
  'recipient',
  'recipients',
  'supportedChains',
  'accepts',
  'pricing',
  'next_action',
  'free_preview',
  'see_also',
  'facilitator',
  'description',
  'error',
  'message',
  'mimeType',
  'service',
];

describe('x402 paywall (stub facilitator)', () => {
  let t: TestDatabase;
  let ctx: AppContext;
  let app: ReturnType<typeof createAppShell>;
  let stub: StubFacilitator;
  const runs = { count: 0 };
  let clock = new Date('2026-11-01T00:00:00Z');

  beforeAll(async () => {
    t = await openTestDatabase();
    stub = new StubFacilitator();
    ctx = {
      config: loadConfig({
        TREASURY_ADDRESS: TREASURY,
        X402_FACILITATOR_URL: 'http://127.0.0.1:9/facilitator',
      }),
      db: t.db,
      now: () => clock,
      facilitator: stub,
    };
    app = createAppShell(ctx);
    registerPaidRoute(app, ctx, {
      path: '/reputation/wallet/{wallet}',
      handler: walletEchoHandler('wallet-lookup', runs),
    });
    registerPaidRoute(app, ctx, {
      path: '/reputation/rater/{wallet}',
      handler: walletEchoHandler('rater-profile', runs),
    });
    registerApiChallenge(app, ctx);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    stub.verifyMode = 'ok';
    stub.settleMode = 'ok';
  });

  const get = (path: string, header?: string) =>
    app.request(path, header ? { headers: { 'X-PAYMENT': header } } : {});

  it('answers 402 with the 22 fields and the headers, before any validation', async () => {
    const before = runs.count;
    const res = await get('/reputation/wallet/not-a-wallet?b=2&a=1');
    expect(res.status).toBe(402);
    expect(res.headers.get('x-accept-payment')).toBe('x402 USDC 2.0');
    expect(res.headers.get('x-pricing-version')).toBe('cost-tiered@5');
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual([...FIELDS].sort());
    expect(JSON.parse(Buffer.from(res.headers.get('payment-required')!, 'base64').toString('utf8'))).toEqual(
      body,
    );
    expect(body).toMatchObject({
      x402Version: 2,
      scheme: 'exact',
      resource: 'GET /reputation/wallet/not-a-wallet?a=1&b=2',
      amount: '$0.01',
      price_usd: '0.01',
      token: 'USDC',
      maxTimeoutSeconds: 120,
      retryable: true,
      recipient: TREASURY,
      recipients: [TREASURY],
      supportedChains: [8453, 43114, 42161, 10, 137, 42220],
      pricing: { version: 'cost-tiered@5', tier: 'wallet-lookup' },
      free_preview: { endpoint: '/wallets/not-a-wallet/chains' },
      facilitator: 'http://127.0.0.1:9/facilitator',
      error: 'payment_required',
      mimeType: 'application/json',
    });
    expect(body.accepts).toHaveLength(6);
    expect(body.accepts[0]).toEqual({
      scheme: 'exact',
      network: 'eip155:8453',
      asset: BASE_USDC,
      amount: '10000',
      payTo: TREASURY,
      maxTimeoutSeconds: 120,
      extra: { name: 'USD Coin', version: '2' },
    });
    expect(body.accepts[5].extra).toEqual({ name: 'USDC', version: '2' });
    expect(body.see_also).toEqual(
      expect.arrayContaining(['GET /health', 'GET /badge/{wallet}.svg', 'POST /a2a', 'POST /mcp']),
    );
    expect(runs.count).toBe(before);
  });

  it('prices ?snapshot=true with its own tier and leaves free_preview out for the rater tier', async () => {
    const snap = await (await get(`/v1/reputation/wallet/${WALLET}?snapshot=true`)).json();
    expect(snap.pricing.tier).toBe('wallet-snapshot');
    expect(snap.accepts[0].amount).toBe('50000');
    expect(snap.resource).toBe(`GET /reputation/wallet/${WALLET}?snapshot=true`);
    const rater = await get(`/reputation/rater/${WALLET}`);
    expect(rater.status).toBe(402);
    const body = await rater.json();
    expect(Object.keys(body)).toHaveLength(21);
    expect(body).not.toHaveProperty('free_preview');
  });

  it('GET /api is an informative 402', async () => {
    const res = await get('/api', payment());
    expect(res.status).toBe(402);
    const body = await res.json();
    expect(Object.keys(body).sort()).toEqual([...FIELDS].sort());
    expect(body.resource).toBe('GET /api');
    expect(res.headers.get('payment-required')).toBeTruthy();
    expect(stub.verifies).toBe(0);
  });

  it('pays, then reuses the receipt for the identical resource only', async () => {
    const header = payment();
    const before = runs.count;
    const paid = await get(`/reputation/wallet/${WALLET}`, header);
    expect(paid.status).toBe(200);
    expect(paid.headers.get('x-payment-reused')).toBe('false');
    const tx = paid.headers.get('x-payment-receipt')!;
    expect(tx).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await paid.json()).toEqual({ wallet: WALLET, receipt: tx });

    const settles = stub.settles.length;
    const again = await get(`/reputation/wallet/${WALLET}`, header);
    expect(again.status).toBe(200);
    expect(again.headers.get('x-payment-reused')).toBe('true');
    expect(again.headers.get('x-payment-receipt')).toBe(tx);
    // The /v1 alias and a reordered query are the same canonical resource.
    expect((await get(`/v1/reputation/wallet/${WALLET}`, header)).headers.get('x-payment-reused')).toBe(
      'true',
    );
    expect(stub.settles.length).toBe(settles);

    const other = await get(`/reputation/wallet/${WALLET.replace('3', '4')}`, header);
    expect(other.status).toBe(402);
    expect((await other.json()).error).toBe('payment_resource_mismatch');
    // Reuses serve the stored bytes of the paid answer: the handler ran once.
    expect(runs.count).toBe(before + 1);

    // After the reuse window the same header is spent.
    clock = new Date(clock.getTime() + 901_000);
    const late = await get(`/reputation/wallet/${WALLET}`, header);
    expect(late.status).toBe(402);
    expect((await late.json()).error).toBe('payment_already_used');
    clock = new Date('2026-11-01T00:00:00Z');
  });

  it('stores the claim and the receipt rows', async () => {
    const claims = await t.db.query<{ status: string; amount: string }>(
      "SELECT status, amount FROM payment_claims WHERE status = 'settled'",
    );
    expect(claims.length).toBeGreaterThan(0);
    expect(claims[0]!.amount).toBe('10000');
    const receipts = await t.db.query<{ resource: string; expires_at: Date; created_at: Date }>(
      'SELECT resource, expires_at FROM payment_receipts',
    );
    expect(receipts[0]!.resource).toBe(`GET /reputation/wallet/${WALLET}`);
    expect(receipts[0]!.expires_at.toISOString()).toBe('2026-11-01T00:15:00.000Z');
  });

  it('rejects mismatched requirements without calling the facilitator', async () => {
    const v = stub.verifies;
    for (const [h, code] of [
      [payment({ amount: '9999' }), 'payment_requirements_mismatch'],
      [payment({ value: '1' }), 'payment_requirements_mismatch'],
      [payment({ payTo: PAYER }), 'payment_requirements_mismatch'],
      [payment({ asset: PAYER }), 'payment_requirements_mismatch'],
      [payment({ network: 'eip155:1' }), 'payment_requirements_mismatch'],
    ] as const) {
      const res = await get(`/reputation/wallet/${WALLET}`, h);
      expect(res.status).toBe(402);
      const body = await res.json();
      expect(body.error).toBe(code);
      expect(body.retryable).toBe(false);
    }
    expect(stub.verifies).toBe(v);
  });

  it('never answers 500 to hostile headers', async () => {
    const hostile = [
      'x'.repeat(100_000),
      '%%%not-base64%%%',
      Buffer.from('not json').toString('base64'),
      Buffer.from('null').toString('base64'),
      Buffer.from('[1,2]').toString('base64'),
      Buffer.from(JSON.stringify({ x402Version: 2, accepted: 5, payload: 'x' })).toString('base64'),
      Buffer.from(JSON.stringify({ x402Version: '2' })).toString('base64'),
      Buffer.from(JSON.stringify({ x402Version: 1, scheme: 'exact', network: 'base', payload: {} })).toString(
        'base64',
      ),
    ];
    for (const h of hostile) {
      const res = await get(`/reputation/wallet/${WALLET}`, h);
      expect(res.status).toBe(402);
      expect((await res.json()).error).toBe('invalid_payment_header');
    }
  });

  it('passes the facilitator verify refusal through as a 402', async () => {
    stub.verifyMode = 'invalid';
    const res = await get(`/reputation/wallet/${WALLET}`, payment());
    expect(res.status).toBe(402);
    expect((await res.json()).error).toBe('invalid_exact_evm_payload_signature');
  });

  it('answers a 422 from validate without settling; the same header then pays', async () => {
    const header = payment();
    const settles = stub.settles.length;
    const bad = await get('/reputation/wallet/not-a-wallet', header);
    expect(bad.status).toBe(422);
    expect(await bad.json()).toEqual({ detail: { error: 'not_an_address', wallet: 'not-a-wallet' } });
    expect(stub.settles.length).toBe(settles);
    const good = await get(`/reputation/wallet/${WALLET}`, header);
    expect(good.status).toBe(200);
    expect(stub.settles.length).toBe(settles + 1);
  });

  it('503 facilitator_unavailable when verify cannot reach it; nothing claimed', async () => {
    stub.verifyMode = 'refused';
    const header = payment();
    const res = await get(`/reputation/wallet/${WALLET}`, header);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toEqual({
      error: 'facilitator_unavailable',
      message: expect.any(String),
      retryable: true,
      retry_after_seconds: 5,
    });
    stub.verifyMode = 'ok';
    expect((await get(`/reputation/wallet/${WALLET}`, header)).status).toBe(200);
  });

  it('settle refused (never sent): releases the claim; the same header pays later', async () => {
    stub.settleMode = 'refused';
    const header = payment();
    const res = await get(`/reputation/wallet/${WALLET}`, header);
    expect(res.status).toBe(503);
    expect(await t.db.query("SELECT 1 FROM payment_claims WHERE status <> 'settled'")).toHaveLength(0);
    stub.settleMode = 'ok';
    const ok = await get(`/reputation/wallet/${WALLET}`, header);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-payment-reused')).toBe('false');
  });

  it('settle pending: keeps the claim as settling-unknown; a retry re-verifies and settles once', async () => {
    stub.settleMode = 'pending';
    const header = payment();
    const res = await get(`/reputation/wallet/${WALLET}`, header);
    expect(res.status).toBe(503);
    expect(await t.db.query("SELECT 1 FROM payment_claims WHERE status = 'settling-unknown'")).toHaveLength(
      1,
    );
    stub.settleMode = 'ok';
    expect((await get(`/reputation/wallet/${WALLET}`, header)).status).toBe(200);
    expect(await t.db.query("SELECT 1 FROM payment_claims WHERE status = 'settling-unknown'")).toHaveLength(
      0,
    );
  });

  it('settle timed out after spending: 503, then the retry is in flight (the chain decides), never charged twice', async () => {
    stub.settleMode = 'timeout';
    const header = payment();
    const settles = stub.settles.length;
    expect((await get(`/reputation/wallet/${WALLET}`, header)).status).toBe(503);
    stub.settleMode = 'ok';
    const retry = await get(`/reputation/wallet/${WALLET}`, header);
    expect(retry.status).toBe(402);
    expect(retry.headers.get('retry-after')).toBe('5');
    expect((await retry.json()).error).toBe('payment_in_flight');
    expect(stub.settles.length).toBe(settles);
    expect(await t.db.query("SELECT 1 FROM payment_claims WHERE status = 'settling-unknown'")).toHaveLength(
      1,
    );
  });

  it('a definitive settle failure releases the claim and answers 402', async () => {
    stub.settleMode = 'fail';
    const res = await get(`/reputation/wallet/${WALLET}`, payment());
    expect(res.status).toBe(402);
    expect((await res.json()).error).toBe('transaction_failed');
    expect(await t.db.query("SELECT 1 FROM payment_claims WHERE status = 'settling'")).toHaveLength(0);
  });

  it('two concurrent requests with one fresh header settle exactly once', async () => {
    const header = payment();
    const settles = stub.settles.length;
    const [a, b] = await Promise.all([
      get(`/reputation/wallet/${WALLET}`, header),
      get(`/reputation/wallet/${WALLET}`, header),
    ]);
    expect(stub.settles.length).toBe(settles + 1);
    const statuses = [a.status, b.status].sort();
    expect(statuses[0]).toBe(200);
    // The loser: served from the receipt, in flight (402) while the winner settles, or, once the
    // winner has recorded the settlement and is computing its answer, told the payment is spent
    // and its answer on its way (503 payment_spent_pending, naming the receipt).
    const loser = a.status === 200 ? b : a;
    const body = loser.status === 200 ? null : await loser.json();
    expect(['200', '402 payment_in_flight', '503 payment_spent_pending']).toContain(
      body ? `${loser.status} ${body.error}` : '200',
    );
    if (loser.status === 503) expect(loser.headers.get('x-payment-receipt')).toBe(stub.settles.at(-1));
  });

  it('accepts the x402 v2 PAYMENT-SIGNATURE header as well', async () => {
    const res = await app.request(`/reputation/wallet/${WALLET}?v2=1`, {
      headers: { 'PAYMENT-SIGNATURE': payment() },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-payment-reused')).toBe('false');
  });

  it('X402_ASSET_<NETWORK> overrides the quoted asset and is validated', () => {
    expect(loadConfig({ X402_ASSET_BASE: PAYER }).paymentAssetOverrides).toEqual({ base: PAYER });
    expect(() => loadConfig({ X402_ASSET_CELO: 'nope' })).toThrow(/X402_ASSET_CELO/);
  });

  it('canonical resource: /v1 stripped, HEAD as GET, query sorted', () => {
    expect(canonicalResource('HEAD', 'http://h/v1/x?b=1&a=2&a=1')).toBe('GET /x?a=2&a=1&b=1');
  });
});

describe('x402 paywall without TREASURY_ADDRESS', () => {
  it('answers 503 on metered routes and /api', async () => {
    const t = await openTestDatabase();
    try {
      const ctx: AppContext = {
        config: loadConfig({}),
        db: t.db,
        now: () => new Date(),
        facilitator: new StubFacilitator(),
      };
      const app = createAppShell(ctx);
      registerPaidRoute(app, ctx, {
        path: '/reputation/wallet/{wallet}',
        handler: walletEchoHandler('wallet-lookup', { count: 0 }),
      });
      registerApiChallenge(app, ctx);
      for (const path of [`/reputation/wallet/${WALLET}`, '/api']) {
        const res = await app.request(path, { headers: { 'X-PAYMENT': payment() } });
        expect(res.status).toBe(503);
        expect((await res.json()).error).toBe('payments_not_configured');
      }
    } finally {
      await t.close();
    }
  });
});
