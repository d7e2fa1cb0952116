/**
 * The paid flow end to end, offline and real: a local EDR chain (id 8453) with the project's own
 * EIP-3009 token, the x402 facilitator library behind HTTP, the production HTTP facilitator client
 * (X402_FACILITATOR_URL), the paywall on a tiny app with a fake paid handler, and a client that
 * signs with the x402 EVM exact scheme.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, type Hex } from 'viem';
import { loadConfig } from '../src/config.js';
import { createAppShell } from '../src/doors/http/app.js';
import type { AppContext } from '../src/doors/http/context.js';
import { registerPaidRoute } from '../src/doors/http/routes/reputation.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { walletEchoHandler } from './helpers/paid-handler.js';
import { nonceOf, signPayment, startLocalPayments, type LocalPayments } from './helpers/local-facilitator.js';

const AMOUNT = 10_000n; // wallet-lookup: $0.01
const WALLET_A = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const WALLET_B = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';

describe('x402 end to end (local chain + x402 facilitator)', () => {
  let rail: LocalPayments;
  let t: TestDatabase;
  let app: ReturnType<typeof createAppShell>;
  const runs = { count: 0 };

  const handler = walletEchoHandler('wallet-lookup', runs);

  beforeAll(async () => {
    rail = await startLocalPayments();
    t = await openTestDatabase();
    const config = loadConfig({
      TREASURY_ADDRESS: rail.treasury,
      X402_FACILITATOR_URL: rail.facilitatorUrl,
      X402_ASSET_BASE: rail.token,
    });
    // No injected facilitator: the production HTTP client on X402_FACILITATOR_URL.
    const ctx: AppContext = { config, db: t.db, now: () => new Date() };
    app = createAppShell(ctx);
    registerPaidRoute(app, ctx, { path: '/reputation/wallet/{wallet}', handler });
  });
  afterAll(async () => {
    await t?.close();
    await rail?.close();
  });

  const get = (path: string, header?: string) =>
    app.request(path, header ? { headers: { 'X-PAYMENT': header } } : {});
  const challenge = async (path: string) => {
    const res = await get(path);
    expect(res.status).toBe(402);
    return res.json();
  };
  const balances = async () => ({
    payer: await rail.balanceOf(rail.payer),
    treasury: await rail.balanceOf(rail.treasury),
  });

  it('quotes the local token on base', async () => {
    const res = await get(`/reputation/wallet/${WALLET_A}`);
    expect(res.status).toBe(402);
    expect(res.headers.get('x-accept-payment')).toBe('x402 USDC 2.0');
    const body = await res.json();
    expect(Object.keys(body)).toHaveLength(22);
    expect(body.accepts[0]).toMatchObject({
      network: 'eip155:8453',
      asset: rail.token,
      payTo: rail.treasury,
      amount: '10000',
    });
  });

  let paidHeader = '';
  let paidTx = '';

  it('pays: 200 with a real settlement tx; balances move by exactly the amount', async () => {
    const before = await balances();
    const { header } = await signPayment(await challenge(`/reputation/wallet/${WALLET_A}`), rail.payerKey);
    const res = await get(`/reputation/wallet/${WALLET_A}`, header);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-payment-reused')).toBe('false');
    paidTx = res.headers.get('x-payment-receipt')!;
    expect(paidTx).toMatch(/^0x[0-9a-f]{64}$/);
    const receipt = await createPublicClient({ transport: http(rail.node.rpcUrl) }).getTransactionReceipt({
      hash: paidTx as Hex,
    });
    expect(receipt.status).toBe('success');
    expect(receipt.to?.toLowerCase()).toBe(rail.token.toLowerCase());
    const after = await balances();
    expect(before.payer - after.payer).toBe(AMOUNT);
    expect(after.treasury - before.treasury).toBe(AMOUNT);
    expect(rail.settlements()).toBe(1);
    paidHeader = header;
  });

  it('the same header for the same resource is reused, with no second transfer', async () => {
    const before = await balances();
    const res = await get(`/reputation/wallet/${WALLET_A}`, paidHeader);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-payment-reused')).toBe('true');
    expect(res.headers.get('x-payment-receipt')).toBe(paidTx);
    expect(await balances()).toEqual(before);
    expect(rail.settlements()).toBe(1);
  });

  it('the same header for another resource is rejected', async () => {
    const runsBefore = runs.count;
    const res = await get(`/reputation/wallet/${WALLET_B}`, paidHeader);
    expect(res.status).toBe(402);
    // The stock client's payload names the resource it paid for (A): a mismatch with B.
    expect((await res.json()).error).toBe('payment_requirements_mismatch');
    expect(runs.count).toBe(runsBefore);
    expect(rail.settlements()).toBe(1);
  });

  it('two concurrent requests with one fresh header settle exactly once', async () => {
    const before = await balances();
    const settled = rail.settlements();
    const { header } = await signPayment(await challenge(`/reputation/wallet/${WALLET_B}`), rail.payerKey);
    const [a, b] = await Promise.all([
      get(`/reputation/wallet/${WALLET_B}`, header),
      get(`/reputation/wallet/${WALLET_B}`, header),
    ]);
    const statuses = [a.status, b.status].sort();
    expect(statuses[0]).toBe(200);
    // The loser: served, in flight (402), or told the payment is spent and its answer on its way
    // (503 payment_spent_pending) while the winner computes it.
    const loser = a.status === 200 ? b : a;
    const body = loser.status === 200 ? null : await loser.json();
    expect(['200', '402 payment_in_flight', '503 payment_spent_pending']).toContain(
      body ? `${loser.status} ${body.error}` : '200',
    );
    expect(rail.settlements()).toBe(settled + 1);
    const after = await balances();
    expect(before.payer - after.payer).toBe(AMOUNT);
  });

  it('an amount signed too low or a wrong payTo is rejected and nothing settles', async () => {
    const before = await balances();
    const settled = rail.settlements();
    const ch = await challenge(`/reputation/wallet/${WALLET_A}?x=1`);
    const low = await signPayment(ch, rail.payerKey, (r) => ({ ...r, amount: '9999' }));
    const wrongTo = await signPayment(ch, rail.payerKey, (r) => ({ ...r, payTo: rail.payer }));
    for (const { header } of [low, wrongTo]) {
      const res = await get(`/reputation/wallet/${WALLET_A}?x=1`, header);
      expect(res.status).toBe(402);
      expect((await res.json()).error).toBe('payment_requirements_mismatch');
    }
    // Lying in `accepted` while signing a low value: the facilitator would refuse it too.
    const sneaky = await signPayment(ch, rail.payerKey, (r) => ({ ...r, amount: '1' }));
    sneaky.payload.accepted.amount = '10000';
    const res = await get(
      `/reputation/wallet/${WALLET_A}?x=1`,
      Buffer.from(JSON.stringify(sneaky.payload)).toString('base64'),
    );
    expect(res.status).toBe(402);
    expect(rail.settlements()).toBe(settled);
    expect(await balances()).toEqual(before);
  });

  it('facilitator down: 503 + Retry-After 5, no transfer; restarted, the SAME header pays', async () => {
    const before = await balances();
    const { header, payload } = await signPayment(
      await challenge(`/reputation/wallet/${WALLET_A}?y=2`),
      rail.payerKey,
    );
    await rail.stopFacilitator();
    try {
      const res = await get(`/reputation/wallet/${WALLET_A}?y=2`, header);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(await res.json()).toMatchObject({
        error: 'facilitator_unavailable',
        retryable: true,
        retry_after_seconds: 5,
      });
      expect(await balances()).toEqual(before);
      expect(await rail.authorizationUsed(rail.payer, nonceOf(payload))).toBe(false);
    } finally {
      await rail.startFacilitator();
    }
    const ok = await get(`/reputation/wallet/${WALLET_A}?y=2`, header);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('x-payment-reused')).toBe('false');
    expect(before.payer - (await balances()).payer).toBe(AMOUNT);
  });

  it('a 422 from validate with a valid payment leaves the authorization unused; it never unlocks another resource', async () => {
    const before = await balances();
    const settled = rail.settlements();
    // Sign the challenge of the mistyped subject (it quotes like a valid one).
    const ch = await challenge('/reputation/wallet/not-a-wallet');
    const { header, payload } = await signPayment(ch, rail.payerKey);
    const bad = await get('/reputation/wallet/not-a-wallet', header);
    expect(bad.status).toBe(422);
    expect(rail.settlements()).toBe(settled);
    expect(await rail.authorizationUsed(rail.payer, nonceOf(payload))).toBe(false);
    expect(await balances()).toEqual(before);
    const other = await get(`/reputation/wallet/${WALLET_B}?z=3`, header);
    expect(other.status).toBe(402);
    expect((await other.json()).error).toBe('payment_requirements_mismatch');
    expect(await rail.authorizationUsed(rail.payer, nonceOf(payload))).toBe(false);
    expect(rail.settlements()).toBe(settled);
  });
});
