/**
 * Issue 30, on PGlite and PostgreSQL: a retry of a header whose claim another request (here, or on
 * another replica that died or lost its database) left `settling` is decided from the chain at
 * once, whatever the claim's age (src/payments/claim-decision.ts):
 *  - spent with its transaction → the settlement is recorded and the retry served `200` with the
 *    receipt, never settled again; several replicas deciding it at once record it once (one
 *    receipt row, the answer computed once);
 *  - spent, its transaction not visible → `503 payment_spent_pending` + Retry-After (the money
 *    moved: never "nothing was charged");
 *  - not spent → `402 payment_in_flight` saying it is not spent yet; the chain unreadable (or no
 *    reader) → the same code saying it could not be read; both retryable with Retry-After.
 * And the journal is replayed while the process runs (src/payments/journal-replay.ts): a settlement
 * journaled but not recorded is recorded as soon as the database answers again, with no request.
 * Real processes (a SIGKILL, a real connection cut) are in payments-processes-pg.test.ts.
 */
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import { createAppShell } from '../src/doors/http/app.js';
import type { AppContext } from '../src/doors/http/context.js';
import { registerPaidRoute } from '../src/doors/http/routes/reputation.js';
import { PaidUnavailableSchema } from '../src/doors/http/schemas/common.js';
import type { PaidHandler } from '../src/paid/handler.js';
import { openSettlementJournal, type SettlementJournal } from '../src/payments/journal.js';
import { startJournalReplay } from '../src/payments/journal-replay.js';
import { claimRepairs } from '../src/payments/claim-repairs.js';
import { receiptKeyOf } from '../src/payments/payment-header.js';
import { paymentOutcomeOf } from '../src/metrics.js';
import { claimAuthorization, recordSettlement, type ClaimKey } from '../src/store/payments.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { faultyDatabase, type FaultyDatabase } from './helpers/faulty-db.js';
import { tempDir } from './helpers/tmp.js';
import { PAYER, paymentPayload, StubFacilitator, TREASURY } from './helpers/x402-stub.js';

const WALLET = '0x4545454545454545454545454545454545454545';
const PATH = `/reputation/wallet/${WALLET}`;
const RESOURCE = `GET ${PATH}`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A paid handler that reads the database and counts its runs. */
function countingHandler(runs: { count: number }): PaidHandler<{ wallet: string }> {
  return {
    tier: 'wallet-lookup',
    validate: (_ctx, req) => ({ ok: true, input: { wallet: req.params.wallet ?? '' } }),
    async run(ctx, input, p) {
      await ctx.db.query('SELECT 1');
      runs.count += 1;
      return { status: 200, body: { wallet: input.wallet, receipt: p.receipt } };
    },
  };
}

describe('a retry of a settling claim, decided from the chain at once', () => {
  let t: TestDatabase;
  let f: FaultyDatabase;
  let stub: StubFacilitator;
  let config: Config;
  const runs = { count: 0 };

  /** A replica: its own app and paywall on the shared database; `chain: false` has no chain reader. */
  function replica(
    opts: {
      chain?: boolean;
      journal?: SettlementJournal;
      read?: AppContext['readAuthorization'];
      maxRuns?: number;
    } = {},
  ) {
    const ctx: AppContext = {
      config: opts.maxRuns ? { ...config, maxConcurrentPaidRuns: opts.maxRuns } : config,
      db: f.db,
      now: () => new Date(),
      facilitator: stub,
      ...(opts.journal ? { journal: opts.journal } : {}),
      ...(opts.chain === false ? {} : { readAuthorization: opts.read ?? stub.readAuthorization }),
    };
    const app = createAppShell(ctx);
    registerPaidRoute(app, ctx, { path: '/reputation/wallet/{wallet}', handler: countingHandler(runs) });
    return app;
  }
  async function pay(app: ReturnType<typeof replica>, header: string) {
    const req = new Request(`http://localhost${PATH}`, { headers: { 'X-PAYMENT': header } });
    const res = await app.request(req);
    const text = await res.text();
    return { res, text, body: JSON.parse(text), outcome: paymentOutcomeOf(req) };
  }
  /** A header whose claim another request holds `settling` (claimed, settled or not, nothing recorded). */
  async function settlingElsewhere(opts: { spent: boolean; tx?: string | null; validBefore?: string }) {
    const p = paymentPayload(opts.validBefore ? { validBefore: opts.validBefore } : {});
    const header = encodePaymentSignatureHeader(p);
    const auth = (p.payload as { authorization: { nonce: string; validBefore: string } }).authorization;
    const key: ClaimKey = ['eip155:8453', PAYER.toLowerCase(), auth.nonce.toLowerCase()];
    await claimAuthorization(t.db, key, {
      resource: RESOURCE,
      amount: '10000',
      receiptKey: receiptKeyOf(header, RESOURCE),
      validBefore: auth.validBefore,
    });
    const tx = opts.tx === undefined ? `0x${auth.nonce.slice(2, 10).padStart(64, 'e')}` : opts.tx;
    if (opts.spent) {
      stub.spent.add(auth.nonce);
      if (tx) stub.txOfNonce.set(auth.nonce, tx);
    }
    return { header, nonce: auth.nonce, key, tx };
  }
  const claimOf = async (nonce: string) =>
    (
      await t.db.query<{ status: string; settlement_tx: string | null }>(
        'SELECT status, settlement_tx FROM payment_claims WHERE nonce = $1',
        [nonce.toLowerCase()],
      )
    )[0] ?? null;
  const receiptsOf = (nonce: string) =>
    t.db.query<{ settlement_tx: string }>('SELECT settlement_tx FROM payment_receipts WHERE nonce = $1', [
      nonce.toLowerCase(),
    ]);

  beforeAll(async () => {
    t = await openTestDatabase();
    f = faultyDatabase(t.db);
    config = {
      ...loadConfig({ TREASURY_ADDRESS: TREASURY, X402_FACILITATOR_URL: 'http://127.0.0.1:9/f' }),
      // Long: every decision below is made well within it.
      paymentSettleTimeoutSeconds: 3600,
    };
  });
  afterAll(() => t.close());
  beforeEach(() => {
    f.restore();
    stub = new StubFacilitator();
  });

  it('spent with its transaction: the first retry is served 200 with the receipt, recorded once, never settled again', async () => {
    const app = replica();
    const s = await settlingElsewhere({ spent: true });
    const before = runs.count;
    const r = await pay(app, s.header);
    expect(r.res.status).toBe(200);
    expect(r.outcome).toBe('served_on_retry');
    expect(r.res.headers.get('x-payment-receipt')).toBe(s.tx);
    expect(r.res.headers.get('x-payment-reused')).toBe('false');
    expect(r.body).toEqual({ wallet: WALLET, receipt: s.tx });
    expect(await claimOf(s.nonce)).toEqual({ status: 'settled', settlement_tx: s.tx });
    expect(await receiptsOf(s.nonce)).toEqual([{ settlement_tx: s.tx }]);
    expect(stub.verifies).toBe(0);
    expect(stub.settles).toEqual([]);
    expect(runs.count - before).toBe(1);
    // From then on an ordinary receipt: the same bytes, never charged again.
    const again = await pay(app, s.header);
    expect(again.res.headers.get('x-payment-reused')).toBe('true');
    expect(again.text).toBe(r.text);
    expect(runs.count - before).toBe(1);
  });

  it('spent, and its validBefore passed meanwhile: still served (the money moved); unspent and expired: refused', async () => {
    const app = replica();
    const past = String(Math.floor(Date.now() / 1000) - 30);
    const s = await settlingElsewhere({ spent: true, validBefore: past });
    const r = await pay(app, s.header);
    expect(r.res.status).toBe(200);
    expect(r.res.headers.get('x-payment-receipt')).toBe(s.tx);
    const fresh = await pay(app, encodePaymentSignatureHeader(paymentPayload({ validBefore: past })));
    expect(fresh.res.status).toBe(402);
    expect(fresh.body.error).toBe('payment_expired');
    expect(stub.verifies).toBe(0);
  });

  it('not spent: 402 payment_in_flight saying so (retryable, Retry-After 5); nothing verified or settled', async () => {
    const app = replica();
    const s = await settlingElsewhere({ spent: false });
    const r = await pay(app, s.header);
    expect(r.res.status).toBe(402);
    expect(r.res.headers.get('retry-after')).toBe('5');
    expect(r.body).toMatchObject({ error: 'payment_in_flight', retryable: true });
    expect(Object.keys(r.body)).toHaveLength(22);
    expect(r.body.message).toMatch(/not spent on chain yet: nothing has been charged so far/);
    expect(r.body.next_action).toMatch(/SAME X-PAYMENT/);
    expect(r.res.headers.get('x-payment-receipt')).toBeNull();
    expect(stub.verifies).toBe(0);
    expect(stub.settles).toEqual([]);
    expect((await claimOf(s.nonce))?.status).toBe('settling');
  });

  it('the chain unreadable, or no chain reader: payment_in_flight saying it could not be read', async () => {
    const broken = replica({
      read: async () => {
        throw new Error('rpc down');
      },
    });
    const s = await settlingElsewhere({ spent: true });
    for (const app of [broken, replica({ chain: false })]) {
      const r = await pay(app, s.header);
      expect(r.res.status).toBe(402);
      expect(r.body.error).toBe('payment_in_flight');
      expect(r.body.message).toMatch(/could not be read/);
      expect(r.body.message).not.toMatch(/nothing has been charged/i);
    }
    expect((await claimOf(s.nonce))?.status).toBe('settling');
  });

  it('spent, its transaction not visible: 503 payment_spent_pending (Retry-After 5), then served once it shows', async () => {
    const app = replica();
    const s = await settlingElsewhere({ spent: true, tx: null });
    const r = await pay(app, s.header);
    expect(r.res.status).toBe(503);
    expect(r.res.headers.get('retry-after')).toBe('5');
    expect(r.body).toEqual({
      error: 'payment_spent_pending',
      message: expect.stringMatching(/spent on chain \(the money moved\).*SAME X-PAYMENT in 5 s/),
      retryable: true,
      retry_after_seconds: 5,
    });
    expect(r.outcome).toBe('spent_pending');
    // The body the OpenAPI declares for a paid route's 503.
    expect(PaidUnavailableSchema.safeParse(r.body).success).toBe(true);
    expect((await claimOf(s.nonce))?.status).toBe('settling');
    // The transaction shows (a wider log range, the settling process records it): served.
    const tx = `0x${'7a'.repeat(32)}`;
    stub.txOfNonce.set(s.nonce, tx);
    await sleep(1100); // past the shared read's reuse (one second)
    const later = await pay(app, s.header);
    expect(later.res.status).toBe(200);
    expect(later.res.headers.get('x-payment-receipt')).toBe(tx);
    expect(stub.settles).toEqual([]);
  });

  it('several replicas deciding one spent authorization at once: recorded once, answered once, every answer 200 or 503 naming the receipt', async () => {
    const replicas = [replica(), replica(), replica()];
    const s = await settlingElsewhere({ spent: true });
    const before = runs.count;
    const answers = await Promise.all([0, 1, 2, 0, 1, 2, 0, 1, 2].map((i) => pay(replicas[i]!, s.header)));
    for (const a of answers) {
      expect([200, 503]).toContain(a.res.status);
      expect(a.res.headers.get('x-payment-receipt')).toBe(s.tx);
      if (a.res.status === 503) expect(a.body.error).toBe('payment_spent_pending');
    }
    expect(answers.some((a) => a.res.status === 200)).toBe(true);
    const bodies = new Set(answers.filter((a) => a.res.status === 200).map((a) => a.text));
    expect(bodies.size).toBe(1);
    expect(runs.count - before).toBe(1);
    expect(await receiptsOf(s.nonce)).toEqual([{ settlement_tx: s.tx }]);
    expect(await claimOf(s.nonce)).toEqual({ status: 'settled', settlement_tx: s.tx });
    expect(stub.settles).toEqual([]);
  });

  it('a quarter of the paid-run slots is kept for answers owed to settled payments: a new payment is refused, the paid one served', async () => {
    const app = replica({ maxRuns: 4 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const verify = stub.verify.bind(stub);
    let entered = 0;
    stub.verify = async (p, r) => {
      entered += 1;
      await gate;
      return verify(p, r);
    };
    const held: Promise<unknown>[] = [];
    try {
      // Three first runs waiting in verify: 4 − ⌊4/4⌋ = 3 slots for first runs, all taken.
      for (let i = 0; i < 3; i++) held.push(pay(app, encodePaymentSignatureHeader(paymentPayload())));
      while (entered < 3) await sleep(5);
      const fresh = await pay(app, encodePaymentSignatureHeader(paymentPayload()));
      expect(fresh.res.status).toBe(503);
      expect(fresh.body.error).toBe('paid_capacity_exhausted');
      expect(fresh.res.headers.get('x-payment-receipt')).toBeNull();
      // A settled payment's owed answer takes the reserved slot.
      const s = await settlingElsewhere({ spent: true });
      const owed = await pay(app, s.header);
      expect(owed.res.status).toBe(200);
      expect(owed.res.headers.get('x-payment-receipt')).toBe(s.tx);
    } finally {
      release();
      await Promise.all(held);
      stub.verify = verify;
    }
  });

  it('concurrent recorders of one settlement (the store): one receipt row, the claim settled once', async () => {
    const s = await settlingElsewhere({ spent: true });
    const receiptKey = receiptKeyOf(s.header, RESOURCE);
    await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        recordSettlement(t.db, {
          claimKey: s.key,
          receiptKey,
          resource: RESOURCE,
          amount: '10000',
          tx: s.tx!,
          payer: s.key[1],
          expires: new Date(Date.now() + (600 + i) * 1000),
          runStartedAt: null,
        }),
      ),
    );
    expect(await receiptsOf(s.nonce)).toEqual([{ settlement_tx: s.tx }]);
    expect(await claimOf(s.nonce)).toEqual({ status: 'settled', settlement_tx: s.tx });
  });
});

describe('the journal replayed while the process runs', () => {
  let t: TestDatabase;
  let f: FaultyDatabase;
  let stub: StubFacilitator;
  let config: Config;
  let journal: SettlementJournal;
  let journalPath: string;
  const runs = { count: 0 };
  const stops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    t = await openTestDatabase();
    f = faultyDatabase(t.db);
    stub = new StubFacilitator();
    config = loadConfig({ TREASURY_ADDRESS: TREASURY, X402_FACILITATOR_URL: 'http://127.0.0.1:9/f' });
    journalPath = join(tempDir('repindex-journal-'), 'payment-journal.jsonl');
    journal = openSettlementJournal(journalPath);
  });
  afterAll(async () => {
    for (const stop of stops) await stop();
    await t.close();
  });

  function app(ctxOver: Partial<AppContext>) {
    const ctx: AppContext = { config, db: f.db, now: () => new Date(), facilitator: stub, ...ctxOver };
    const a = createAppShell(ctx);
    registerPaidRoute(a, ctx, { path: '/reputation/wallet/{wallet}', handler: countingHandler(runs) });
    return a;
  }
  const statusOf = async (nonce: string) =>
    (
      await t.db.query<{ status: string }>('SELECT status FROM payment_claims WHERE nonce = $1', [
        nonce.toLowerCase(),
      ])
    )[0]?.status;
  async function until(cond: () => Promise<boolean>, ms: number): Promise<number> {
    const t0 = Date.now();
    while (!(await cond())) {
      if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms`);
      await sleep(20);
    }
    return Date.now() - t0;
  }

  it('settled during an outage: recorded as soon as the database answers again, with no request; another replica then serves the retry', async () => {
    const replay = startJournalReplay({ db: f.db, journal, config, retryMs: 50 });
    stops.push(() => replay.stop());
    const settling = app({ journal });
    const p = paymentPayload();
    const header = encodePaymentSignatureHeader(p);
    const nonce = (p.payload as { authorization: { nonce: string } }).authorization.nonce;
    stub.afterSettle = () => f.cut();
    const first = await settling.request(PATH, { headers: { 'X-PAYMENT': header } });
    stub.afterSettle = null;
    expect(first.status).toBe(503);
    const tx = stub.settles.at(-1)!;
    expect(first.headers.get('x-payment-receipt')).toBe(tx);
    // Cut: every try fails, nothing recorded.
    await sleep(300);
    expect(f.isCut).toBe(true);
    f.restore();
    expect(await statusOf(nonce)).toBe('settling');
    const took = await until(async () => (await statusOf(nonce)) === 'settled', 5000);
    expect(took).toBeLessThan(1000);
    expect(await journal.pending()).toEqual([]);
    // A replica with neither this journal nor a chain reader serves the buyer's retry from the receipt.
    const other = app({});
    const retry = await other.request(PATH, { headers: { 'X-PAYMENT': header } });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('x-payment-receipt')).toBe(tx);
    expect(stub.settles.filter((x) => x === tx)).toHaveLength(1);
  });

  it('a settlement being recorded by its own request is left to it; a pending one found by the periodic read is recorded', async () => {
    const replay = startJournalReplay({ db: f.db, journal, config, retryMs: 20, scanSeconds: 0.1 });
    stops.push(() => replay.stop());
    const entry = (nonce: string) => ({
      network: 'eip155:8453',
      payer: PAYER.toLowerCase(),
      nonce,
      resource: RESOURCE,
      amount: '10000',
      receipt_key: `rk-${nonce}`,
      tx: `0x${nonce.slice(2).padStart(64, '0')}`,
      at: new Date().toISOString(),
    });
    const inProgress = `0x${'1'.repeat(63)}a`;
    const foreign = `0x${'1'.repeat(63)}b`;
    for (const n of [inProgress, foreign]) {
      await claimAuthorization(t.db, ['eip155:8453', PAYER.toLowerCase(), n], {
        resource: RESOURCE,
        amount: '10000',
        receiptKey: `rk-${n}`,
        validBefore: '99999999999',
      });
    }
    await journal.settled(entry(inProgress)); // this process is recording it right now
    appendFileSync(journalPath, `${JSON.stringify({ kind: 'settled', ...entry(foreign) })}\n`); // another writer's line
    await until(async () => (await statusOf(foreign)) === 'settled', 5000);
    await sleep(200);
    expect(await statusOf(inProgress)).toBe('settling');
    // Its request could not record it: replayed at once.
    journal.unrecorded(['eip155:8453', PAYER.toLowerCase(), inProgress]);
    await until(async () => (await statusOf(inProgress)) === 'settled', 5000);
  });
});

describe('claims left behind by a request that lost the database', () => {
  let t: TestDatabase;
  let f: FaultyDatabase;
  let stub: StubFacilitator;
  let config: Config;
  const runs = { count: 0 };
  const stops: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    t = await openTestDatabase();
    f = faultyDatabase(t.db);
    stub = new StubFacilitator();
    config = {
      ...loadConfig({ TREASURY_ADDRESS: TREASURY, X402_FACILITATOR_URL: 'http://127.0.0.1:9/f' }),
      paymentSettleTimeoutSeconds: 3600,
    };
  });
  afterAll(async () => {
    for (const stop of stops) await stop();
    await t.close();
  });

  const statusOf = async (nonce: string) =>
    (
      await t.db.query<{ status: string }>('SELECT status FROM payment_claims WHERE nonce = $1', [
        nonce.toLowerCase(),
      ])
    )[0]?.status ?? null;

  it('a claim whose INSERT committed as the connection dropped is released once the database answers; the retry then settles at once', async () => {
    const repairs = claimRepairs();
    const journal = openSettlementJournal(join(tempDir('repindex-journal-'), 'j.jsonl'));
    const replay = startJournalReplay({ db: f.db, journal, config, repairs, retryMs: 20 });
    stops.push(() => replay.stop());
    const ctx: AppContext = {
      config,
      db: f.db,
      now: () => new Date(),
      facilitator: stub,
      journal,
      readAuthorization: stub.readAuthorization,
      claimRepairs: repairs,
    };
    const app = createAppShell(ctx);
    registerPaidRoute(app, ctx, { path: '/reputation/wallet/{wallet}', handler: countingHandler(runs) });
    const p = paymentPayload();
    const header = encodePaymentSignatureHeader(p);
    const nonce = (p.payload as { authorization: { nonce: string } }).authorization.nonce;
    f.cutAfter(/^INSERT INTO payment_claims/);
    const first = await app.request(PATH, { headers: { 'X-PAYMENT': header } });
    expect(first.status).toBe(503);
    expect((await first.json()).error).toBe('database_unavailable');
    expect(first.headers.get('x-payment-receipt')).toBeNull();
    expect(stub.settles).toEqual([]);
    // The row is there, `settling`, never to be settled by that request.
    expect(await statusOf(nonce)).toBe('settling');
    expect(repairs.size).toBe(1);
    f.restore();
    const t0 = Date.now();
    while ((await statusOf(nonce)) !== null) {
      if (Date.now() - t0 > 5000) throw new Error('the claim was never released');
      await sleep(20);
    }
    expect(repairs.size).toBe(0);
    // The buyer's retry settles it now, once (not payment_in_flight until the settle timeout).
    const retry = await app.request(PATH, { headers: { 'X-PAYMENT': header } });
    expect(retry.status).toBe(200);
    expect(stub.settles).toHaveLength(1);
    expect(await statusOf(nonce)).toBe('settled');
  });

  it('a repair moves only the claim its request wrote (by its token), never one taken since', async () => {
    const repairs = claimRepairs();
    const p = paymentPayload();
    const nonce = (p.payload as { authorization: { nonce: string } }).authorization.nonce.toLowerCase();
    const key: ClaimKey = ['eip155:8453', PAYER.toLowerCase(), nonce];
    const claim = { resource: RESOURCE, amount: '10000', receiptKey: 'rk', validBefore: '99999999999' };
    expect(await claimAuthorization(t.db, key, { ...claim, token: 'other-request' })).toBe(true);
    repairs.add(key, 'lost-request', 'release');
    repairs.add(key, 'lost-request', 'unknown');
    expect(await repairs.apply(t.db)).toBe(0);
    expect(await statusOf(nonce)).toBe('settling');
    repairs.add(key, 'other-request', 'unknown');
    expect(await repairs.apply(t.db)).toBe(1);
    expect(await statusOf(nonce)).toBe('settling-unknown');
    expect(repairs.size).toBe(0);
  });
});
