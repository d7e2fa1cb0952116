/**
 * Solana faults that heal (issue 10, points 2, 4 and 6) through the replay transport, on the test
 * database (PGlite, or PostgreSQL with DATABASE_URL): a transaction the node does not serve is a
 * gap (the checkpoint moves on, /health counts it, a later pass heals it in order); "Log
 * truncated" keeps the events before the cut and records the transaction as incomplete; the walk
 * holds one page of signatures, never the history; migration 0030 re-reads Solana with the new
 * positions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RpcTransport } from '@solana/kit';
import { type Config } from '../src/config.js';
import { createApp } from '../src/doors/http/app.js';
import { migrate } from '../src/db/migrate.js';
import { runIndexPass, type ChainPassResult } from '../src/indexer/pass.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { dumpIndex, quietLogger, type CollectingLogger } from './helpers/indexer-fixtures.js';
import {
  agentOwnerSynced,
  agentRegistered,
  createReplay,
  key,
  newFeedback,
  PROGRAM_ID,
  programLogs,
  sig,
  type LedgerTx,
  solanaOnlyConfig,
} from './helpers/solana-fixtures.js';

const T0 = 1_760_000_000;
const [A, COLLECTION, O1, O2, O3, C1] = [key(1), key(3), key(4), key(5), key(6), key(7)];

/** A transport that answers getTransaction with null for the hidden signatures (counted). */
function hiding(inner: RpcTransport, hidden: Set<string>): { transport: RpcTransport; nulls: () => number } {
  let nulls = 0;
  const transport = (async (req: Parameters<RpcTransport>[0]) => {
    const { id, method, params } = req.payload as { id: unknown; method: string; params: unknown[] };
    if (method === 'getTransaction' && hidden.has(params[0] as string)) {
      nulls++;
      return { jsonrpc: '2.0', id, result: null };
    }
    return inner(req);
  }) as RpcTransport;
  return { transport, nulls: () => nulls };
}

/** Registration (slot 10), two transfers in slot 20 (the middle one hidden), feedback at 30. */
function ledger(): LedgerTx[] {
  return [
    {
      signature: sig(1),
      slot: 10,
      blockTime: T0,
      logs: programLogs([agentRegistered(A, COLLECTION, O1, 'ipfs://a')]),
    },
    { signature: sig(2), slot: 20, blockTime: T0 + 4, logs: programLogs([agentOwnerSynced(A, O1, O2)]) },
    { signature: sig(3), slot: 20, blockTime: T0 + 4, logs: programLogs([agentOwnerSynced(A, O2, O3)]) },
    {
      signature: sig(4),
      slot: 30,
      blockTime: T0 + 8,
      logs: programLogs([
        newFeedback({ asset: A, client: C1, index: 0n, slot: 30n, value: 90n, decimals: 0 }),
      ]),
    },
  ];
}

const solanaOf = (r: Awaited<ReturnType<typeof runIndexPass>>): ChainPassResult => {
  if (r.status !== 'ok') throw new Error('locked');
  return r.chains.find((c) => c.network === 'solana')!;
};

async function healthChain(t: TestDatabase, cfg: Config): Promise<Record<string, unknown>> {
  const app = createApp({ config: cfg, db: t.db, now: () => new Date((T0 + 100) * 1000) });
  const res = await app.request('/health');
  if (res.status !== 200) throw new Error(await res.text());
  const body = (await res.json()) as { chains: Record<string, unknown>[] };
  if (!body.chains) throw new Error(JSON.stringify(body).slice(0, 500));
  return body.chains.find((c) => c.network === 'solana')!;
}

describe('solana: a transaction the node never serves is a gap that heals', () => {
  let t: TestDatabase;
  let clean: TestDatabase;
  let log: CollectingLogger;
  const cfg = solanaOnlyConfig(0);
  const hidden = new Set([sig(3)]);
  const replay = createReplay(ledger(), 40);
  const { transport, nulls } = hiding(replay.transport, hidden);
  const pass = (db: TestDatabase, tr: RpcTransport) =>
    runIndexPass({
      db: db.db,
      config: cfg,
      log,
      progress: 'off',
      afterPass: null,
      solana: { transport: tr, pageLimit: 2, nullAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    });

  beforeAll(async () => {
    [t, clean] = await Promise.all([openTestDatabase(), openTestDatabase()]);
    log = quietLogger();
  });
  afterAll(async () => {
    await Promise.all([t.close(), clean.close()]);
  });

  it('records the gap, keeps the checkpoint moving and counts it in /health', async () => {
    const s = solanaOf(await pass(t, transport));
    expect(s).toMatchObject({ status: 'ok', to: 40 });
    expect(s.solana).toMatchObject({ gaps: 1 });
    expect(nulls()).toBe(2); // asked nullAttempts times, then moved on
    const [cp] = await t.db.query<{ n: string | number; last_error: string | null }>(
      `SELECT last_scanned_block AS n, last_error FROM chains WHERE network = 'solana'`,
    );
    expect(Number(cp!.n)).toBe(40);
    expect(cp!.last_error).toBeNull();
    const gaps = await t.db.query<{ tx_hash: string; block_number: string | number; tx_index: number }>(
      `SELECT tx_hash, block_number, tx_index FROM scan_gaps WHERE network = 'solana'`,
    );
    expect(gaps.map((g) => ({ ...g, block_number: Number(g.block_number) }))).toEqual([
      { tx_hash: sig(3), block_number: 20, tx_index: 1 },
    ]);
    expect(log.warnings.some((w) => w.includes(sig(3)) && /gap/.test(w))).toBe(true);
    // the owner is the one the served transactions give (the later transfer is missing)
    const [a] = await t.db.query<{ owner: string }>(`SELECT owner FROM agents WHERE network = 'solana'`);
    expect(a!.owner).toBe(O2.b58);
    expect(await healthChain(t, cfg)).toMatchObject({
      gaps: 1,
      incomplete_transactions: 0,
      last_scanned_block: 40,
    });
  });

  it('a pass while the node still does not serve it keeps the gap and does not fail', async () => {
    replay.head = 50;
    const s = solanaOf(await pass(t, transport));
    expect(s).toMatchObject({ status: 'ok', to: 50 });
    expect(s.solana).toMatchObject({ gapsHealed: 0 });
    expect(nulls()).toBe(3); // tried once more at the start of the pass
    const [g] = await t.db.query<{ attempts: number }>(
      `SELECT attempts FROM scan_gaps WHERE network = 'solana'`,
    );
    expect(g!.attempts).toBe(2);
  });

  it('a later pass heals it in chain order: the index equals an uninterrupted run', async () => {
    hidden.clear();
    replay.head = 60;
    const s = solanaOf(await pass(t, transport));
    expect(s).toMatchObject({ status: 'ok' });
    expect(s.solana).toMatchObject({ gapsHealed: 1 });
    expect(await t.db.query(`SELECT 1 FROM scan_gaps`)).toHaveLength(0);
    const [a] = await t.db.query<{ owner: string }>(`SELECT owner FROM agents WHERE network = 'solana'`);
    expect(a!.owner).toBe(O3.b58); // the healed transfer is the later one of slot 20
    expect(await healthChain(t, cfg)).toMatchObject({ gaps: 0 });

    const ref = solanaOf(await pass(clean, createReplay(ledger(), 60).transport));
    expect(ref.status).toBe('ok');
    const strip = async (db: TestDatabase) => JSON.stringify(await dumpIndex(db.db, ['solana']));
    expect(await strip(t)).toEqual(await strip(clean));
  });
});

describe('solana: truncated logs', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await openTestDatabase();
  });
  afterAll(() => t.close());

  it('keeps the events before the cut and records the transaction as incomplete', async () => {
    const cfg = solanaOnlyConfig(0);
    const fb = (i: bigint) =>
      newFeedback({ asset: A, client: C1, index: i, slot: 10n, value: 80n, decimals: 0 });
    const logs = programLogs([fb(0n), fb(1n)]);
    // the node cut the logs after the first event: the second event and the end lines are gone
    const cut = [...logs.slice(0, 3), 'Log truncated'];
    const log = quietLogger();
    const r = await runIndexPass({
      db: t.db,
      config: cfg,
      log,
      progress: 'off',
      afterPass: null,
      solana: {
        transport: createReplay(
          [
            {
              signature: sig(1),
              slot: 10,
              blockTime: T0,
              logs: programLogs([agentRegistered(A, COLLECTION, O1, 'ipfs://a')]),
            },
            { signature: sig(2), slot: 11, blockTime: T0, logs: cut },
          ],
          20,
        ).transport,
      },
    });
    const s = solanaOf(r);
    expect(s).toMatchObject({ status: 'ok', to: 20 });
    expect(s.solana).toMatchObject({ incomplete: 1 });
    const ratings = await t.db.query<{ feedback_index: string }>(
      `SELECT feedback_index::text FROM ratings WHERE network = 'solana'`,
    );
    expect(ratings).toEqual([{ feedback_index: '0' }]);
    const inc = await t.db.query<{ tx_hash: string; events_kept: number; reason: string }>(
      `SELECT tx_hash, events_kept, reason FROM incomplete_transactions WHERE network = 'solana'`,
    );
    expect(inc).toHaveLength(1);
    expect(inc[0]).toMatchObject({ tx_hash: sig(2), events_kept: 1 });
    expect(inc[0]!.reason).toMatch(/truncated/i);
    expect(log.warnings.some((w) => w.includes(sig(2)) && /incomplete/.test(w))).toBe(true);
    expect(await healthChain(t, cfg)).toMatchObject({ incomplete_transactions: 1, gaps: 0 });
  });
});

describe('solana: the walk holds one page of signatures', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await openTestDatabase();
  });
  afterAll(() => t.close());

  it('3,000 signatures in pages of 100: at most a page plus one slot in memory, every page committed', async () => {
    const cfg = solanaOnlyConfig(0);
    const txs: LedgerTx[] = [];
    for (let i = 0; i < 3000; i++) {
      // three transactions a slot; a few empty slots between
      const slot = 1000 + Math.floor(i / 3) * 2;
      txs.push({
        signature: sig(50_000 + i),
        slot,
        blockTime: T0 + slot,
        logs:
          i % 10 === 0
            ? programLogs([
                newFeedback({
                  asset: A,
                  client: C1,
                  index: BigInt(i),
                  slot: BigInt(slot),
                  value: 50n,
                  decimals: 0,
                }),
              ])
            : [`Program ${PROGRAM_ID} invoke [1]`, `Program ${PROGRAM_ID} success`],
      });
    }
    let committed = 0;
    const r = await runIndexPass({
      db: t.db,
      config: cfg,
      log: quietLogger(),
      progress: 'off',
      afterPass: null,
      solana: { transport: createReplay(txs, 10_000).transport, pageLimit: 100 },
      hooks: { afterBatch: () => void committed++ },
    });
    const s = solanaOf(r);
    expect(s).toMatchObject({ status: 'ok', to: 10_000 });
    expect(s.solana!.peakSignatures).toBeLessThanOrEqual(100 + 3);
    expect(s.solana!.signaturePages).toBe(31); // 30 full pages and the empty end: listed once
    expect(committed).toBeGreaterThanOrEqual(30);
    const [n] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ratings WHERE network = 'solana'`,
    );
    expect(n!.n).toBe(300);
  });
});

describe('migration 0030: Solana rows are re-read with the new positions', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await openTestDatabase();
  });
  afterAll(() => t.close());

  it('deletes the Solana rows, resets the Solana checkpoint and leaves other chains alone', async () => {
    const db = t.db;
    await db.query(
      `INSERT INTO chains (network, kind, chain_id, last_scanned_block, backfill_complete, agents_count, ratings_count)
       VALUES ('solana', 'solana', NULL, 500, TRUE, 1, 1), ('base', 'evm', 8453, 700, TRUE, 1, 1)`,
    );
    for (const net of ['solana', 'base']) {
      await db.query(`INSERT INTO agents (network, agent_id, owner) VALUES ($1, 'a1', 'o1')`, [net]);
      await db.query(
        `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals, value, block_number)
         VALUES ($1, 'tx', 0, 'a1', 'r1', 0, 5, 0, 5, 100)`,
        [net],
      );
    }
    await db.query(`DELETE FROM schema_migrations WHERE id = '0030_solana_positions.sql'`);
    expect(await migrate(db)).toEqual(['0030_solana_positions.sql']);
    const chains = await db.query<{
      network: string;
      last_scanned_block: string | number | null;
      backfill_complete: boolean;
      ratings_count: string | number;
    }>(`SELECT network, last_scanned_block, backfill_complete, ratings_count FROM chains ORDER BY network`);
    expect(
      chains.map((c) => [
        c.network,
        c.last_scanned_block === null ? null : Number(c.last_scanned_block),
        c.backfill_complete,
        Number(c.ratings_count),
      ]),
    ).toEqual([
      ['base', 700, true, 1],
      ['solana', null, false, 0],
    ]);
    expect(await db.query(`SELECT network FROM ratings ORDER BY network`)).toEqual([{ network: 'base' }]);
    expect(await db.query(`SELECT network FROM agents ORDER BY network`)).toEqual([{ network: 'base' }]);
  });
});
