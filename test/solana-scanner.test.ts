/**
 * The Solana scanner through the real pass, offline: a REPLAY transport (recorded-shape JSON-RPC
 * answers) behind @solana/kit's createSolanaRpcFromTransport, transactions whose `Program data:`
 * lines are Borsh-encoded here from the IDL layout, indexed into the test database (PGlite, or
 * PostgreSQL with TEST_DATABASE_URL), then read back through the aggregates and the HTTP app.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/doors/http/app.js';
import { refreshAfterPass } from '../src/after-pass.js';
import { runIndexPass, type RunIndexPassOptions } from '../src/indexer/pass.js';
import { createSolanaScanner } from '../src/indexer/solana-scanner.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { dumpIndex, quietLogger, type CollectingLogger } from './helpers/indexer-fixtures.js';
import {
  agentOwnerSynced,
  agentRegistered,
  createReplay,
  feedbackRevoked,
  key,
  metadataSet,
  newFeedback,
  programLogs,
  sig,
  type LedgerTx,
  type Replay,
  solanaOnlyConfig,
} from './helpers/solana-fixtures.js';

const HOSTILE_TAG1 = (`<script>alert("x")</script> 'q' "dq" & <b>` + '\u0000').repeat(20).slice(0, 500);
const T0 = 1_760_000_000; // unix seconds

const [A1, A2, COLLECTION, O1, O2, C1, C2] = [key(1), key(2), key(3), key(4), key(5), key(6), key(7)];

/** The ledger: 9 transactions, slots 100..1000, one failed, one beyond the first pass's margin. */
function ledger(): LedgerTx[] {
  const fb = (n: number, a: Parameters<typeof newFeedback>[0]) => newFeedback(a);
  return [
    {
      signature: sig(1),
      slot: 100,
      blockTime: T0,
      // Metaplex Core CPI logs a payload that LOOKS like one of our NewFeedback events: never ours
      logs: programLogs([agentRegistered(A1, COLLECTION, O1, 'https://a1.example/agent.json')], {
        cpiData: fb(0, { asset: A1, client: C2, index: 99n, slot: 100n, value: 1n, decimals: 0 }),
      }),
    },
    {
      signature: sig(2),
      slot: 100,
      blockTime: T0,
      logs: programLogs([
        agentRegistered(A2, COLLECTION, O1, 'ipfs://a2'),
        metadataSet(A2, 'type', Buffer.from('assistant')),
      ]),
    },
    {
      signature: sig(3),
      slot: 105,
      blockTime: T0 + 2,
      logs: programLogs(
        [
          newFeedback({
            asset: A1,
            client: C1,
            index: 0n,
            slot: 105n,
            value: 95n,
            decimals: 0,
            tag1: HOSTILE_TAG1,
            tag2: 'speed',
            endpoint: 'https://a1.example/mcp',
            uri: 'ipfs://fb0',
          }),
        ],
        { instruction: 'GiveFeedback' },
      ),
    },
    {
      signature: sig(4),
      slot: 110,
      blockTime: T0 + 4,
      failed: true,
      logs: programLogs(
        [newFeedback({ asset: A1, client: C2, index: 1n, slot: 110n, value: 1n, decimals: 0 })],
        { instruction: 'GiveFeedback' },
      ),
    },
    {
      signature: sig(5),
      slot: 120,
      blockTime: T0 + 8,
      // an undecodable event (truncated) first, then a valid one: only the valid one is kept
      logs: programLogs(
        [
          newFeedback({ asset: A1, client: C2, index: 7n, slot: 120n, value: 5n, decimals: 0 }).subarray(
            0,
            70,
          ),
          newFeedback({
            asset: A1,
            client: C2,
            index: 1n,
            slot: 120n,
            value: -15n,
            decimals: 1,
            fileHash: new Uint8Array(32).fill(0xcd),
          }),
        ],
        { instruction: 'GiveFeedback' },
      ),
    },
    {
      signature: sig(6),
      slot: 130,
      blockTime: T0 + 12,
      logs: programLogs([agentOwnerSynced(A1, O1, O2)], { instruction: 'SyncOwner' }),
    },
    {
      signature: sig(7),
      slot: 140,
      blockTime: T0 + 16,
      logs: programLogs([feedbackRevoked(A1, C1, 0n, 140n)], { instruction: 'RevokeFeedback' }),
    },
    {
      signature: sig(8),
      slot: 150,
      blockTime: null,
      logs: programLogs(
        [newFeedback({ asset: A2, client: C1, index: 0n, slot: 150n, value: 80n, decimals: 0 })],
        { instruction: 'GiveFeedback' },
      ),
    },
    {
      signature: sig(9),
      slot: 1000,
      blockTime: T0 + 400,
      logs: programLogs(
        [newFeedback({ asset: A1, client: C1, index: 1n, slot: 1000n, value: 70n, decimals: 0 })],
        { instruction: 'GiveFeedback' },
      ),
    },
  ];
}

describe('solana scanner through the pass (replay transport)', () => {
  let t: TestDatabase;
  let replay: Replay;
  let log: CollectingLogger;
  const config = solanaOnlyConfig(32);
  const pass = (over: Partial<RunIndexPassOptions> = {}) =>
    runIndexPass({
      db: t.db,
      config,
      log,
      progress: 'off',
      afterPass: refreshAfterPass,
      solana: { transport: replay.transport, pageLimit: 3, baseDelayMs: 1, maxDelayMs: 2 },
      ...over,
    });

  beforeAll(async () => {
    t = await openTestDatabase();
    replay = createReplay(ledger(), 1010); // target = 1010 − 32 = 978: slot 1000 waits
    log = quietLogger();
  });
  afterAll(() => t.close());

  it('indexes the program events of the finalized slots into the shared tables', async () => {
    const r = await pass();
    expect(r.status).toBe('ok');
    if (r.status !== 'ok') return;
    const s = r.chains.find((c) => c.network === 'solana')!;
    // first pass: no start-block discovery, the walk goes down to the program's oldest signature
    expect(s).toMatchObject({ status: 'ok', from: 0, to: 978, head: 1010 });
    expect(s.inserted).toMatchObject({
      ratings: 3,
      revocations: 1,
      transfers: 3,
      metadata: 1,
      revokedApplied: 1,
    });
    expect(s.batches).toBeGreaterThan(2);

    // failed transaction: never fetched (its signature carries err)
    const fetched = replay.calls
      .filter((c) => c.method === 'getTransaction')
      .map((c) => (c.params as string[])[0]);
    expect(fetched).not.toContain(sig(4));
    expect(fetched).not.toContain(sig(9));
    // paged backwards with before = the last signature of the previous page
    const pages = replay.calls.filter((c) => c.method === 'getSignaturesForAddress');
    // the history is listed once (9 signatures, 3 a page: 3 full pages and the empty end)
    expect(pages).toHaveLength(4);
    // (kit leaves `commitment: 'finalized'` out of the request: it is the server default)
    expect((pages[1]!.params as [string, { before?: string; limit?: number }])[1]).toMatchObject({
      before: sig(7),
      limit: 3,
    });

    const [chain] = await t.db.query<{
      last_scanned_block: string | number;
      start_block: string | number;
      last_error: string | null;
    }>(`SELECT last_scanned_block, start_block, last_error FROM chains WHERE network = 'solana'`);
    expect(Number(chain!.last_scanned_block)).toBe(978);
    expect(Number(chain!.start_block)).toBe(100); // the program's oldest signature

    const agents = await t.db.query<Record<string, unknown>>(
      `SELECT agent_id, owner, minter, agent_uri, declared_type, registered_block::int AS rb, owner_block::int AS ob
         FROM agents WHERE network = 'solana' ORDER BY registered_block, agent_id`,
    );
    const byId = new Map(agents.map((a) => [a.agent_id, a]));
    expect(byId.get(A1.b58)).toMatchObject({
      owner: O2.b58,
      minter: O1.b58,
      agent_uri: 'https://a1.example/agent.json',
      rb: 100,
      ob: 130,
    });
    expect(byId.get(A2.b58)).toMatchObject({
      owner: O1.b58,
      minter: O1.b58,
      agent_uri: 'ipfs://a2',
      declared_type: 'assistant',
    });

    const ratings = await t.db.query<Record<string, unknown>>(
      `SELECT tx_hash, log_index, agent_id, rater, feedback_index::text AS fi, value_raw::text AS raw, value_decimals,
              value::text AS value, tag1, tag2, endpoint, feedback_uri, feedback_hash, block_number::int AS slot,
              block_time, revoked
         FROM ratings WHERE network = 'solana' ORDER BY block_number, log_index`,
    );
    expect(ratings).toHaveLength(3);
    expect(ratings[0]).toMatchObject({
      tx_hash: sig(3),
      log_index: 0,
      agent_id: A1.b58,
      rater: C1.b58,
      fi: '0',
      raw: '95',
      value: '95',
      tag2: 'speed',
      endpoint: 'https://a1.example/mcp',
      feedback_uri: 'ipfs://fb0',
      feedback_hash: null,
      slot: 105,
      revoked: true,
    });
    expect(ratings[0]!.tag1).toBe(HOSTILE_TAG1.split('\u0000').join('\uFFFD'));
    expect((ratings[0]!.tag1 as string).length).toBe(500);
    expect(new Date(ratings[0]!.block_time as string).getTime()).toBe((T0 + 2) * 1000);
    // the undecodable event at data index 0 is skipped; the valid one keeps its own index (1 → 2)
    expect(ratings[1]).toMatchObject({
      tx_hash: sig(5),
      log_index: 2,
      rater: C2.b58,
      fi: '1',
      raw: '-15',
      value_decimals: 1,
      feedback_hash: `0x${'cd'.repeat(32)}`,
      revoked: false,
    });
    expect(Number(ratings[1]!.value)).toBe(-1.5);
    expect(ratings[2]).toMatchObject({
      tx_hash: sig(8),
      agent_id: A2.b58,
      slot: 150,
      block_time: null,
      revoked: false,
    });

    const transfers = await t.db.query<Record<string, unknown>>(
      `SELECT tx_hash, log_index, agent_id, from_address, to_address FROM ownership_transfers WHERE network = 'solana' ORDER BY block_number, tx_hash, log_index`,
    );
    expect(transfers).toHaveLength(3);
    expect(transfers).toContainEqual({
      tx_hash: sig(6),
      log_index: 0,
      agent_id: A1.b58,
      from_address: O1.b58,
      to_address: O2.b58,
    });
    expect(transfers).toContainEqual({
      tx_hash: sig(1),
      log_index: 1,
      agent_id: A1.b58,
      from_address: '11111111111111111111111111111111',
      to_address: O1.b58,
    });

    // the CPI payload (index 99) was never read as ours; the bad event was warned about, escaped
    expect(ratings.some((x) => x.fi === '99')).toBe(false);
    const warned = log.warnings.filter((w) => w.includes('skipped an undecodable event'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toContain(sig(5));
    expect(warned[0]).toMatch(/"reason":"NewFeedback: need/);
  });

  it('is idempotent: a re-run adds nothing and moves nothing', async () => {
    const before = await dumpIndex(t.db, ['solana']);
    const r = await pass();
    if (r.status !== 'ok') throw new Error('locked');
    const s = r.chains.find((c) => c.network === 'solana')!;
    expect(s.status).toBe('ok');
    expect(s.inserted).toEqual({
      ratings: 0,
      revocations: 0,
      transfers: 0,
      metadata: 0,
      revokedApplied: 0,
      responses: 0,
      documentsQueued: 0,
    });
    expect(await dumpIndex(t.db, ['solana'])).toEqual(before);
    // nothing new below the margin: same checkpoint
    expect(s.from).toBeNull();
  });

  it('a later pass picks up from the checkpoint slot (and survives a 429)', async () => {
    replay.head = 1100; // target 1068: slot 1000 is now finalized past the margin
    replay.fail429(1);
    const r = await pass();
    if (r.status !== 'ok') throw new Error('locked');
    const s = r.chains.find((c) => c.network === 'solana')!;
    expect(s).toMatchObject({ status: 'ok', from: 979, to: 1068 });
    expect(s.inserted.ratings).toBe(1);
    // Retries are debug lines (the chain's final failure, if any, is the one warning).
    expect(log.debugs.some((w) => /rate limited \(429\)/.test(w))).toBe(true);
    const [c] = await t.db.query<{ n: number | string }>(
      `SELECT last_scanned_block AS n FROM chains WHERE network = 'solana'`,
    );
    expect(Number(c!.n)).toBe(1068);
    const fetched = replay.calls
      .filter((x) => x.method === 'getTransaction')
      .map((x) => (x.params as string[])[0]);
    expect(fetched.filter((f) => f === sig(9))).toHaveLength(1);
    expect(fetched.filter((f) => f === sig(3))).toHaveLength(1); // never fetched again
  });

  it('ratings join the current owner in the aggregates and on /wallets/{wallet}/chains', async () => {
    // the after-pass hook of serve and index --once (refreshAfterPass) ran after every pass
    const app = createApp({ config, db: t.db, now: () => new Date((T0 + 500) * 1000) });
    const res = await app.request(`/wallets/${O2.b58}/chains`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { chains: Record<string, unknown>[] } & Record<string, unknown>;
    const sol = body.chains.find((c) => c.network === 'solana');
    expect(sol).toMatchObject({ network: 'solana', agent_ids: [A1.b58], agent_count: 1 });
    // A1's ratings: 95 (revoked), −1.5 (out of the scale), 70: one eligible review, scored 70
    expect(sol).toMatchObject({ total_reviews: 1, distinct_raters: 1, final_score: 70 });
    const old = (await (await app.request(`/wallets/${O1.b58}/chains`)).json()) as {
      chains: Record<string, unknown>[];
    };
    expect(old.chains.find((c) => c.network === 'solana')).toMatchObject({
      agent_ids: [A2.b58],
      total_reviews: 1,
      final_score: 80,
    });
  });

  it('verify() refuses an endpoint of another cluster', async () => {
    const chain = config.chains.find((c) => c.network === 'solana')!;
    const s = createSolanaScanner(
      chain,
      { expectedGenesisHash: 'EtWTRABZaYq6iMfeYKouRu166VU2xqa1wcaWoxPkrZBG' },
      quietLogger(),
      {
        transport: replay.transport,
      },
    );
    await expect(s.verify()).rejects.toThrow(/wrong cluster/);
    expect(await s.head()).toBe(1100);
  });
});

describe('solana scanner: a crash mid-pass', () => {
  let a: TestDatabase;
  let b: TestDatabase;
  beforeAll(async () => {
    [a, b] = await Promise.all([openTestDatabase(), openTestDatabase()]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
  });

  it('checkpoints only whole slots: the next pass ends with exactly the rows of an uninterrupted run', async () => {
    const config = solanaOnlyConfig(32);
    const solana = { pageLimit: 2, baseDelayMs: 1, maxDelayMs: 2 };
    const clean = await runIndexPass({
      db: a.db,
      config,
      log: quietLogger(),
      progress: 'off',
      afterPass: null,
      solana: { ...solana, transport: createReplay(ledger(), 1010).transport },
    });
    expect(clean.status === 'ok' && clean.failed).toEqual([]);

    const replay = createReplay(ledger(), 1010);
    const seen: { from: number; to: number }[] = [];
    const crashed = await runIndexPass({
      db: b.db,
      config,
      log: quietLogger(),
      progress: 'off',
      afterPass: null,
      solana: { ...solana, transport: replay.transport },
      hooks: {
        afterBatch: (info) => {
          seen.push({ from: info.from, to: info.to });
          if (info.batch === 3) throw new Error('simulated crash');
        },
      },
    });
    expect(crashed.status === 'ok' && crashed.failed).toEqual(['solana']);
    // newest to oldest, one page of complete slots per batch; slot 150 waited for page 2 (its slot
    // could have continued), slot 100's two transactions were never split
    expect(seen).toEqual([
      { from: 140, to: 978 },
      { from: 120, to: 978 },
      { from: 105, to: 978 },
    ]);
    const [cp] = await b.db.query<{ n: string | number | null }>(
      `SELECT last_scanned_block AS n FROM chains WHERE network = 'solana'`,
    );
    expect(cp!.n).toBeNull(); // the walk has not reached its end: the checkpoint has not moved
    const [cur] = await b.db.query<{ before_signature: string; low_slot: string | number }>(
      `SELECT before_signature, low_slot FROM solana_scan_cursor WHERE network = 'solana'`,
    );
    expect(cur).toMatchObject({ before_signature: sig(3) });
    expect(Number(cur!.low_slot)).toBe(105);

    const callsBefore = replay.calls.length;
    const resumed = await runIndexPass({
      db: b.db,
      config,
      log: quietLogger(),
      progress: 'off',
      afterPass: null,
      solana: { ...solana, transport: replay.transport },
    });
    expect(resumed.status === 'ok' && resumed.chains[0]).toMatchObject({ status: 'ok', from: 0, to: 978 });
    // the walk resumed below the cursor: the pages above it were not listed again
    const lists = replay.calls.slice(callsBefore).filter((c) => c.method === 'getSignaturesForAddress');
    expect((lists[0]!.params as [string, { before?: string }])[1].before).toBe(sig(3));
    expect(lists).toHaveLength(2); // [sig 2, sig 1] (a full page), then the empty end of history
    expect(await b.db.query(`SELECT 1 FROM solana_scan_cursor`)).toHaveLength(0);
    const strip = (d: Record<string, unknown[]>) => JSON.stringify(d);
    expect(strip(await dumpIndex(b.db, ['solana']))).toEqual(strip(await dumpIndex(a.db, ['solana'])));
  });
});
