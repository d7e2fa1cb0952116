/**
 * The paid door, tried as a buyer and as an attacker would (issue 9, points 1–5 and the paid
 * capacity cap), on the real metered handlers of an (empty) index with a stub facilitator:
 *  1. a payment names its resource and echoes its requirement: both must match the request;
 *     a settling-unknown claim stays bound to its resource;
 *  2. a receipt reuse serves the byte-identical paid body and writes nothing (snapshot included);
 *  3. credentials that can never become valid get a precise 402, not a 503 "retry";
 *  4. paid answers carry PAYMENT-RESPONSE / X-PAYMENT-RESPONSE;
 *  5. X-PAYMENT and PAYMENT-SIGNATURE with different values is a 400;
 *  + MAX_CONCURRENT_PAID_RUNS: a full house answers 503 + Retry-After before anything is settled.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { decodePaymentResponseHeader } from '@x402/core/http';
import { loadConfig } from '../src/config.js';
import { createApp } from '../src/doors/http/app.js';
import type { AppContext } from '../src/doors/http/context.js';
import { tierById } from '../src/payments/pricing.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { PAYER, payment, StubFacilitator, TREASURY } from './helpers/x402-stub.js';

const A = '0xaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const B = '0xbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
/** A distinct wallet per case (the real handlers refuse unknown query parameters). */
const W = (n: number) => `0x${n.toString(16).padStart(40, 'c')}`;
const NOW = new Date('2026-11-01T12:00:00Z');
const nowSec = Math.floor(NOW.getTime() / 1000);
const SNAPSHOT = tierById('wallet-snapshot').amount;

describe('the paid door, exactly (stub facilitator, real handlers)', () => {
  let t: TestDatabase;
  let ctx: AppContext;
  let app: ReturnType<typeof createApp>;
  let stub: StubFacilitator;

  beforeAll(async () => {
    t = await openTestDatabase();
    stub = new StubFacilitator();
    ctx = {
      config: loadConfig({ TREASURY_ADDRESS: TREASURY, MAX_CONCURRENT_PAID_RUNS: '2' }),
      db: t.db,
      now: () => NOW,
      facilitator: stub,
    };
    app = createApp(ctx);
  }, 120_000);
  afterAll(() => t?.close());
  beforeEach(() => {
    stub.verifyMode = 'ok';
    stub.settleMode = 'ok';
  });

  const get = (path: string, headers: Record<string, string> = {}) => app.request(path, { headers });
  const pay = (path: string, header: string) => get(path, { 'X-PAYMENT': header });
  const count = async (table: string) =>
    Number((await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n);

  // ------------------------------------------------------------------ 1. resource binding
  it('a payment made for /reputation/rater/A is refused on /reputation/rater/B, nothing settled', async () => {
    const settles = stub.settles.length;
    const header = payment({ resource: `GET /reputation/rater/${A}` });
    const res = await pay(`/reputation/rater/${B}`, header);
    expect(res.status).toBe(402);
    const body = await res.json();
    expect(body.error).toBe('payment_requirements_mismatch');
    expect(body.message).toContain(`/reputation/rater/${A}`);
    expect(stub.settles.length).toBe(settles);
    // The same payment on the resource it names pays.
    expect((await pay(`/reputation/rater/${A}`, header)).status).toBe(200);
    // The x402 v2 ResourceInfo object form is read too.
    const v2 = payment({
      resource: { url: `http://elsewhere.example/reputation/rater/${A}`, mimeType: 'application/json' },
    });
    expect((await (await pay(`/reputation/rater/${B}`, v2)).json()).error).toBe(
      'payment_requirements_mismatch',
    );
  });

  it('every field of accepted must match the requirement', async () => {
    const v = stub.verifies;
    for (const over of [
      { maxTimeoutSeconds: 999 },
      { extra: { name: 'Fake Coin', version: '2' } },
      { extra: { name: 'USD Coin', version: '2', spender: '0x1' } },
    ]) {
      const res = await pay(`/reputation/rater/${W(11)}`, payment(over));
      expect(res.status).toBe(402);
      expect((await res.json()).error).toBe('payment_requirements_mismatch');
    }
    expect(stub.verifies).toBe(v);
  });

  it('a settling-unknown claim stays bound to its resource on retry', async () => {
    stub.settleMode = 'pending';
    const header = payment();
    expect((await pay(`/reputation/rater/${W(21)}`, header)).status).toBe(503);
    stub.settleMode = 'ok';
    const settles = stub.settles.length;
    const other = await pay(`/reputation/rater/${W(121)}`, header);
    expect(other.status).toBe(402);
    expect((await other.json()).error).toBe('payment_resource_mismatch');
    expect(stub.settles.length).toBe(settles);
    const [row] = await t.db.query<{ status: string; resource: string }>(
      "SELECT status, resource FROM payment_claims WHERE status = 'settling-unknown'",
    );
    expect(row).toEqual({ status: 'settling-unknown', resource: `GET /reputation/rater/${W(21)}` });
    // Its own resource settles it.
    expect((await pay(`/reputation/rater/${W(21)}`, header)).status).toBe(200);
    expect(stub.settles.length).toBe(settles + 1);
  });

  // ------------------------------------------------------------------ 2. byte-identical reuse
  it('snapshot=true replayed with its receipt returns the paid bytes and writes nothing', async () => {
    const path = `/reputation/wallet/${A}?snapshot=true`;
    const header = payment({ amount: SNAPSHOT, resource: `GET ${path}` });
    const paid = await pay(path, header);
    expect(paid.status).toBe(200);
    const paidBytes = await paid.text();
    expect(JSON.parse(paidBytes).snapshot.snapshot_id).toBeTruthy();
    const snapshots = await count('snapshot_receipts');
    const receipts = await count('payment_receipts');
    const settles = stub.settles.length;
    for (let i = 0; i < 20; i++) {
      const again = await pay(i % 2 ? `/v1${path}` : path, header);
      expect(again.status).toBe(200);
      expect(again.headers.get('x-payment-reused')).toBe('true');
      expect(await again.text()).toBe(paidBytes);
    }
    expect(await count('snapshot_receipts')).toBe(snapshots);
    expect(await count('payment_receipts')).toBe(receipts);
    expect(stub.settles.length).toBe(settles);
  });

  it('any paid route: the reuse is byte-identical to the paid answer', async () => {
    const header = payment();
    const paid = await pay(`/reputation/wallet/${B}`, header);
    const bytes = await paid.text();
    const again = await pay(`/reputation/wallet/${B}`, header);
    expect(await again.text()).toBe(bytes);
    expect(again.headers.get('content-type')).toMatch(/^application\/json/);
  });

  // ------------------------------------------------------------------ 3. never-valid credentials
  it.each([
    ['expired validBefore', { validBefore: String(nowSec - 60) }, 'payment_expired'],
    ['validBefore 0', { validBefore: '0' }, 'payment_expired'],
    ['validAfter in the future', { validAfter: String(nowSec + 3600) }, 'payment_not_yet_valid'],
    ['a garbage signature', { signature: `0x${'ab'.repeat(65)}` }, 'invalid_payment_signature'],
    [
      'a wrong signer',
      { signerKey: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d' as const },
      'invalid_payment_signature',
    ],
    ['a signature for another chain', { signChainId: 1 }, 'invalid_payment_signature'],
  ])('%s: 402 %s, the facilitator is never asked', async (_name, over, code) => {
    const v = stub.verifies;
    const settles = stub.settles.length;
    const res = await pay(`/reputation/rater/${W(31)}`, payment(over));
    expect(res.status).toBe(402);
    const body = await res.json();
    expect(body.error).toBe(code);
    expect(body.retryable).toBe(false);
    expect(res.headers.get('retry-after')).toBeNull();
    expect(stub.verifies).toBe(v);
    expect(stub.settles.length).toBe(settles);
  });

  // ------------------------------------------------------------------ 4. settlement headers
  it('a paid answer carries PAYMENT-RESPONSE and X-PAYMENT-RESPONSE (x402 settle response); so does its reuse', async () => {
    const header = payment();
    const res = await pay(`/reputation/rater/${W(141)}`, header);
    expect(res.status).toBe(200);
    const tx = res.headers.get('x-payment-receipt');
    const v2 = res.headers.get('payment-response');
    expect(v2).toBeTruthy();
    expect(res.headers.get('x-payment-response')).toBe(v2);
    expect(decodePaymentResponseHeader(v2!)).toEqual({
      success: true,
      transaction: tx,
      network: 'eip155:8453',
      payer: PAYER.toLowerCase(),
    });
    const again = await pay(`/reputation/rater/${W(141)}`, header);
    expect(again.headers.get('payment-response')).toBe(v2);
    expect(again.headers.get('x-payment-reused')).toBe('true');
  });

  // ------------------------------------------------------------------ 5. two payment headers
  it('X-PAYMENT and PAYMENT-SIGNATURE with different values: 400 naming both, nothing verified', async () => {
    const v = stub.verifies;
    const res = await get(`/reputation/rater/${W(51)}`, {
      'X-PAYMENT': payment(),
      'PAYMENT-SIGNATURE': payment(),
    });
    expect(res.status).toBe(400);
    const body = await res.json();
    expect(body.error).toBe('conflicting_payment_headers');
    expect(body.message).toContain('X-PAYMENT');
    expect(body.message).toContain('PAYMENT-SIGNATURE');
    expect(stub.verifies).toBe(v);
    // The same value in both is one payment.
    const same = payment();
    expect(
      (await get(`/reputation/rater/${W(52)}`, { 'X-PAYMENT': same, 'PAYMENT-SIGNATURE': same })).status,
    ).toBe(200);
  });

  // ------------------------------------------------------------------ capacity
  it('over MAX_CONCURRENT_PAID_RUNS: 503 paid_capacity_exhausted + Retry-After, nothing claimed or settled', async () => {
    // Hold two paid runs inside verify.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const verify = stub.verify.bind(stub);
    let entered = 0;
    stub.verify = async (p, r) => {
      entered += 1;
      await gate;
      return verify(p, r);
    };
    try {
      const held = [
        pay(`/reputation/rater/${W(61)}`, payment()),
        pay(`/reputation/rater/${W(62)}`, payment()),
      ];
      while (entered < 2) await new Promise((r) => setTimeout(r, 5));
      const settles = stub.settles.length;
      const claims = await count('payment_claims');
      const header = payment();
      const busy = await pay(`/reputation/rater/${W(63)}`, header);
      expect(busy.status).toBe(503);
      expect(busy.headers.get('retry-after')).toBe('5');
      expect(await busy.json()).toMatchObject({
        error: 'paid_capacity_exhausted',
        retryable: true,
        retry_after_seconds: 5,
      });
      expect(await count('payment_claims')).toBe(claims);
      expect(stub.settles.length).toBe(settles);
      release();
      expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200]);
      // Capacity back: the SAME header pays.
      expect((await pay(`/reputation/rater/${W(63)}`, header)).status).toBe(200);
    } finally {
      release();
      stub.verify = verify;
    }
  });
});
