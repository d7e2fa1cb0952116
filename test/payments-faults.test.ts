/**
 * Paid calls under faults (issue 21), on PGlite and PostgreSQL: the database cut in process
 * (helpers/faulty-db.ts) before a request, between settle and record, during the paid run; claims
 * stuck in `settling`; races for one header. The rules: nothing is verified or settled while the
 * database cannot record it (503 database_unavailable + Retry-After, never a 500); a settlement is
 * never a dead end (the retry of the same header is served, from the journal, the receipt or the
 * chain; or the reconciliation records it) and never charged twice; an answer owed on such a retry
 * runs in a paid-run slot (MAX_CONCURRENT_PAID_RUNS: full → 503 `paid_capacity_exhausted` naming
 * the receipt, the retry served later), a reuse of stored bytes is never capped; race losers answer
 * `payment_in_flight`. The real connection cut (a TCP proxy in front of PostgreSQL) and real
 * `serve` processes (one SIGKILLed between settle and record) are in payments-processes-pg.test.ts.
 */
import { appendFileSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import { createApp, createAppShell } from '../src/doors/http/app.js';
import type { AppContext } from '../src/doors/http/context.js';
import { registerPaidRoute } from '../src/doors/http/routes/reputation.js';
import type { PaidHandler } from '../src/paid/handler.js';
import { openSettlementJournal, type SettlementJournal } from '../src/payments/journal.js';
import { reconcilePayments } from '../src/payments/reconcile.js';
import { paymentOutcomeOf } from '../src/metrics.js';
import { claimAuthorization } from '../src/store/payments.js';
import { registerChains } from '../src/store/chain-state.js';
import { isDatabaseUnavailable } from '../src/db/database.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { faultyDatabase, type FaultyDatabase } from './helpers/faulty-db.js';
import { tempDir } from './helpers/tmp.js';
import { PAYER, payment, paymentPayload, StubFacilitator, TREASURY } from './helpers/x402-stub.js';
import { encodePaymentSignatureHeader } from '@x402/core/http';

const WALLET = '0x4444444444444444444444444444444444444444';
const PATH = `/reputation/wallet/${WALLET}`;

/** A paid handler whose answer needs the database (as every real one does). */
function dbHandler(runs: { count: number }): PaidHandler<{ wallet: string }> {
  return {
    tier: 'wallet-lookup',
    validate: (_ctx, req) =>
      /^0x[0-9a-fA-F]{40}$/.test(req.params.wallet ?? '')
        ? { ok: true, input: { wallet: req.params.wallet! } }
        : { ok: false, status: 422, body: { detail: 'not an address' } },
    async run(ctx, input, p) {
      const [row] = await ctx.db.query<{ n: number }>('SELECT count(*)::int AS n FROM payment_claims');
      runs.count += 1;
      return { status: 200, body: { wallet: input.wallet, receipt: p.receipt, claims: row?.n ?? 0 } };
    },
  };
}

describe('paid calls under database faults', () => {
  let t: TestDatabase;
  let f: FaultyDatabase;
  let stub: StubFacilitator;
  let config: Config;
  const runs = { count: 0 };
  let journalPath: string;
  let journal: SettlementJournal;

  /** An app on the faulty database; `opts` chooses the journal, the chain reader and MAX_CONCURRENT_PAID_RUNS. */
  function appWith(opts: { journal?: boolean; chain?: boolean; maxRuns?: number } = {}) {
    const ctx: AppContext = {
      config: opts.maxRuns ? { ...config, maxConcurrentPaidRuns: opts.maxRuns } : config,
      db: f.db,
      now: () => new Date(),
      facilitator: stub,
      ...(opts.journal ? { journal } : {}),
      ...(opts.chain ? { readAuthorization: stub.readAuthorization } : {}),
    };
    const app = createAppShell(ctx);
    registerPaidRoute(app, ctx, { path: '/reputation/wallet/{wallet}', handler: dbHandler(runs) });
    return app;
  }
  /** One paid GET; the Request object is returned too (its payment outcome is noted on it). */
  async function pay(app: ReturnType<typeof appWith>, header: string) {
    const req = new Request(`http://localhost${PATH}`, { headers: { 'X-PAYMENT': header } });
    const res = await app.request(req);
    const text = await res.text();
    return { res, text, body: JSON.parse(text), outcome: paymentOutcomeOf(req) };
  }
  const claimStatus = async (nonce: string) =>
    (
      await t.db.query<{ status: string }>('SELECT status FROM payment_claims WHERE nonce = $1', [
        nonce.toLowerCase(),
      ])
    )[0]?.status ?? null;
  const ageClaim = (nonce: string) =>
    t.db.query("UPDATE payment_claims SET updated_at = now() - interval '1 hour' WHERE nonce = $1", [
      nonce.toLowerCase(),
    ]);

  beforeAll(async () => {
    t = await openTestDatabase();
    f = faultyDatabase(t.db);
    config = {
      ...loadConfig({ TREASURY_ADDRESS: TREASURY, X402_FACILITATOR_URL: 'http://127.0.0.1:9/f' }),
      paymentSettleTimeoutSeconds: 30,
    };
    journalPath = join(tempDir('repindex-journal-'), 'payment-journal.jsonl');
    journal = openSettlementJournal(journalPath);
  });
  afterAll(() => t.close());
  beforeEach(() => {
    f.restore();
    stub = new StubFacilitator();
  });

  it('database away before a paid call: 503 database_unavailable + Retry-After; nothing verified or settled', async () => {
    const app = appWith({ journal: true, chain: true });
    f.cut();
    const { res, body, outcome } = await pay(app, payment());
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(body).toMatchObject({ error: 'database_unavailable', retryable: true, retry_after_seconds: 5 });
    expect(outcome).toBe('database_unavailable');
    expect(stub.verifies).toBe(0);
    expect(stub.settles).toHaveLength(0);
  });

  it('cut between settle and record, with the journal: 503 naming the receipt, then the retry is served once', async () => {
    const app = appWith({ journal: true });
    const p = paymentPayload();
    const header = encodePaymentSignatureHeader(p);
    const nonce = (p.payload as { authorization: { nonce: string } }).authorization.nonce;
    stub.afterSettle = () => f.cut();
    const first = await pay(app, header);
    expect(first.res.status).toBe(503);
    expect(first.body.error).toBe('database_unavailable');
    const tx = stub.settles[0]!;
    expect(first.res.headers.get('x-payment-receipt')).toBe(tx);
    expect(first.res.headers.get('retry-after')).toBe('5');
    expect(first.outcome).toBe('settled_unserved');
    // The journal holds the settlement, flushed before the database was tried.
    const lines = readFileSync(journalPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toContainEqual(
      expect.objectContaining({ kind: 'settled', tx, nonce: nonce.toLowerCase() }),
    );
    expect(await claimStatus(nonce)).toBe('settling');

    stub.afterSettle = null;
    f.restore();
    const retry = await pay(app, header);
    expect(retry.res.status).toBe(200);
    expect(retry.res.headers.get('x-payment-receipt')).toBe(tx);
    expect(retry.body).toMatchObject({ wallet: WALLET, receipt: tx });
    expect(retry.outcome).toBe('served_on_retry');
    expect(stub.settles).toHaveLength(1);
    expect(await claimStatus(nonce)).toBe('settled');
    expect(await journal.pending()).toEqual([]);
    // Then it is an ordinary receipt: reused, never charged again.
    const again = await pay(app, header);
    expect(again.res.status).toBe(200);
    expect(again.res.headers.get('x-payment-reused')).toBe('true');
    expect(stub.settles).toHaveLength(1);
  });

  it('the record fails once, the journal holds it: never a 200 without the receipt row; the retry is served, then replayed byte for byte', async () => {
    const app = appWith({ journal: true });
    const header = encodePaymentSignatureHeader(paymentPayload());
    stub.afterSettle = () => f.failNextTransaction();
    const first = await pay(app, header);
    stub.afterSettle = null;
    const tx = stub.settles.at(-1)!;
    // the database answers again at once, but the settlement is not recorded: no answer yet
    expect(first.res.status).toBe(503);
    expect(first.res.headers.get('x-payment-receipt')).toBe(tx);
    expect(first.outcome).toBe('settled_unserved');
    const settles = stub.settles.length;
    const retry = await pay(app, header);
    expect(retry.res.status).toBe(200);
    expect(retry.outcome).toBe('served_on_retry');
    const again = await pay(app, header);
    expect(again.res.status).toBe(200);
    expect(again.res.headers.get('x-payment-reused')).toBe('true');
    expect(again.text).toBe(retry.text);
    expect(stub.settles).toHaveLength(settles);
  });

  it('cut between settle and record, no journal: never 200; the first retry is decided from the chain at once and served', async () => {
    const app = appWith({ chain: true });
    const p = paymentPayload();
    const header = encodePaymentSignatureHeader(p);
    const nonce = (p.payload as { authorization: { nonce: string } }).authorization.nonce;
    stub.afterSettle = () => f.cut();
    const first = await pay(app, header);
    expect(first.res.status).toBe(503);
    expect(first.outcome).toBe('settled_unserved');
    stub.afterSettle = null;
    f.restore();
    // Still `settling`, well within the settle timeout: the chain shows it spent, with its
    // transaction, so the retry is recorded and served now (issue 30), not in flight.
    expect(await claimStatus(nonce)).toBe('settling');
    const retry = await pay(app, header);
    expect(retry.res.status).toBe(200);
    expect(retry.res.headers.get('x-payment-receipt')).toBe(stub.settles[0]);
    expect(retry.outcome).toBe('served_on_retry');
    expect(stub.settles).toHaveLength(1);
    expect(await claimStatus(nonce)).toBe('settled');
  });

  it('a claim stuck in settling, unspent on chain: the retry verifies and settles it, once', async () => {
    const app = appWith({ chain: true });
    const p = paymentPayload();
    const header = encodePaymentSignatureHeader(p);
    const auth = (p.payload as { authorization: { nonce: string; validBefore: string } }).authorization;
    // A process claimed it and died before settling.
    await claimAuthorization(t.db, ['eip155:8453', PAYER.toLowerCase(), auth.nonce.toLowerCase()], {
      resource: `GET ${PATH}`,
      amount: '10000',
      receiptKey: 'lost',
      validBefore: auth.validBefore,
    });
    expect((await pay(app, header)).body.error).toBe('payment_in_flight');
    await ageClaim(auth.nonce);
    const retry = await pay(app, header);
    expect(retry.res.status).toBe(200);
    expect(retry.outcome).toBe('settled');
    expect(stub.settles).toHaveLength(1);
  });

  it('the reconciliation records journaled settlements and decides stuck claims from the chain', async () => {
    const app = appWith({ journal: true });
    const noJournal = appWith({ chain: true });
    // One settlement only in the journal, one only on chain; both database writes lost.
    const a = paymentPayload();
    const b = paymentPayload();
    const ha = encodePaymentSignatureHeader(a);
    const hb = encodePaymentSignatureHeader(b);
    const nb = (b.payload as { authorization: { nonce: string } }).authorization.nonce;
    stub.afterSettle = () => f.cut();
    expect((await pay(app, ha)).res.status).toBe(503);
    f.restore();
    expect((await pay(noJournal, hb)).res.status).toBe(503);
    stub.afterSettle = null;
    f.restore();
    await ageClaim(nb);
    const r = await reconcilePayments({
      db: t.db,
      config,
      journal,
      readAuthorization: stub.readAuthorization,
    });
    expect(r.journaled).toBe(1);
    expect(r.stale).toBe(1);
    expect(r.settled).toBe(1);
    expect(r.errors).toEqual([]);
    // Both buyers' retries are served from their receipts, with no new charge.
    const plain = appWith();
    for (const h of [ha, hb]) {
      const res = await pay(plain, h);
      expect(res.res.status).toBe(200);
      expect(res.outcome).toBe('served_on_retry');
    }
    expect(stub.settles).toHaveLength(2);
  });

  it('an answer owed on a retry runs in a paid-run slot: full → 503 paid_capacity_exhausted with the receipt, nothing lost; stored bytes are replayed even when full', async () => {
    const app = appWith({ journal: true, maxRuns: 1 });
    // A settlement whose answer is owed: settled, journaled, its database record failed.
    const p = paymentPayload();
    const owed = encodePaymentSignatureHeader(p);
    const nonce = (p.payload as { authorization: { nonce: string } }).authorization.nonce;
    stub.afterSettle = () => f.failNextTransaction();
    const first = await pay(app, owed);
    stub.afterSettle = null;
    expect(first.outcome).toBe('settled_unserved');
    const tx = stub.settles.at(-1)!;
    // A paid answer already stored with its receipt.
    const stored = payment();
    const paid = await pay(app, stored);
    expect(paid.res.status).toBe(200);

    // The only paid-run slot held by a paid call waiting in verify.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const verify = stub.verify.bind(stub);
    let entered = 0;
    stub.verify = async (payload, r) => {
      entered += 1;
      await gate;
      return verify(payload, r);
    };
    let held: ReturnType<typeof pay> | undefined;
    try {
      held = pay(app, payment());
      while (entered < 1) await new Promise((r) => setTimeout(r, 5));
      const runsBefore = runs.count;
      // Twice: from the journal (the settlement is recorded, its answer owed), then from the
      // receipt that leaves (no stored bytes). Neither runs the handler; both name the receipt.
      for (let i = 0; i < 2; i++) {
        const busy = await pay(app, owed);
        expect(busy.res.status).toBe(503);
        expect(busy.res.headers.get('retry-after')).toBe('5');
        expect(busy.res.headers.get('x-payment-receipt')).toBe(tx);
        expect(busy.body).toMatchObject({
          error: 'paid_capacity_exhausted',
          retryable: true,
          retry_after_seconds: 5,
        });
        expect(busy.body.message).toMatch(/was settled/);
        expect(busy.outcome).toBe('refused:paid_capacity_exhausted');
      }
      expect(runs.count).toBe(runsBefore);
      expect(await claimStatus(nonce)).toBe('settled');
      // Stored bytes run nothing: replayed while the slot is taken.
      const reused = await pay(app, stored);
      expect(reused.res.status).toBe(200);
      expect(reused.res.headers.get('x-payment-reused')).toBe('true');
      expect(reused.text).toBe(paid.text);
      expect(runs.count).toBe(runsBefore);
      release();
      expect((await held).res.status).toBe(200);
    } finally {
      release();
      await held;
      stub.verify = verify;
    }
    // A slot free again: the same header is served, once, with no new charge.
    const settles = stub.settles.length;
    const retry = await pay(app, owed);
    expect(retry.res.status).toBe(200);
    expect(retry.outcome).toBe('served_on_retry');
    expect(retry.res.headers.get('x-payment-receipt')).toBe(tx);
    expect((await pay(app, owed)).res.headers.get('x-payment-reused')).toBe('true');
    expect(stub.settles).toHaveLength(settles);
  });

  it('race losers for one header answer payment_in_flight (or payment_spent_pending) with Retry-After, then are served', async () => {
    const app = appWith({ journal: true, chain: true });
    const header = payment();
    stub.settleDelayMs = 150;
    const results = await Promise.all([1, 2, 3].map(() => pay(app, header)));
    expect(stub.settles).toHaveLength(1);
    const ok = results.filter((r) => r.res.status === 200);
    const losers = results.filter((r) => r.res.status !== 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const l of losers) {
      // In flight (not spent yet when it looked); or, on a loaded machine, told it is spent and its
      // answer on its way (the winner's settlement landed first), with the receipt.
      expect(['402 payment_in_flight', '503 payment_spent_pending']).toContain(
        `${l.res.status} ${l.body.error}`,
      );
      if (l.res.status === 503) expect(l.res.headers.get('x-payment-receipt')).toBe(stub.settles[0]);
      expect(l.body.retryable).toBe(true);
      expect(l.res.headers.get('retry-after')).toBe('5');
    }
    const later = await pay(app, header);
    expect(later.res.status).toBe(200);
    expect(stub.settles).toHaveLength(1);
  });

  it('a settle of unknown outcome retried without a chain reader is in flight, not a dead end', async () => {
    const app = appWith();
    stub.settleMode = 'timeout';
    const header = payment();
    expect((await pay(app, header)).res.status).toBe(503);
    stub.settleMode = 'ok';
    const retry = await pay(app, header);
    expect(retry.res.status).toBe(402);
    expect(retry.body.error).toBe('payment_in_flight');
    // With the chain reader the same retry is decided (spent) and served.
    const chained = await pay(appWith({ chain: true }), header);
    expect(chained.res.status).toBe(200);
    expect(chained.outcome).toBe('served_on_retry');
    expect(stub.settles).toHaveLength(0); // the timed-out settle spent it; nothing settled again
  });
});

describe('free routes, /health and /ready while the database is away', () => {
  let t: TestDatabase;
  let f: FaultyDatabase;
  let app: ReturnType<typeof createApp>;
  beforeAll(async () => {
    t = await openTestDatabase();
    f = faultyDatabase(t.db);
    const config = loadConfig({});
    await registerChains(t.db, config.chains);
    app = createApp({ config, db: f.db, now: () => new Date(), freeCache: null });
  });
  afterAll(() => t.close());

  it('free routes answer 503 database_unavailable with Retry-After, never 500', async () => {
    f.cut();
    try {
      for (const path of [
        '/leaderboard',
        '/stats/facets',
        '/feed',
        '/chains',
        '/categories',
        `/wallets/${WALLET}/chains`,
        `/wallets/${WALLET}/exists`,
        `/search/${WALLET}`,
        `/badge/${WALLET}.svg`,
      ]) {
        const res = await app.request(path);
        expect(res.status, path).toBe(503);
        expect(res.headers.get('retry-after')).toBe('5');
        expect(await res.json()).toMatchObject({ error: 'database_unavailable', retryable: true });
      }
    } finally {
      f.restore();
    }
    expect((await app.request('/leaderboard')).status).toBe(200);
  });

  it('the MCP door, calling a database route in process, answers without a 500', async () => {
    f.cut();
    try {
      const res = await app.request('/mcp', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'rep_index_status', arguments: {} },
        }),
      });
      expect(res.status).not.toBe(500);
      expect(JSON.stringify(await res.json())).toMatch(/database_unavailable|unreachable/);
    } finally {
      f.restore();
    }
  });

  it('/health stays 200 (liveness) with the database unreachable and the last figures; /ready is 503', async () => {
    const ok = await (await app.request('/health')).json();
    expect(ok.database.state).toBe('ok');
    f.cut();
    try {
      const res = await app.request('/health');
      expect(res.status).toBe(200);
      expect(res.headers.get('cache-control')).toBe('no-store');
      const body = await res.json();
      expect(body.status).toBe('degraded');
      expect(body.database).toMatchObject({ state: 'unreachable', last_ok_at: ok.database.last_ok_at });
      expect(body.status_reason).toMatch(/database is unreachable/);
      expect(body.chains).toEqual(ok.chains);
      expect(body.agents).toBe(ok.agents);
      const ready = await app.request('/ready');
      expect(ready.status).toBe(503);
      expect((await ready.json()).ready).toBe(false);
    } finally {
      f.restore();
    }
    expect((await app.request('/ready')).status).toBe(200);
  });
});

describe('fault plumbing', () => {
  it('isDatabaseUnavailable: connection errors yes (code, message, cause, AggregateError), statement errors no', () => {
    const coded = (code: string) => Object.assign(new Error('x'), { code });
    expect(isDatabaseUnavailable(coded('ECONNREFUSED'))).toBe(true);
    expect(isDatabaseUnavailable(coded('57P01'))).toBe(true);
    expect(isDatabaseUnavailable(coded('08006'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('PGlite is closed'))).toBe(true);
    expect(isDatabaseUnavailable(new Error('wrapped', { cause: coded('ECONNRESET') }))).toBe(true);
    expect(isDatabaseUnavailable(new AggregateError([coded('ECONNREFUSED')], 'all failed'))).toBe(true);
    expect(isDatabaseUnavailable(coded('42601'))).toBe(false); // syntax error
    expect(isDatabaseUnavailable(coded('23505'))).toBe(false); // unique violation
    expect(isDatabaseUnavailable(new Error('boom'))).toBe(false);
    expect(isDatabaseUnavailable(null)).toBe(false);
  });

  it('the journal: settled then recorded; a torn last line is skipped; pending lists only unrecorded', async () => {
    const path = join(tempDir('repindex-journal-'), 'j.jsonl');
    const j = openSettlementJournal(path);
    const s = (nonce: string) => ({
      network: 'eip155:8453',
      payer: '0xabc',
      nonce,
      resource: 'GET /x',
      amount: '10000',
      receipt_key: `k${nonce}`,
      tx: `0x${nonce}`,
      at: new Date().toISOString(),
    });
    await j.settled(s('01'));
    await j.settled(s('02'));
    await j.recorded(['eip155:8453', '0xabc', '01']);
    appendFileSync(path, '{"kind":"settled","network":"eip155:8453","pay');
    expect((await j.pending()).map((p) => p.nonce)).toEqual(['02']);
    expect((await j.find(['eip155:8453', '0xabc', '01']))?.tx).toBe('0x01');
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });
});
