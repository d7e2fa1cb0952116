/**
 * The Solana scanner's transport faults (issue 10, points 3 and 5) against a fake HTTP JSON-RPC
 * server (node:http on 127.0.0.1:0) reached through @solana/kit's own HTTP transport: a listener
 * that never answers is cut by SOLANA_RPC_TIMEOUT_MS (the pass fails, its lock is free again);
 * a 429's Retry-After pauses the scanner; an endpoint that limits concurrent requests makes the
 * scanner lower its in-flight count and the pass completes instead of failing.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import { runIndexPass, type ChainPassResult } from '../src/indexer/pass.js';
import { classifySolanaError, retryAfterMs, RpcTimeout } from '../src/indexer/rpc-retry.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { quietLogger } from './helpers/indexer-fixtures.js';
import {
  agentRegistered,
  createReplay,
  key,
  newFeedback,
  programLogs,
  sig,
  type LedgerTx,
  type Replay,
} from './helpers/solana-fixtures.js';

const T0 = 1_760_000_000;
const [A, COLLECTION, O1, C1] = [key(1), key(3), key(4), key(7)];

function ledger(n: number): LedgerTx[] {
  const txs: LedgerTx[] = [
    {
      signature: sig(1),
      slot: 10,
      blockTime: T0,
      logs: programLogs([agentRegistered(A, COLLECTION, O1, 'ipfs://a')]),
    },
  ];
  for (let i = 0; i < n; i++)
    txs.push({
      signature: sig(100 + i),
      slot: 20 + i,
      blockTime: T0 + i,
      logs: programLogs([
        newFeedback({
          asset: A,
          client: C1,
          index: BigInt(i),
          slot: BigInt(20 + i),
          value: 80n,
          decimals: 0,
        }),
      ]),
    });
  return txs;
}

/** What the server does with one request: answer it (from the replay), refuse it, or hold it. */
type Policy = (
  method: string,
  inFlight: number,
) => { kind: 'serve'; delayMs?: number } | { kind: '429'; retryAfter?: string } | { kind: 'hang' };

interface FakeRpc {
  url: string;
  server: Server;
  log: { method: string; at: number; answered: 'ok' | '429' | 'hang' }[];
  peakInFlight: number;
  policy: Policy;
  close(): Promise<void>;
}

async function startFakeRpc(replay: Replay): Promise<FakeRpc> {
  let inFlight = 0;
  const fake: FakeRpc = {
    url: '',
    server: null as unknown as Server,
    log: [],
    peakInFlight: 0,
    policy: () => ({ kind: 'serve' }),
    close: async () => {
      fake.server.closeAllConnections();
      await new Promise<void>((r) => fake.server.close(() => r()));
    },
  };
  fake.server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const payload = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { method: string };
        inFlight++;
        fake.peakInFlight = Math.max(fake.peakInFlight, inFlight);
        const p = fake.policy(payload.method, inFlight);
        if (p.kind === 'hang') {
          fake.log.push({ method: payload.method, at: Date.now(), answered: 'hang' });
          req.socket.on('close', () => inFlight--);
          return;
        }
        if (p.kind === '429') {
          fake.log.push({ method: payload.method, at: Date.now(), answered: '429' });
          inFlight--;
          res.writeHead(429, {
            'content-type': 'application/json',
            ...(p.retryAfter ? { 'retry-after': p.retryAfter } : {}),
          });
          res.end('{"error":"rate limited"}');
          return;
        }
        if (p.delayMs) await new Promise((r) => setTimeout(r, p.delayMs));
        const answer = await replay.transport({ payload, signal: new AbortController().signal });
        inFlight--;
        fake.log.push({ method: payload.method, at: Date.now(), answered: 'ok' });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer));
      })();
    });
  });
  await new Promise<void>((r) => fake.server.listen(0, '127.0.0.1', () => r()));
  fake.url = `http://127.0.0.1:${(fake.server.address() as AddressInfo).port}`;
  return fake;
}

function config(url: string, env: Record<string, string>): Config {
  const base = loadConfig(env);
  return {
    ...base,
    chains: base.chains.map((c) =>
      c.network === 'solana'
        ? { ...c, rpcUrl: url, startBlock: null, confirmations: 0, enabled: true }
        : { ...c, enabled: false },
    ),
  };
}

const solanaOf = (r: Awaited<ReturnType<typeof runIndexPass>>): ChainPassResult => {
  if (r.status !== 'ok') throw new Error('locked');
  return r.chains.find((c) => c.network === 'solana')!;
};

describe('solana RPC over HTTP: timeouts, Retry-After, adaptive concurrency', () => {
  let t: TestDatabase;
  let fake: FakeRpc | null = null;
  beforeAll(async () => {
    t = await openTestDatabase();
  });
  afterEach(async () => {
    await fake?.close();
    fake = null;
    await t.db.exec(
      'DELETE FROM ratings; DELETE FROM ownership_transfers; DELETE FROM agents; DELETE FROM scan_gaps; DELETE FROM solana_scan_cursor; DELETE FROM chains',
    );
  });
  afterAll(() => t.close());

  it('a listener that never answers is cut by SOLANA_RPC_TIMEOUT_MS: the pass fails and the lock is free again', async () => {
    const replay = createReplay(ledger(3), 100);
    fake = await startFakeRpc(replay);
    fake.policy = (method) => (method === 'getTransaction' ? { kind: 'hang' } : { kind: 'serve' });
    const cfg = config(fake.url, { SOLANA_RPC_TIMEOUT_MS: '300', SOLANA_RPC_CONCURRENCY: '2' });
    expect(cfg.solanaRpcTimeoutMs).toBe(300);
    const failed = solanaOf(
      await runIndexPass({
        db: t.db,
        config: cfg,
        log: quietLogger(),
        progress: 'off',
        afterPass: null,
        solana: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
      }),
    );
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(/timed out/);
    expect(failed.solana!.timeouts).toBeGreaterThanOrEqual(2);
    expect(fake.log.filter((l) => l.answered === 'hang').length).toBeGreaterThanOrEqual(2);
    const [row] = await t.db.query<{ last_error: string | null }>(
      `SELECT last_error FROM chains WHERE network = 'solana'`,
    );
    expect(row!.last_error).toMatch(/timed out/);

    // the endpoint recovers: the next pass runs (the lock was released) and indexes everything
    fake.policy = () => ({ kind: 'serve' });
    const ok = solanaOf(
      await runIndexPass({ db: t.db, config: cfg, log: quietLogger(), progress: 'off', afterPass: null }),
    );
    expect(ok).toMatchObject({ status: 'ok', to: 100 });
    expect(ok.inserted.ratings).toBe(3);
  }, 60_000);

  it('honours Retry-After: no request reaches the endpoint before the pause is over', async () => {
    const replay = createReplay(ledger(4), 100);
    fake = await startFakeRpc(replay);
    let refused = 0;
    fake.policy = (method) =>
      method === 'getTransaction' && refused++ < 2 ? { kind: '429', retryAfter: '1' } : { kind: 'serve' };
    const cfg = config(fake.url, { SOLANA_RPC_CONCURRENCY: '1' });
    const r = solanaOf(
      await runIndexPass({ db: t.db, config: cfg, log: quietLogger(), progress: 'off', afterPass: null }),
    );
    expect(r).toMatchObject({ status: 'ok' });
    expect(r.inserted.ratings).toBe(4);
    expect(r.solana!.rateLimited).toBe(2);
    const log = fake.log;
    for (const [i, l] of log.entries()) {
      if (l.answered !== '429') continue;
      const nextReq = log[i + 1]!;
      expect(nextReq.at - l.at).toBeGreaterThanOrEqual(950);
    }
  }, 60_000);

  it('an endpoint that limits concurrent requests: the in-flight count backs off and the pass completes', async () => {
    const n = 40;
    const replay = createReplay(ledger(n), 1000);
    fake = await startFakeRpc(replay);
    // more than 2 requests at once → 429 without Retry-After; served ones take a moment
    fake.policy = (_m, inFlight) => (inFlight > 2 ? { kind: '429' } : { kind: 'serve', delayMs: 15 });
    const cfg = config(fake.url, { SOLANA_RPC_CONCURRENCY: '8' });
    const r = solanaOf(
      await runIndexPass({
        db: t.db,
        config: cfg,
        log: quietLogger(),
        progress: 'off',
        afterPass: null,
        solana: { baseDelayMs: 20, maxDelayMs: 200 },
      }),
    );
    expect(r).toMatchObject({ status: 'ok', to: 1000 });
    expect(r.inserted.ratings).toBe(n);
    expect(r.solana!.rateLimited).toBeGreaterThan(0);
    expect(r.solana!.minConcurrency).toBeLessThanOrEqual(2);
    // it slowed down rather than hammering: far fewer refusals than requests served
    const refused = fake.log.filter((l) => l.answered === '429').length;
    const served = fake.log.filter((l) => l.answered === 'ok').length;
    expect(refused).toBeLessThan(served);
  }, 120_000);
});

describe('Retry-After and error classes', () => {
  const http429 = (headers: Record<string, string>) =>
    Object.assign(new Error('HTTP error (429): Too Many Requests'), {
      context: { statusCode: 429, headers: new Headers(headers) },
    });

  it('reads seconds and HTTP dates; absent or unreadable: null', () => {
    const now = Date.parse('2026-11-22T12:00:00Z');
    expect(retryAfterMs(http429({ 'retry-after': '3' }), now)).toBe(3000);
    expect(retryAfterMs(http429({ 'retry-after': 'Sun, 22 Nov 2026 12:00:05 GMT' }), now)).toBe(5000);
    expect(retryAfterMs(http429({ 'retry-after': 'Sun, 22 Nov 2026 11:00:00 GMT' }), now)).toBe(0);
    expect(retryAfterMs(http429({}), now)).toBeNull();
    expect(retryAfterMs(http429({ 'retry-after': 'soon' }), now)).toBeNull();
    expect(retryAfterMs(new Error('x', { cause: http429({ 'retry-after': '1' }) }), now)).toBe(1000);
  });

  it('classifies 429, timeouts, 5xx and invalid requests', () => {
    expect(classifySolanaError(http429({}))).toBe('rate_limited');
    expect(classifySolanaError(new RpcTimeout('getSlot', 10))).toBe('timeout');
    expect(
      classifySolanaError(Object.assign(new Error('bad gateway'), { context: { statusCode: 502 } })),
    ).toBe('transient');
    expect(classifySolanaError(Object.assign(new Error('forbidden'), { context: { statusCode: 403 } }))).toBe(
      'fatal',
    );
    expect(
      classifySolanaError(Object.assign(new Error('Invalid params'), { context: { __code: -32602 } })),
    ).toBe('fatal');
  });
});
