/**
 * Order inside a slot (issue 10, point 1): two and three transactions of the program in ONE slot,
 * in every combination of the event kinds that depend on order (register, owner transfer, URI,
 * metadata, feedback, revocation), must leave the index exactly as the same transactions in
 * consecutive slots do. Each scenario has its own agent; the same-slot ledger is read with small
 * signature pages, so slots also straddle pages. Through the replay transport, on the test
 * database (PGlite, or PostgreSQL with DATABASE_URL).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../src/db/database.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { quietLogger } from './helpers/indexer-fixtures.js';
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
  uriUpdated,
  type LedgerTx,
  solanaOnlyConfig,
} from './helpers/solana-fixtures.js';

const KINDS = ['register', 'transfer', 'uri', 'metadata', 'feedback', 'revoke'] as const;
type Kind = (typeof KINDS)[number];
const LATER = KINDS.filter((k) => k !== 'register');
const COLLECTION = key(3);
const T0 = 1_760_000_000;

/** Every sequence of 2 and 3 transactions (a registration only first: an agent registers once). */
function scenarios(): Kind[][] {
  const out: Kind[][] = [];
  for (const a of KINDS) for (const b of LATER) out.push([a, b]);
  for (const a of KINDS) for (const b of LATER) for (const c of LATER) out.push([a, b, c]);
  return out;
}

/**
 * The ledger: scenario i owns agent key(10_000 + i) and slots from 1000 * (i + 1); its prelude
 * (a registration, a feedback to revoke) sits in an earlier slot; its transactions share one slot
 * (`sameSlot`) or take one slot each.
 */
function ledger(sameSlot: boolean): LedgerTx[] {
  const txs: LedgerTx[] = [];
  scenarios().forEach((kinds, i) => {
    const asset = key(10_000 + i);
    const client = key(20_000 + i);
    const base = 1000 * (i + 1);
    const seed = (j: number) => 1_000_000 + i * 10 + j;
    const prelude = [];
    if (kinds[0] !== 'register')
      prelude.push(agentRegistered(asset, COLLECTION, key(30_000 + i * 10), `ipfs://s${i}/r0`));
    prelude.push(newFeedback({ asset, client, index: 0n, slot: BigInt(base), value: 60n, decimals: 0 }));
    txs.push({ signature: sig(seed(9)), slot: base, blockTime: T0 + base, logs: programLogs(prelude) });
    kinds.forEach((k, j) => {
      const slot = sameSlot ? base + 10 : base + 10 + j;
      const owner = key(30_000 + i * 10 + j + 1);
      const ev =
        k === 'register'
          ? agentRegistered(asset, COLLECTION, owner, `ipfs://s${i}/r${j}`)
          : k === 'transfer'
            ? agentOwnerSynced(asset, key(30_000 + i * 10 + j), owner)
            : k === 'uri'
              ? uriUpdated(asset, owner, `ipfs://s${i}/u${j}`)
              : k === 'metadata'
                ? metadataSet(asset, 'type', Buffer.from(`type-${j}`))
                : k === 'feedback'
                  ? newFeedback({
                      asset,
                      client,
                      index: 1n,
                      slot: BigInt(slot),
                      value: BigInt(70 + j),
                      decimals: 0,
                    })
                  : feedbackRevoked(asset, client, 1n, BigInt(slot));
      // one block time for the whole slot; in the one-slot-each ledger too, so only order differs
      txs.push({ signature: sig(seed(j)), slot, blockTime: T0 + base, logs: programLogs([ev]) });
    });
  });
  return txs;
}

/** Everything order decides, per agent, with positions replaced by their order. */
async function stateOf(db: Queryable): Promise<Record<string, unknown>> {
  const agents = await db.query<Record<string, unknown>>(
    `SELECT agent_id, owner, minter, agent_uri, registered_tx, declared_type FROM agents WHERE network = 'solana' ORDER BY agent_id`,
  );
  const meta = await db.query<Record<string, unknown>>(
    `SELECT agent_id, meta_key, value_text, tx_hash FROM agent_metadata WHERE network = 'solana' ORDER BY agent_id, meta_key`,
  );
  const ratings = await db.query<Record<string, unknown>>(
    `SELECT agent_id, tx_hash, feedback_index::text AS fi, revoked, revoked_tx FROM ratings WHERE network = 'solana'
      ORDER BY agent_id, block_number, log_index`,
  );
  const transfers = await db.query<Record<string, unknown>>(
    `SELECT agent_id, tx_hash, to_address FROM ownership_transfers WHERE network = 'solana' ORDER BY agent_id, block_number, log_index`,
  );
  const revocations = await db.query<Record<string, unknown>>(
    `SELECT agent_id, tx_hash FROM revocations WHERE network = 'solana' ORDER BY agent_id, block_number, log_index`,
  );
  return { agents, meta, ratings, transfers, revocations };
}

describe('solana: order inside a slot', () => {
  let same: TestDatabase;
  let apart: TestDatabase;
  const cfg = solanaOnlyConfig(0);
  const n = scenarios().length;

  beforeAll(async () => {
    [same, apart] = await Promise.all([openTestDatabase(), openTestDatabase()]);
    const head = 1000 * (n + 2);
    const run = (db: TestDatabase, sameSlot: boolean, pageLimit: number) =>
      runIndexPass({
        db: db.db,
        config: cfg,
        log: quietLogger(),
        progress: 'off',
        afterPass: null,
        solana: {
          transport: createReplay(ledger(sameSlot), head).transport,
          pageLimit,
          baseDelayMs: 1,
          maxDelayMs: 2,
        },
      });
    const [a, b] = [await run(same, true, 7), await run(apart, false, 1000)];
    expect(a.status === 'ok' && a.failed).toEqual([]);
    expect(b.status === 'ok' && b.failed).toEqual([]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([same.close(), apart.close()]);
  });

  it(`${n} scenarios of 2 and 3 transactions in one slot end as they do in consecutive slots`, async () => {
    const [s, a] = [await stateOf(same.db), await stateOf(apart.db)];
    expect((s.agents as unknown[]).length).toBe(n);
    // per-scenario comparison first, for a readable failure
    for (const table of ['agents', 'meta', 'ratings', 'transfers', 'revocations'] as const) {
      const byAgent = (rows: unknown) => {
        const m = new Map<string, unknown[]>();
        for (const r of rows as Record<string, unknown>[])
          m.set(r.agent_id as string, [...(m.get(r.agent_id as string) ?? []), r]);
        return m;
      };
      const [ms, ma] = [byAgent(s[table]), byAgent(a[table])];
      scenarios().forEach((kinds, i) => {
        const id = key(10_000 + i).b58;
        expect(ms.get(id), `${table} of scenario ${kinds.join(' → ')}`).toEqual(ma.get(id));
      });
    }
    expect(s).toEqual(a);
  });

  it('a transfer in a later transaction of the registration slot moves the owner; of two transfers the later wins', async () => {
    const idx = (kinds: Kind[]) => scenarios().findIndex((k) => k.join() === kinds.join());
    const owner = async (i: number) =>
      (
        await same.db.query<{ owner: string }>(
          `SELECT owner FROM agents WHERE network = 'solana' AND agent_id = $1`,
          [key(10_000 + i).b58],
        )
      )[0]!.owner;
    const i1 = idx(['register', 'transfer']);
    expect(await owner(i1)).toBe(key(30_000 + i1 * 10 + 2).b58);
    const i2 = idx(['transfer', 'transfer']);
    expect(await owner(i2)).toBe(key(30_000 + i2 * 10 + 2).b58);
    const i3 = idx(['uri', 'uri', 'transfer']);
    const [a3] = await same.db.query<{ agent_uri: string }>(
      `SELECT agent_uri FROM agents WHERE network = 'solana' AND agent_id = $1`,
      [key(10_000 + i3).b58],
    );
    expect(a3!.agent_uri).toBe(`ipfs://s${i3}/u1`);
    // the earliest of two revocations of one rating in one slot is the one applied
    const i4 = idx(['feedback', 'revoke', 'revoke']);
    const [r4] = await same.db.query<{ revoked_tx: string }>(
      `SELECT revoked_tx FROM ratings WHERE network = 'solana' AND agent_id = $1 AND feedback_index = 1`,
      [key(10_000 + i4).b58],
    );
    expect(r4!.revoked_tx).toBe(sig(1_000_000 + i4 * 10 + 1));
  });

  it('positions pack (transaction index in the slot, event index): the slot’s first transaction has index 0', async () => {
    const i = scenarios().findIndex((k) => k.join() === 'register,metadata,feedback');
    const rows = await same.db.query<{ tx_hash: string; log_index: number }>(
      `SELECT tx_hash, log_index FROM ownership_transfers WHERE network = 'solana' AND agent_id = $1
       UNION ALL SELECT tx_hash, log_index FROM agent_metadata WHERE network = 'solana' AND agent_id = $1
       UNION ALL SELECT tx_hash, log_index FROM ratings WHERE network = 'solana' AND agent_id = $1 AND feedback_index = 1
       ORDER BY log_index`,
      [key(10_000 + i).b58],
    );
    const seed = (j: number) => sig(1_000_000 + i * 10 + j);
    expect(rows).toEqual([
      { tx_hash: seed(0), log_index: 1 }, // registration's implied transfer: tx 0, event 0, second position
      { tx_hash: seed(1), log_index: 4096 },
      { tx_hash: seed(2), log_index: 8192 },
    ]);
  });
});
