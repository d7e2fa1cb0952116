/**
 * Solana responses (the program's ResponseAppended) through the real pass, offline (replay
 * transport): stored in rating_responses keyed like the rating they answer, the responder classed
 * by the ownership history (the walk runs newest to oldest, so a response is written before the
 * registration that made its responder the owner), the hostile URI stored as text, and served in
 * `responses[]` by the paid agent detail. PGlite, or PostgreSQL with DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDetailHandler } from '../src/paid/agent-detail.js';
import { insertResponses } from '../src/store/responses.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  agentOwnerSynced,
  agentRegistered,
  key,
  newFeedback,
  programLogs,
  responseAppended,
  sig,
  type LedgerTx,
  solanaOnlyConfig,
  indexSolanaLedger,
} from './helpers/solana-fixtures.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the served JSON is read field by field */

const T0 = 1_760_000_000;
const [A, COLLECTION, O1, O2, C1, C2, X, O3] = [
  key(41),
  key(42),
  key(43),
  key(44),
  key(45),
  key(46),
  key(47),
  key(48),
];

/** Markup, a NUL, SQL and a byte that is not UTF-8, as a hostile caller can have the program log. */
const HOSTILE_URI = Buffer.concat([
  Buffer.from(`javascript:alert("x")//<script>alert(1)</script>\u0000'; DROP TABLE rating_responses; --`),
  Buffer.of(0xfe),
]);
const HOSTILE_STORED = `javascript:alert("x")//<script>alert(1)</script>\uFFFD'; DROP TABLE rating_responses; --\uFFFD`;

const respond = (client: typeof C1, index: bigint, slot: bigint, responder: typeof O1, uri: string) =>
  responseAppended({ asset: A, client, index, slot, responder, uri });

/**
 * A registered by O1 (slot 100); ratings (C1, 0) and (C2, 1) (slot 110); O1 answers (C1, 0) as the
 * owner (120); X, a third party, answers it with a hostile URI (130); the owner moves to O2 (140);
 * then O1 (no longer the owner) and O2 (the owner) answer (C2, 1), and O2 answers (C2, 0), a rating
 * that does not exist (150). Beyond the first pass's margin: O2 answers (C2, 1) again (480), then
 * the owner moves to O3 (481).
 */
function ledger(): LedgerTx[] {
  return [
    {
      signature: sig(401),
      slot: 100,
      blockTime: T0,
      logs: programLogs([agentRegistered(A, COLLECTION, O1, 'ipfs://a')]),
    },
    {
      signature: sig(402),
      slot: 110,
      blockTime: T0 + 4,
      logs: programLogs(
        [
          newFeedback({ asset: A, client: C1, index: 0n, slot: 110n, value: 90n, decimals: 0 }),
          newFeedback({ asset: A, client: C2, index: 1n, slot: 110n, value: 40n, decimals: 0 }),
        ],
        { instruction: 'GiveFeedback' },
      ),
    },
    {
      signature: sig(403),
      slot: 120,
      blockTime: T0 + 8,
      logs: programLogs([respond(C1, 0n, 120n, O1, 'https://a.example/reply-1.json')], {
        instruction: 'AppendResponse',
      }),
    },
    {
      signature: sig(404),
      slot: 130,
      blockTime: T0 + 12,
      logs: programLogs(
        [
          responseAppended({
            asset: A,
            client: C1,
            index: 0n,
            slot: 130n,
            responder: X,
            uri: '',
            uriBytes: HOSTILE_URI,
            hash: new Uint8Array(32).fill(0xee),
          }),
        ],
        { instruction: 'AppendResponse' },
      ),
    },
    {
      signature: sig(405),
      slot: 140,
      blockTime: T0 + 16,
      logs: programLogs([agentOwnerSynced(A, O1, O2)], { instruction: 'TransferAgent' }),
    },
    {
      signature: sig(406),
      slot: 150,
      blockTime: T0 + 20,
      logs: programLogs(
        [
          respond(C2, 1n, 150n, O1, 'https://a.example/late.json'),
          respond(C2, 1n, 150n, O2, 'https://a.example/reply-2.json'),
          respond(C2, 0n, 150n, O2, 'https://a.example/nothing.json'),
        ],
        { instruction: 'AppendResponse' },
      ),
    },
    {
      signature: sig(408),
      slot: 480,
      blockTime: T0 + 60,
      logs: programLogs([respond(C2, 1n, 480n, O2, 'https://a.example/reply-3.json')], {
        instruction: 'AppendResponse',
      }),
    },
    {
      signature: sig(409),
      slot: 481,
      blockTime: T0 + 61,
      logs: programLogs([agentOwnerSynced(A, O2, O3)], { instruction: 'TransferAgent' }),
    },
  ];
}

const config = solanaOnlyConfig(32);

/** One pass over the ledger as a node with head `head` serves it (the margin is 32 slots). */
const index = (t: TestDatabase, pageLimit: number, head = 500) =>
  indexSolanaLedger(t.db, config, ledger(), { pageLimit, head });

const responseRows = (t: TestDatabase) =>
  t.db.query<Record<string, unknown>>(
    `SELECT tx_hash, log_index, agent_id, rater, feedback_index::text AS fi, responder, responder_class,
            response_uri, response_hash, block_number::int AS slot, block_time
       FROM rating_responses WHERE network = 'solana' ORDER BY block_number, log_index`,
  );

describe('solana responses: indexed, classed and served', () => {
  let paged: TestDatabase;
  let whole: TestDatabase;
  let batches: number;

  beforeAll(async () => {
    [paged, whole] = await Promise.all([openTestDatabase(), openTestDatabase()]);
    // two transactions a page: the responses are written before the transfers that precede them
    const p = await index(paged, 2);
    batches = p.batches;
    expect(p.inserted).toMatchObject({ ratings: 2, responses: 5, transfers: 2 });
    await index(whole, 1000);
  });
  afterAll(async () => {
    await Promise.all([paged?.close(), whole?.close()]);
  });

  it('stores every response keyed like its rating, classed by the owner at its slot', async () => {
    expect(batches).toBeGreaterThan(3);
    const rows = await responseRows(paged);
    expect(rows.map((r) => [r.tx_hash, r.rater, r.fi, r.responder, r.responder_class, r.slot])).toEqual([
      [sig(403), C1.b58, '0', O1.b58, 'owner', 120],
      [sig(404), C1.b58, '0', X.b58, 'third_party', 130],
      [sig(406), C2.b58, '1', O1.b58, 'third_party', 150],
      [sig(406), C2.b58, '1', O2.b58, 'owner', 150],
      [sig(406), C2.b58, '0', O2.b58, 'owner', 150],
    ]);
    expect(rows.map((r) => r.log_index)).toEqual([0, 0, 0, 2, 4]);
    expect(rows.every((r) => r.agent_id === A.b58)).toBe(true);
    expect(rows[0]).toMatchObject({
      response_uri: 'https://a.example/reply-1.json',
      response_hash: `0x${'5a'.repeat(32)}`,
    });
    expect(rows[1]).toMatchObject({ response_uri: HOSTILE_STORED, response_hash: `0x${'ee'.repeat(32)}` });
    expect(new Date(rows[1]!.block_time as string).getTime()).toBe((T0 + 12) * 1000);
    // the order the walk met the history in changes nothing: one batch gives the same rows
    expect(await responseRows(whole)).toEqual(rows);
  });

  it('the paid agent detail serves each rating its responses', async () => {
    const ctx = { config, db: paged.db, now: () => new Date((T0 + 100) * 1000) };
    const v = await agentDetailHandler.validate(ctx, {
      params: { network: 'solana', agent_id: A.b58 },
      query: {},
    });
    if (!v.ok) throw new Error(JSON.stringify(v.body));
    const res = await agentDetailHandler.run(ctx, v.input, { receipt: null });
    expect(res.status).toBe(200);
    const body = JSON.parse(JSON.stringify(res.body)) as { ratings: any[] };
    expect(body.ratings).toHaveLength(2);
    const byRater = new Map(body.ratings.map((r) => [r.rater, r]));
    const first = byRater.get(C1.b58);
    expect(first).toMatchObject({ feedback_index: '0', responses_total: 2 });
    expect(first.responses).toEqual([
      {
        responder: O1.b58,
        responder_class: 'owner',
        response_uri: 'https://a.example/reply-1.json',
        response_hash: `0x${'5a'.repeat(32)}`,
        tx_hash: sig(403),
        block_number: 120,
        log_index: 0,
        block_time: new Date((T0 + 8) * 1000).toISOString(),
      },
      {
        responder: X.b58,
        responder_class: 'third_party',
        response_uri: HOSTILE_STORED,
        response_hash: `0x${'ee'.repeat(32)}`,
        tx_hash: sig(404),
        block_number: 130,
        log_index: 0,
        block_time: new Date((T0 + 12) * 1000).toISOString(),
      },
    ]);
    // the response naming (C2, 0), a rating that does not exist, is shown under no rating
    const second = byRater.get(C2.b58);
    expect(second).toMatchObject({ feedback_index: '1', responses_total: 2 });
    expect(second.responses.map((r: any) => [r.responder, r.responder_class, r.response_uri])).toEqual([
      [O1.b58, 'third_party', 'https://a.example/late.json'],
      [O2.b58, 'owner', 'https://a.example/reply-2.json'],
    ]);
  });

  it('a base58 responder is the owner only when it is the very key (case matters)', async () => {
    const swapped = [...O2.b58]
      .map((ch) => (ch === ch.toLowerCase() ? ch.toUpperCase() : ch.toLowerCase()))
      .join('');
    expect(swapped.toLowerCase()).toBe(O2.b58.toLowerCase());
    const at = (logIndex: number, responder: string) => ({
      kind: 'response' as const,
      network: 'solana',
      txHash: sig(499),
      logIndex,
      blockNumber: 499,
      blockTime: null,
      agentId: A.b58,
      rater: C1.b58,
      feedbackIndex: '0',
      responder,
      responseUri: '',
      responseHash: null,
    });
    // insertResponses alone (no history re-class): against the current owner, O2
    await whole.db.transaction((tx) => insertResponses(tx, [at(0, O2.b58), at(2, swapped)]));
    const rows = await whole.db.query<{ responder_class: string }>(
      `SELECT responder_class FROM rating_responses WHERE network = 'solana' AND tx_hash = $1 ORDER BY log_index`,
      [sig(499)],
    );
    expect(rows.map((r) => r.responder_class)).toEqual(['owner', 'third_party']);
  });

  it("a later pass: a response followed by a transfer away stays the owner's", async () => {
    for (const [t, pageLimit] of [
      [paged, 2],
      [whole, 1000],
    ] as const) {
      const s = await index(t, pageLimit, 600);
      expect(s).toMatchObject({ from: 469, to: 568 });
      expect(s.inserted).toMatchObject({ responses: 1, transfers: 1 });
      const [late] = await t.db.query<Record<string, unknown>>(
        `SELECT responder, responder_class FROM rating_responses WHERE network = 'solana' AND tx_hash = $1`,
        [sig(408)],
      );
      // O2 owned A at slot 480 (from 140 to 481), though O3 is its owner when the row is written
      expect(late).toEqual({ responder: O2.b58, responder_class: 'owner' });
    }
    // and nothing earlier moved
    const rows = await responseRows(paged);
    expect(rows.filter((r) => r.slot !== 480).map((r) => r.responder_class)).toEqual([
      'owner',
      'third_party',
      'third_party',
      'owner',
      'owner',
    ]);
  });
});
