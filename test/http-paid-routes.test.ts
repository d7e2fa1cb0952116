/**
 * The metered routes as mounted in the app: the x402 paywall in front of the real handlers, on the
 * demo index. A stub facilitator stands in for settlement here (the real rail, a local chain with
 * an EIP-3009 token and the x402 facilitator library, is payments-e2e.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Demo } from '../src/demo/run-demo.js';
import { createApp } from '../src/doors/http/app.js';
import type { AppContext } from '../src/doors/http/context.js';
import type { PaidHandler } from '../src/paid/handler.js';
import { paidHandlers } from '../src/paid/index.js';
import { tierById } from '../src/payments/pricing.js';
import { openDemoCopy } from './helpers/demo.js';
import { payment, StubFacilitator, TREASURY } from './helpers/x402-stub.js';

const NOW = new Date('2026-11-01T12:00:00Z');

describe('metered routes behind the paywall (demo index)', () => {
  let demo: Demo;
  let stub: StubFacilitator;
  let ctx: AppContext;
  let app: ReturnType<typeof createApp>;
  let wallet: string;

  beforeAll(async () => {
    demo = await openDemoCopy();
    stub = new StubFacilitator();
    ctx = {
      config: { ...demo.config, treasuryAddress: TREASURY },
      db: demo.db,
      now: () => NOW,
      facilitator: stub,
    };
    app = createApp(ctx);
    wallet = demo.facts.multiChainOwner.address;
  }, 300_000);
  afterAll(async () => {
    await demo?.close();
  });

  const get = (path: string, header?: string) =>
    app.request(path, header ? { headers: { 'X-PAYMENT': header } } : {});

  it.each([
    ['/reputation/wallet/W', 'wallet-lookup'],
    ['/reputation/wallet/W?snapshot=true', 'wallet-snapshot'],
    ['/reputation/wallet/W/history?bucket=month', 'wallet-history'],
    ['/reputation/agent/base/0', 'agent-detail'],
    ['/reputation/rater/W', 'rater-profile'],
    ['/leaderboard/page?offset=100', 'leaderboard-deep'],
    ['/v1/reputation/wallet/W', 'wallet-lookup'],
  ])('%s without payment is the 402 quote of tier %s', async (path, tierId) => {
    const res = await get(path.replace('W', wallet));
    expect(res.status).toBe(402);
    const body = await res.json();
    const tier = tierById(tierId);
    expect(body.pricing.tier).toBe(tierId);
    expect(body.accepts[0]).toMatchObject({ amount: tier.amount, payTo: TREASURY, network: 'eip155:8453' });
    expect(body.price_usd).toBe(tier.price_usd);
    expect('free_preview' in body).toBe(tierId !== 'rater-profile');
    expect(res.headers.get('x-accept-payment')).toBe('x402 USDC 2.0');
    expect(res.headers.get('api-version')).toBe('2.0.0');
  });

  it('quotes a mistyped subject like a valid one (the challenge comes before validation)', async () => {
    const res = await get('/reputation/wallet/not-a-wallet');
    expect(res.status).toBe(402);
    expect((await res.json()).pricing.tier).toBe('wallet-lookup');
  });

  it('a paid call answers what the handler answers, with the receipt headers; reuse is free', async () => {
    const header = payment();
    const res = await get(`/reputation/wallet/${wallet.toUpperCase().replace('0X', '0x')}`, header);
    expect(res.status).toBe(200);
    const receipt = res.headers.get('x-payment-receipt');
    expect(receipt).toMatch(/^0x[0-9a-f]{64}$/);
    expect(res.headers.get('x-payment-reused')).toBe('false');
    const body = await res.json();
    const h = paidHandlers['wallet-lookup'] as PaidHandler<unknown>;
    const v = await h.validate(ctx, { params: { wallet }, query: {} });
    expect(v.ok).toBe(true);
    const direct = await h.run(ctx, (v as { ok: true; input: unknown }).input, { receipt });
    expect(body).toEqual(JSON.parse(JSON.stringify(direct.body)));
    expect(body.policy_version).toBe('equal-weight-per-chain@2');
    const settled = stub.settles.length;
    const again = await get(`/reputation/wallet/${wallet.toUpperCase().replace('0X', '0x')}`, header);
    expect(again.status).toBe(200);
    expect(again.headers.get('x-payment-reused')).toBe('true');
    expect(stub.settles.length).toBe(settled);
  });

  it('snapshot=true is charged as the snapshot tier and writes one durable receipt row', async () => {
    const [{ n: before }] = (await demo.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM snapshot_receipts',
    )) as [{ n: number }];
    const res = await get(
      `/reputation/wallet/${wallet}?snapshot=true`,
      payment({ amount: tierById('wallet-snapshot').amount }),
    );
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.snapshot).toMatchObject({ policy_version: 'equal-weight-per-chain@2' });
    expect(body.snapshot.inputs_digest).toMatch(/^[0-9a-f]{64}$/);
    const rows = await demo.db.query<{ payment_receipt: string; inputs_digest: string }>(
      'SELECT payment_receipt, inputs_digest FROM snapshot_receipts WHERE snapshot_id = $1',
      [body.snapshot.snapshot_id],
    );
    expect(rows).toEqual([
      { payment_receipt: res.headers.get('x-payment-receipt'), inputs_digest: body.snapshot.inputs_digest },
    ]);
    const [{ n: after }] = (await demo.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM snapshot_receipts',
    )) as [{ n: number }];
    expect(after).toBe(before + 1);
  });

  it('a signed amount of the cheaper tier does not buy the snapshot', async () => {
    const settled = stub.settles.length;
    const res = await get(`/reputation/wallet/${wallet}?snapshot=true`, payment());
    expect(res.status).toBe(402);
    expect(stub.settles.length).toBe(settled);
  });

  it('invalid input with a valid payment answers 404/422 and consumes nothing', async () => {
    const settled = stub.settles.length;
    const header = payment({ amount: tierById('agent-detail').amount });
    const unknown = await get('/reputation/agent/nowhere/0', header);
    expect(unknown.status).toBe(404);
    const bad = await get('/reputation/agent/base/not-an-id', header);
    expect(bad.status).toBe(422);
    expect(stub.settles.length).toBe(settled);
    const ok = await get('/reputation/agent/base/0', header);
    expect(ok.status).toBe(200);
    const body = await ok.json();
    expect(Array.isArray(body.ratings)).toBe(true);
    expect(stub.settles.length).toBe(settled + 1);
  });

  it('GET /api is an informative 402; without a treasury the metered routes answer 503', async () => {
    const api = await get('/api');
    expect(api.status).toBe(402);
    const bare = createApp({ ...ctx, config: { ...ctx.config, treasuryAddress: null } });
    const res = await bare.request(`/reputation/wallet/${wallet}`);
    expect(res.status).toBe(503);
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect((await res.json()).error).toBe('payments_not_configured');
  });
});
