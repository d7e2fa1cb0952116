/**
 * Solana agent wallets (the program's WalletUpdated and WalletResetOnOwnerSync) through the real
 * pass, offline (replay transport): a response from the agent wallet in force at its position is
 * `operator` (append_response accepts the owner or the agent wallet), one from a key that became
 * the wallet only later, or from a wallet a reset on owner sync or a transfer cleared, is not; the
 * class does not depend on the page size of the newest-to-oldest walk; the paid agent detail
 * serves it. PGlite, or PostgreSQL with DATABASE_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../src/db/migrate.js';
import { agentDetailHandler } from '../src/paid/agent-detail.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  agentOwnerSynced,
  agentRegistered,
  key,
  newFeedback,
  programLogs,
  responseAppended,
  sig,
  walletResetOnOwnerSync,
  walletUpdated,
  type LedgerTx,
  solanaOnlyConfig,
  indexSolanaLedger,
} from './helpers/solana-fixtures.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the served JSON is read field by field */

const T0 = 1_760_000_000;
const [A, COLLECTION, O1, O2, O3, C1, C2, W1, W2, W3] = [
  key(61),
  key(62),
  key(63),
  key(64),
  key(65),
  key(66),
  key(67),
  key(68),
  key(69),
  key(70),
];

const respond = (client: typeof C1, index: bigint, slot: number, responder: typeof O1, uri: string) =>
  responseAppended({ asset: A, client: client, index, slot: BigInt(slot), responder: responder, uri });

let n = 500;
const tx = (slot: number, events: Buffer[], instruction: string): LedgerTx => ({
  signature: sig(n++),
  slot,
  blockTime: T0 + slot,
  logs: programLogs(events, { instruction }),
});

/**
 * A registered by O1 (100), rated by C1 (index 0) and C2 (index 1) (105). O1 sets the wallet W1
 * (110); W1 answers (C1, 0) (120); W2, not yet the wallet, answers (C2, 1) (125); O1 moves the
 * wallet to W2 (130); W2 and W1 (no longer the wallet) answer (140); in one transaction W3 answers,
 * then W3 becomes the wallet, then W3 answers again (150); sync_owner moves the owner to O2 and
 * resets the wallet (160: WalletResetOnOwnerSync, AgentOwnerSynced); W3 and O2 answer (170); O2
 * sets W1 (180); transfer_agent to O3 clears it (190: WalletUpdated to the all-zero key,
 * AgentOwnerSynced); W1 answers (200). Beyond the first pass's margin: O3 sets W2 (480), W1 answers
 * (485), W2 answers (490): a later pass walks them newest to oldest too, and no transfer follows.
 */
function ledger(): LedgerTx[] {
  n = 500;
  return [
    tx(100, [agentRegistered(A, COLLECTION, O1, 'ipfs://a')], 'Register'),
    tx(
      105,
      [
        newFeedback({ asset: A, client: C1, index: 0n, slot: 105n, value: 90n, decimals: 0 }),
        newFeedback({ asset: A, client: C2, index: 1n, slot: 105n, value: 40n, decimals: 0 }),
      ],
      'GiveFeedback',
    ),
    tx(110, [walletUpdated(A, null, W1, O1)], 'SetAgentWallet'),
    tx(120, [respond(C1, 0n, 120, W1, 'https://a.example/w1.json')], 'AppendResponse'),
    tx(125, [respond(C2, 1n, 125, W2, 'https://a.example/w2-early.json')], 'AppendResponse'),
    tx(130, [walletUpdated(A, W1, W2, O1)], 'SetAgentWallet'),
    tx(
      140,
      [
        respond(C2, 1n, 140, W2, 'https://a.example/w2.json'),
        respond(C1, 0n, 140, W1, 'https://a.example/w1-late.json'),
      ],
      'AppendResponse',
    ),
    tx(
      150,
      [
        respond(C1, 0n, 150, W3, 'https://a.example/w3-before.json'),
        walletUpdated(A, W2, W3, O1),
        respond(C1, 0n, 150, W3, 'https://a.example/w3-after.json'),
      ],
      'SetAgentWallet',
    ),
    tx(160, [walletResetOnOwnerSync(A, W3, O2), agentOwnerSynced(A, O1, O2)], 'SyncOwner'),
    tx(
      170,
      [
        respond(C2, 1n, 170, W3, 'https://a.example/w3-reset.json'),
        respond(C2, 1n, 170, O2, 'https://a.example/o2.json'),
      ],
      'AppendResponse',
    ),
    tx(180, [walletUpdated(A, null, W1, O2)], 'SetAgentWallet'),
    tx(190, [walletUpdated(A, W1, null, O2), agentOwnerSynced(A, O2, O3)], 'TransferAgent'),
    tx(200, [respond(C1, 0n, 200, W1, 'https://a.example/w1-cleared.json')], 'AppendResponse'),
    tx(480, [walletUpdated(A, null, W2, O3)], 'SetAgentWallet'),
    tx(485, [respond(C2, 1n, 485, W1, 'https://a.example/w1-again.json')], 'AppendResponse'),
    tx(490, [respond(C2, 1n, 490, W2, 'https://a.example/w2-o3.json')], 'AppendResponse'),
  ];
}

const config = solanaOnlyConfig(32);

/** One pass over the ledger as a node with head `head` serves it (the margin is 32 slots). */
const index = (t: TestDatabase, pageLimit: number, head = 500) =>
  indexSolanaLedger(t.db, config, ledger(), { pageLimit, head });

const classes = (t: TestDatabase) =>
  t.db.query<{ slot: number; log_index: number; responder: string; responder_class: string; uri: string }>(
    `SELECT block_number::int AS slot, log_index, responder, responder_class, response_uri AS uri
       FROM rating_responses WHERE network = 'solana' ORDER BY block_number, log_index`,
  );

const wallets = (t: TestDatabase) =>
  t.db.query<Record<string, unknown>>(
    `SELECT block_number::int AS slot, log_index, agent_id, wallet
       FROM solana_agent_wallets WHERE network = 'solana' ORDER BY block_number, log_index`,
  );

describe('solana agent wallets: responses from the agent wallet are operator', () => {
  let paged: TestDatabase;
  let whole: TestDatabase;
  let batches: number;

  beforeAll(async () => {
    [paged, whole] = await Promise.all([openTestDatabase(), openTestDatabase()]);
    // two transactions a page: most responses are written before the wallet changes preceding them
    const p = await index(paged, 2);
    batches = p.batches;
    expect(p.inserted).toMatchObject({ ratings: 2, responses: 9 });
    await index(whole, 1000);
  });
  afterAll(async () => {
    await Promise.all([paged?.close(), whole?.close()]);
  });

  it('keeps the wallet history: set, moved, reset on owner sync, cleared by a transfer', async () => {
    expect(await wallets(paged)).toEqual([
      { slot: 110, log_index: 0, agent_id: A.b58, wallet: W1.b58 },
      { slot: 130, log_index: 0, agent_id: A.b58, wallet: W2.b58 },
      { slot: 150, log_index: 2, agent_id: A.b58, wallet: W3.b58 },
      { slot: 160, log_index: 0, agent_id: A.b58, wallet: null },
      { slot: 180, log_index: 0, agent_id: A.b58, wallet: W1.b58 },
      { slot: 190, log_index: 0, agent_id: A.b58, wallet: null },
    ]);
    expect(await wallets(whole)).toEqual(await wallets(paged));
  });

  it('classes each response by the owner, then the agent wallet, in force at its position', async () => {
    expect(batches).toBeGreaterThan(5);
    const rows = await classes(paged);
    expect(rows.map((r) => [r.slot, r.log_index, r.responder, r.responder_class])).toEqual([
      [120, 0, W1.b58, 'operator'],
      // W2 became the wallet only at 130
      [125, 0, W2.b58, 'third_party'],
      [140, 0, W2.b58, 'operator'],
      // W1 was the wallet until 130
      [140, 2, W1.b58, 'third_party'],
      // the same transaction: before the wallet change, then after it
      [150, 0, W3.b58, 'third_party'],
      [150, 4, W3.b58, 'operator'],
      // sync_owner reset the wallet at 160
      [170, 0, W3.b58, 'third_party'],
      [170, 2, O2.b58, 'owner'],
      // transfer_agent cleared W1 (a WalletUpdated to the all-zero key) at 190
      [200, 0, W1.b58, 'third_party'],
    ]);
    // the page size of the walk changes nothing
    expect(await classes(whole)).toEqual(rows);
  });

  it('the paid agent detail serves operator in responses[]', async () => {
    const ctx = { config, db: paged.db, now: () => new Date((T0 + 300) * 1000) };
    const v = await agentDetailHandler.validate(ctx, {
      params: { network: 'solana', agent_id: A.b58 },
      query: {},
    });
    if (!v.ok) throw new Error(JSON.stringify(v.body));
    const res = await agentDetailHandler.run(ctx, v.input, { receipt: null });
    expect(res.status).toBe(200);
    const body = JSON.parse(JSON.stringify(res.body)) as { ratings: any[] };
    const first = body.ratings.find((r) => r.rater === C1.b58);
    const served = first.responses.map((r: any) => [r.responder, r.responder_class, r.response_uri]);
    expect(served).toContainEqual([W1.b58, 'operator', 'https://a.example/w1.json']);
    expect(served).toContainEqual([W1.b58, 'third_party', 'https://a.example/w1-late.json']);
  });

  it('a later pass: a wallet change written after the responses it precedes re-classes them', async () => {
    for (const [t, pageLimit] of [
      [paged, 2],
      [whole, 1000],
    ] as const) {
      const s = await index(t, pageLimit, 600);
      expect(s.inserted).toMatchObject({ responses: 2 });
      const rows = (await classes(t)).filter((r) => r.slot >= 480);
      expect(rows.map((r) => [r.slot, r.responder, r.responder_class])).toEqual([
        [485, W1.b58, 'third_party'],
        [490, W2.b58, 'operator'],
      ]);
    }
    expect(await classes(whole)).toEqual(await classes(paged));
  });
});

/** Every Solana row the index holds, and the chain's counters, in a fixed order. */
async function solanaState(t: TestDatabase) {
  const rows = async (table: string, order: string) =>
    t.db.query(`SELECT * FROM ${table} WHERE network = 'solana' ORDER BY ${order}`);
  return {
    agents: await rows('agents', 'agent_id'),
    ratings: await rows('ratings', 'block_number, log_index'),
    transfers: await rows('ownership_transfers', 'block_number, log_index'),
    metadata: await rows('agent_metadata', 'agent_id, meta_key'),
    responses: await rows('rating_responses', 'block_number, log_index'),
    wallets: await rows('solana_agent_wallets', 'block_number, log_index'),
    documents: await t.db.query(
      `SELECT network, tx_hash, log_index, uri FROM feedback_documents WHERE network = 'solana' ORDER BY tx_hash, log_index`,
    ),
    counters: await t.db.query(
      `SELECT agents_count, ratings_count, last_scanned_block, backfill_complete FROM chains WHERE network = 'solana'`,
    ),
  };
}

describe('migration 0130: an index scanned before it reads the Solana history again', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await openTestDatabase();
  });
  afterAll(() => t?.close());

  it('resets the Solana checkpoint; the next pass adds exactly the skipped responses and wallets', async () => {
    await index(t, 2, 600);
    const full = await solanaState(t);
    expect(full.responses.length).toBe(11);
    expect(full.wallets.length).toBe(7);
    // What an index scanned before 0130 holds: no Solana response, no wallet history.
    await t.db.query(`DELETE FROM rating_responses WHERE network = 'solana'`);
    await t.db.query(`DELETE FROM solana_agent_wallets WHERE network = 'solana'`);
    await t.db.query(`DELETE FROM schema_migrations WHERE id = '0130_solana_agent_wallets.sql'`);
    expect(await migrate(t.db)).toEqual(['0130_solana_agent_wallets.sql']);
    const [reset] = await t.db.query<{ last_scanned_block: unknown; backfill_complete: boolean }>(
      `SELECT last_scanned_block, backfill_complete FROM chains WHERE network = 'solana'`,
    );
    expect(reset).toEqual({ last_scanned_block: null, backfill_complete: false });
    const s = await index(t, 2, 600);
    // the skipped rows come back, nothing else is written twice
    expect(s.inserted).toMatchObject({ ratings: 0, responses: 11 });
    expect(await solanaState(t)).toEqual(full);
  });
});
