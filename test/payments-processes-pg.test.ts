/**
 * Paid calls under real faults, PostgreSQL only (skipped on PGlite: these faults need a network
 * database and several processes on one):
 *  - the database connection really cut (a TCP proxy in front of the test server, helpers/pg-proxy.ts;
 *    the machine's PostgreSQL is never stopped): free and paid routes answer 503
 *    `database_unavailable`, /health 200, /ready 503, the process survives its pool's errors; the
 *    connection cut between settle and record: 503 naming the receipt, the retry served once;
 *  - two `repindex serve` processes (helpers/serve-process.ts) on one database, the real x402 rail (a local chain, the EIP-3009
 *    token, the x402 facilitator library behind HTTP): one process SIGKILLed between settle and
 *    record; the buyer's first retry on the other process is decided from the chain at once (the
 *    settle timeout is 10 minutes there) and served, never charged twice; concurrent requests with
 *    one header on both processes settle once, the losers answer `402 payment_in_flight` (not spent
 *    yet) or `503 payment_spent_pending` naming the receipt (spent, its answer on its way);
 *  - a `serve` whose database connection is cut (a TCP proxy) between settle and record records
 *    the settlement from its journal within seconds of the database answering again, while it
 *    runs, with no request (issue 30).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { isDatabaseUnavailable, openDatabase, type Database } from '../src/db/database.js';
import { createApp } from '../src/doors/http/app.js';
import type { AppContext } from '../src/doors/http/context.js';
import { openSettlementJournal } from '../src/payments/journal.js';
import { registerChains } from '../src/store/chain-state.js';
import { claimAuthorization } from '../src/store/payments.js';
import { openTestDatabase, testDbKind, type TestDatabase } from './helpers/db.js';
import { nonceOf, signPayment, startLocalPayments, type LocalPayments } from './helpers/local-facilitator.js';
import { pgTarget, startPgProxy, type PgProxy } from './helpers/pg-proxy.js';
import { startServeProcess, type ServeProcess } from './helpers/serve-process.js';
import { tempDir } from './helpers/tmp.js';
import { payment, paymentPayload, StubFacilitator, TREASURY } from './helpers/x402-stub.js';
import { encodePaymentSignatureHeader } from '@x402/core/http';

const WALLET = '0x5555555555555555555555555555555555555555';
const PATH = `/reputation/wallet/${WALLET}`;
const PATH2 = '/reputation/wallet/0x6666666666666666666666666666666666666666';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(testDbKind !== 'postgres')('a real database connection cut (TCP proxy)', () => {
  let t: TestDatabase;
  let proxy: PgProxy;
  let db: Database;
  let stub: StubFacilitator;
  let app: ReturnType<typeof createApp>;

  beforeAll(async () => {
    t = await openTestDatabase();
    proxy = await startPgProxy(pgTarget(t.url!));
    db = await openDatabase({ databaseUrl: proxy.urlFor(t.url!), dataDir: 'memory://' });
    stub = new StubFacilitator();
    const config = loadConfig({ TREASURY_ADDRESS: TREASURY, X402_FACILITATOR_URL: 'http://127.0.0.1:9/f' });
    await registerChains(t.db, config.chains);
    const ctx: AppContext = {
      config,
      db,
      now: () => new Date(),
      facilitator: stub,
      journal: openSettlementJournal(join(tempDir('repindex-journal-'), 'journal.jsonl')),
      readAuthorization: stub.readAuthorization,
      freeCache: null,
    };
    app = createApp(ctx);
  }, 60_000);
  afterAll(async () => {
    await db?.close().catch(() => undefined);
    await proxy?.close();
    await t?.close();
  });

  /** Waits until the pool reaches the server again (new connections after the cut). */
  async function untilReady() {
    for (let i = 0; i < 50; i++) {
      if ((await app.request('/ready')).status === 200) return;
      await sleep(100);
    }
    throw new Error('never ready again');
  }

  it('free and paid routes 503 database_unavailable, /health 200, /ready 503; all back after', async () => {
    expect((await app.request('/leaderboard')).status).toBe(200);
    expect((await app.request('/health')).status).toBe(200);
    proxy.cut();
    try {
      const free = await app.request('/leaderboard');
      expect(free.status).toBe(503);
      expect(free.headers.get('retry-after')).toBe('5');
      expect(await free.json()).toMatchObject({ error: 'database_unavailable', retryable: true });
      const paid = await app.request(PATH, { headers: { 'X-PAYMENT': payment() } });
      expect(paid.status).toBe(503);
      expect((await paid.json()).error).toBe('database_unavailable');
      expect(stub.verifies).toBe(0);
      const health = await app.request('/health');
      expect(health.status).toBe(200);
      expect((await health.json()).database.state).toBe('unreachable');
      expect((await app.request('/ready')).status).toBe(503);
    } finally {
      proxy.restore();
    }
    await untilReady();
    expect((await app.request('/leaderboard')).status).toBe(200);
  }, 60_000);

  it('a connection cut inside a transaction (a checked-out client) fails its statement, never the process', async () => {
    const err = await db
      .transaction(async (tx) => {
        await tx.query('SELECT 1');
        proxy.cut();
        await sleep(200); // the client's 'error' event fires while no statement is running
        await tx.query('SELECT 1');
      })
      .catch((e: unknown) => e);
    proxy.restore();
    expect(isDatabaseUnavailable(err)).toBe(true);
    await untilReady();
    expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
  }, 60_000);

  it('the connection cut between settle and record: 503 with the receipt, then the retry is served, charged once', async () => {
    const header = encodePaymentSignatureHeader(paymentPayload());
    stub.afterSettle = () => proxy.cut();
    let first;
    try {
      first = await app.request(PATH, { headers: { 'X-PAYMENT': header } });
    } finally {
      stub.afterSettle = null;
      proxy.restore();
    }
    expect(first.status).toBe(503);
    expect(first.headers.get('x-payment-receipt')).toBe(stub.settles[0]);
    await untilReady();
    const retry = await app.request(PATH, { headers: { 'X-PAYMENT': header } });
    expect(retry.status).toBe(200);
    expect(retry.headers.get('x-payment-receipt')).toBe(stub.settles[0]);
    expect(stub.settles).toHaveLength(1);
  }, 60_000);
});

/** A facilitator in front of the local one: forwards everything; `afterSettle` runs before a settle answer leaves. */
async function startFacilitatorTap(upstream: string) {
  const tap = {
    afterSettle: null as null | (() => void),
    settles: 0,
    server: null as unknown as Server,
    url: '',
  };
  const body = (req: IncomingMessage) =>
    new Promise<string>((res) => {
      let s = '';
      req.on('data', (d: Buffer) => (s += d.toString()));
      req.on('end', () => res(s));
    });
  tap.server = createServer((req, res) => {
    void (async () => {
      const text = req.method === 'POST' ? await body(req) : undefined;
      const up = await fetch(`${upstream}${req.url}`, {
        method: req.method,
        headers: { 'content-type': 'application/json' },
        body: text,
      });
      const out = await up.text();
      if (req.url === '/settle' && up.ok) {
        tap.settles += 1;
        tap.afterSettle?.();
      }
      res.writeHead(up.status, { 'content-type': 'application/json' });
      res.end(out);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((r) => tap.server.listen(0, '127.0.0.1', r));
  tap.url = `http://127.0.0.1:${(tap.server.address() as AddressInfo).port}`;
  return tap;
}

describe.skipIf(testDbKind !== 'postgres')('two serve processes on one PostgreSQL (real x402 rail)', () => {
  let rail: LocalPayments;
  let t: TestDatabase;
  let tap: Awaited<ReturnType<typeof startFacilitatorTap>>;
  const serves: ServeProcess[] = [];
  let dir: string;

  /** A `serve` on the test database, the local rail and the tap; its own journal and data folder. */
  async function startServe(name: string, databaseUrl = t.url!): Promise<ServeProcess> {
    const serve = await startServeProcess({
      name,
      env: {
        DATABASE_URL: databaseUrl,
        DATA_DIR: join(dir, name),
        PAYMENT_JOURNAL: join(dir, `${name}.jsonl`),
        PAYMENT_RECONCILE_SECONDS: '0',
        // Long: a settling claim is decided from the chain at once, not once it is stale.
        PAYMENT_SETTLE_TIMEOUT_SECONDS: '600',
        TREASURY_ADDRESS: rail.treasury,
        X402_FACILITATOR_URL: tap.url,
        X402_ASSET_BASE: rail.token,
        RPC_URL_BASE: rail.node.rpcUrl,
      },
    });
    serves.push(serve);
    return serve;
  }

  beforeAll(async () => {
    rail = await startLocalPayments();
    t = await openTestDatabase();
    tap = await startFacilitatorTap(rail.facilitatorUrl);
    dir = tempDir('repindex-serve2-');
  }, 240_000);
  afterAll(async () => {
    await Promise.all(serves.map((s) => s.kill()));
    await new Promise<void>((r) => (tap ? tap.server.close(() => r()) : r()));
    await t?.close();
    await rail?.close();
  }, 60_000);

  const balance = () => rail.balanceOf(rail.treasury);

  it('a process SIGKILLed between settle and record: the first retry on the other process is served at once, charged once; races answer in flight', async () => {
    const [a, b] = await Promise.all([startServe('a'), startServe('b')]);
    const challenge = await (await fetch(`${a.url}${PATH}`)).json();
    const { header, payload } = await signPayment(challenge, rail.payerKey);
    const before = await balance();

    // A settles, then dies before it can record anything.
    tap.afterSettle = () => a.child.kill('SIGKILL');
    const killed = await fetch(`${a.url}${PATH}`, { headers: { 'X-PAYMENT': header } }).catch(
      (e: unknown) => e as Error,
    );
    tap.afterSettle = null;
    expect(killed).toBeInstanceOf(Error);
    const charged = (await balance()) - before;
    expect(charged).toBeGreaterThan(0n);

    // B: the claim A left `settling` is decided from the chain on the first retry: spent, with
    // its transaction (the token's AuthorizationUsed log) → recorded and served now.
    const served = await fetch(`${b.url}${PATH}`, { headers: { 'X-PAYMENT': header } });
    expect(served.status).toBe(200);
    expect(served.headers.get('x-payment-reused')).toBe('false');
    expect(served.headers.get('x-payment-receipt')).toMatch(/^0x[0-9a-f]{64}$/);
    expect((await balance()) - before).toBe(charged);
    const [claim] = await t.db.query<{ status: string }>(
      'SELECT status FROM payment_claims WHERE nonce = $1',
      [nonceOf(payload).toLowerCase()],
    );
    expect(claim?.status).toBe('settled');

    // One fresh header sent to both processes at once: settled once; every loser is in flight
    // (not spent yet when it looked), or told it is spent and its answer on its way, with the receipt.
    const c2 = await startServe('c');
    const fresh = await signPayment(await (await fetch(`${b.url}${PATH2}`)).json(), rail.payerKey);
    const settlesBefore = tap.settles;
    const answers = await Promise.all(
      [b, c2, b, c2].map((s) => fetch(`${s.url}${PATH2}`, { headers: { 'X-PAYMENT': fresh.header } })),
    );
    expect(tap.settles - settlesBefore).toBe(1);
    const statuses = answers.map((r) => r.status);
    expect(statuses).toContain(200);
    for (const r of answers) {
      expect(r.status).not.toBe(500);
      if (r.status !== 200) {
        const body = await r.json();
        expect([`402 payment_in_flight`, `503 payment_spent_pending`]).toContain(`${r.status} ${body.error}`);
        if (r.status === 503) expect(r.headers.get('x-payment-receipt')).toMatch(/^0x[0-9a-f]{64}$/);
        expect(r.headers.get('retry-after')).toBe('5');
      }
    }
    expect((await balance()) - before).toBe(2n * charged);
  }, 300_000);

  it('serve replays its journal at start: a settlement whose database write was lost is recorded', async () => {
    const nonce = `0x${'ab'.repeat(32)}`;
    const payer = rail.payer.toLowerCase();
    const resource = `GET ${PATH2}`;
    await claimAuthorization(t.db, ['eip155:8453', payer, nonce], {
      resource,
      amount: '10000',
      receiptKey: 'rk-journal',
      validBefore: '99999999999',
    });
    const tx = `0x${'cd'.repeat(32)}`;
    writeFileSync(
      join(dir, 'd.jsonl'),
      `${JSON.stringify({ kind: 'settled', network: 'eip155:8453', payer, nonce, resource, amount: '10000', receipt_key: 'rk-journal', tx, at: new Date().toISOString() })}\n`,
    );
    await startServe('d'); // resolves once it listens, after the replay
    const [claim] = await t.db.query<{ status: string; settlement_tx: string }>(
      'SELECT status, settlement_tx FROM payment_claims WHERE nonce = $1',
      [nonce],
    );
    expect(claim).toEqual({ status: 'settled', settlement_tx: tx });
    const [receipt] = await t.db.query<{ settlement_tx: string }>(
      'SELECT settlement_tx FROM payment_receipts WHERE receipt_key = $1',
      ['rk-journal'],
    );
    expect(receipt?.settlement_tx).toBe(tx);
    expect(readFileSync(join(dir, 'd.jsonl'), 'utf8')).toContain('"kind":"recorded"');
  }, 300_000);
  it('a serve that settled during a database cut records it from its journal once the database answers again, with no request', async () => {
    const proxy = await startPgProxy(pgTarget(t.url!));
    try {
      const e = await startServe('e', proxy.urlFor(t.url!));
      const fresh = await signPayment(await (await fetch(`${e.url}${PATH}`)).json(), rail.payerKey);
      const nonce = nonceOf(fresh.payload).toLowerCase();
      tap.afterSettle = () => proxy.cut();
      const first = await fetch(`${e.url}${PATH}`, { headers: { 'X-PAYMENT': fresh.header } });
      tap.afterSettle = null;
      expect(first.status).toBe(503);
      const receipt = first.headers.get('x-payment-receipt');
      expect(receipt).toMatch(/^0x[0-9a-f]{64}$/);
      expect(readFileSync(join(dir, 'e.jsonl'), 'utf8')).toContain(nonce);
      const claim = async () =>
        (
          await t.db.query<{ status: string; settlement_tx: string | null }>(
            'SELECT status, settlement_tx FROM payment_claims WHERE nonce = $1',
            [nonce],
          )
        )[0];
      await sleep(1500); // still cut: nothing can be recorded
      expect((await claim())?.status).toBe('settling');
      proxy.restore();
      const t0 = Date.now();
      while ((await claim())?.status !== 'settled') {
        if (Date.now() - t0 > 15_000) throw new Error('the journal was not replayed while running');
        await sleep(100);
      }
      // The replay retries every second; the pool reconnects within it.
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect((await claim())?.settlement_tx).toBe(receipt);
      // The log line follows the commit through the child's stdout pipe: it may land a moment after.
      const t1 = Date.now();
      while (!e.out().includes('from the journal while running') && Date.now() - t1 < 5_000) await sleep(50);
      expect(e.out()).toContain('from the journal while running');
    } finally {
      proxy.restore();
      await proxy.close();
    }
  }, 300_000);
});
