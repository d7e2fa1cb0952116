/**
 * Reconciliation of `settling-unknown` claims against a real local chain (issue 9, point 7): the
 * local market (EIP-3009 token + the x402 facilitator library over HTTP), the paywall in front of a
 * fake handler, and a facilitator whose settle answer is lost: the claim is left unknown, then
 * `reconcilePayments` reads the token's authorizationState on chain and settles it (the buyer's
 * retry with the SAME header is then served, with no second transfer) or releases it once its
 * validBefore has passed unused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Hex } from 'viem';
import { loadConfig, type Config } from '../src/config.js';
import { createAppShell } from '../src/doors/http/app.js';
import type { AppContext } from '../src/doors/http/context.js';
import { createHttpFacilitator, type FacilitatorClient } from '../src/payments/facilitator.js';
import { registerPaidRoute } from '../src/doors/http/routes/reputation.js';
import { chainAuthorizationReader } from '../src/payments/authorization-state.js';
import { reconcilePayments } from '../src/payments/reconcile.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { walletEchoHandler } from './helpers/paid-handler.js';
import { nonceOf, signPayment, startLocalPayments, type LocalPayments } from './helpers/local-facilitator.js';

const WALLET = '0xcccccccccccccccccccccccccccccccccccccccc';

describe('reconciliation of unknown settlements (local chain)', () => {
  let rail: LocalPayments;
  let t: TestDatabase;
  let config: Config;
  let app: ReturnType<typeof createAppShell>;
  const runs = { count: 0 };
  /** What settle does: 'ok', 'settle-then-lose' (it settles, the answer is lost), 'lose' (never sent on, answer lost). */
  let settleMode: 'ok' | 'settle-then-lose' | 'lose' = 'ok';

  const handler = walletEchoHandler('wallet-lookup', runs);

  beforeAll(async () => {
    rail = await startLocalPayments();
    t = await openTestDatabase();
    const base = loadConfig({
      TREASURY_ADDRESS: rail.treasury,
      X402_FACILITATOR_URL: rail.facilitatorUrl,
      X402_ASSET_BASE: rail.token,
    });
    // The base chain's RPC is the local node: the reconciliation reads the token there.
    config = {
      ...base,
      chains: base.chains.map((c) =>
        c.network === 'base' ? { ...c, rpcUrl: rail.node.rpcUrl, chainId: 8453 } : c,
      ),
    };
    const real = createHttpFacilitator(rail.facilitatorUrl);
    const lossy: FacilitatorClient = {
      verify: (p, r) => real.verify(p, r),
      getSupported: () => real.getSupported(),
      async settle(p, r) {
        if (settleMode === 'settle-then-lose') await real.settle(p, r);
        if (settleMode !== 'ok') throw new DOMException('The operation timed out', 'TimeoutError');
        return real.settle(p, r);
      },
    };
    const ctx: AppContext = { config, db: t.db, now: () => new Date(), facilitator: lossy };
    app = createAppShell(ctx);
    registerPaidRoute(app, ctx, { path: '/reputation/wallet/{wallet}', handler });
  }, 180_000);
  afterAll(async () => {
    await t?.close();
    await rail?.close();
  });

  const get = (path: string, header?: string) =>
    app.request(path, header ? { headers: { 'X-PAYMENT': header } } : {});
  const sign = async (path: string) => signPayment(await (await get(path)).json(), rail.payerKey);
  const claimStatus = async (nonce: string) =>
    (
      await t.db.query<{ status: string }>('SELECT status FROM payment_claims WHERE nonce = $1', [
        nonce.toLowerCase(),
      ])
    )[0]?.status ?? null;

  it('spent on chain, answer lost: reconciled to settled; the retry is served from the receipt with no second transfer', async () => {
    const path = `/reputation/wallet/${WALLET}`;
    const { header, payload } = await sign(path);
    const before = await rail.balanceOf(rail.payer);
    settleMode = 'settle-then-lose';
    try {
      expect((await get(path, header)).status).toBe(503);
    } finally {
      settleMode = 'ok';
    }
    expect(await claimStatus(nonceOf(payload))).toBe('settling-unknown');
    expect(await rail.authorizationUsed(rail.payer, nonceOf(payload))).toBe(true);
    // Before reconciliation the retry cannot be served (the facilitator says the nonce is used).
    expect((await get(path, header)).status).toBe(402);

    const report = await reconcilePayments({ db: t.db, config });
    expect(report).toMatchObject({ examined: 1, settled: 1, released: 0, errors: [] });
    expect(await claimStatus(nonceOf(payload))).toBe('settled');

    const settlements = rail.settlements();
    const runsBefore = runs.count;
    const retry = await get(path, header);
    expect(retry.status).toBe(200);
    const tx = retry.headers.get('x-payment-receipt') as Hex;
    expect(tx).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await retry.json()).receipt).toBe(tx);
    expect(runs.count).toBe(runsBefore + 1);
    // Served again: the same bytes, no run, no transfer.
    expect((await get(path, header)).headers.get('x-payment-reused')).toBe('true');
    expect(runs.count).toBe(runsBefore + 1);
    expect(rail.settlements()).toBe(settlements);
    expect(before - (await rail.balanceOf(rail.payer))).toBe(10_000n);
  });

  it('spent, but the provider shows no transaction: kept undecided (never settled without a receipt), then served once it does', async () => {
    const path = `/reputation/wallet/${WALLET}?x=notx`;
    const { header, payload } = await sign(path);
    settleMode = 'settle-then-lose';
    try {
      expect((await get(path, header)).status).toBe(503);
    } finally {
      settleMode = 'ok';
    }
    expect(await claimStatus(nonceOf(payload))).toBe('settling-unknown');
    const chain = chainAuthorizationReader(config);
    // a provider that refuses the log range: spent, transaction unknown
    const blind = async (q: Parameters<typeof chain>[0]) => ({ ...(await chain(q)), tx: null });
    const report = await reconcilePayments({ db: t.db, config, readAuthorization: blind });
    expect(report).toMatchObject({ examined: 1, settled: 0 });
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]).toMatch(/spent on chain, but its settlement transaction was not found/);
    expect(await claimStatus(nonceOf(payload))).toBe('settling-unknown');
    // the next run, with the transaction visible, records it; the buyer's retry is served
    expect(await reconcilePayments({ db: t.db, config })).toMatchObject({ settled: 1, errors: [] });
    const retry = await get(path, header);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('x-payment-receipt')).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it('never spent: pending while valid, released once validBefore has passed', async () => {
    const path = `/reputation/wallet/${WALLET}?x=never`;
    const { header, payload } = await sign(path);
    settleMode = 'lose';
    try {
      expect((await get(path, header)).status).toBe(503);
    } finally {
      settleMode = 'ok';
    }
    expect(await claimStatus(nonceOf(payload))).toBe('settling-unknown');
    expect(await reconcilePayments({ db: t.db, config })).toMatchObject({
      examined: 1,
      settled: 0,
      released: 0,
      pending: 1,
    });
    expect(await claimStatus(nonceOf(payload))).toBe('settling-unknown');
    const later = new Date(Date.now() + 3600_000);
    expect(await reconcilePayments({ db: t.db, config, now: () => later })).toMatchObject({
      examined: 1,
      released: 1,
    });
    expect(await claimStatus(nonceOf(payload))).toBeNull();
    expect(await rail.authorizationUsed(rail.payer, nonceOf(payload))).toBe(false);
  });

  it('a network without an RPC stays undecided and is reported', async () => {
    const path = `/reputation/wallet/${WALLET}?x=norpc`;
    const { header } = await sign(path);
    settleMode = 'lose';
    try {
      expect((await get(path, header)).status).toBe(503);
    } finally {
      settleMode = 'ok';
    }
    const noRpc = { ...config, chains: config.chains.filter((c) => c.network !== 'base') };
    const r = await reconcilePayments({ db: t.db, config: noRpc });
    expect(r.errors).toHaveLength(1);
    expect(r.errors[0]).toMatch(/no RPC/);
  });
});
