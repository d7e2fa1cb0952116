/**
 * Histories of ratings and agents written straight into a test database, for the maintained
 * aggregates' tests (test/subject-aggregates.test.ts and its module
 * test/subject-aggregates/paid-answers.ts): the small address, chain, agent and tag alphabets, the
 * operations (multi-row rating inserts, ownership transfers, agents disappearing, revocations and
 * their reversal, reorg-style deletes), a writer that applies them, and the file's test database.
 * Each user keeps its block counter and hands the writer its increment, so a test can restart it.
 */
import { afterAll, beforeAll } from 'vitest';
import type { Database } from '../../src/db/database.js';
import { openTestDatabase, type TestDatabase } from './db.js';

export const A = (n: number) => `0x${String(n).repeat(40)}`;
export const ADDRS = [A(1), A(2), A(3), A(4), A(5)];
export const NETWORKS = ['base', 'ethereum', 'solana'];
export const AGENTS = ['1', '2', '3'];
export const TAGS = ['', 'quality', 'agent_rating:x', 'speed'];

export type Op =
  | {
      kind: 'rate';
      items: {
        network: string;
        agent: string;
        rater: string;
        value: string;
        time: number | null;
        tag: string;
        revoked: boolean;
      }[];
    }
  | { kind: 'owner'; network: string; agent: string; owner: string | null }
  | { kind: 'dropAgent'; network: string; agent: string }
  | { kind: 'revoke'; pick: number; revoked: boolean }
  | { kind: 'rollback'; keep: number };

/** `reset` empties ratings, agents and chains; `apply` writes the operations in order. */
export function historyWriter(database: () => Database, nextBlock: () => number) {
  async function reset(): Promise<void> {
    const db = database();
    await db.query('DELETE FROM ratings');
    await db.query('DELETE FROM agents');
    await db.query('DELETE FROM chains');
  }

  async function apply(ops: readonly Op[]): Promise<void> {
    const db = database();
    for (const o of ops) {
      if (o.kind === 'rate') {
        const rows = o.items.map((it) => ({ ...it, block: nextBlock() }));
        await db.query(
          `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals,
                                value, tag1, block_number, block_time, revoked)
           SELECT k.network, 'tx' || k.block, 0, k.agent, k.rater, k.block, 0, 0, k.value, k.tag, k.block, k.t, k.rev
             FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[], $5::text[], $6::bigint[], $7::timestamptz[], $8::boolean[])
                  AS k(network, agent, rater, value, tag, block, t, rev)`,
          [
            rows.map((r) => r.network),
            rows.map((r) => r.agent),
            rows.map((r) => r.rater),
            rows.map((r) => r.value),
            rows.map((r) => r.tag),
            rows.map((r) => r.block),
            rows.map((r) => (r.time === null ? null : new Date(r.time).toISOString())),
            rows.map((r) => r.revoked),
          ],
        );
      } else if (o.kind === 'owner') {
        await db.query(
          `INSERT INTO agents (network, agent_id, owner) VALUES ($1, $2, $3)
           ON CONFLICT (network, agent_id) DO UPDATE SET owner = EXCLUDED.owner`,
          [o.network, o.agent, o.owner],
        );
      } else if (o.kind === 'dropAgent') {
        await db.query('DELETE FROM agents WHERE network = $1 AND agent_id = $2', [o.network, o.agent]);
      } else if (o.kind === 'revoke') {
        const all = await db.query<{ tx_hash: string; network: string }>(
          'SELECT network, tx_hash FROM ratings ORDER BY block_number',
        );
        const target = all[o.pick % Math.max(1, all.length)];
        if (target)
          await db.query('UPDATE ratings SET revoked = $3 WHERE network = $1 AND tx_hash = $2', [
            target.network,
            target.tx_hash,
            o.revoked,
          ]);
      } else {
        const [m] = await db.query<{ lo: number | null }>('SELECT min(block_number)::int AS lo FROM ratings');
        await db.query('DELETE FROM ratings WHERE block_number > $1', [(m?.lo ?? 0) + o.keep]);
      }
    }
  }

  return { reset, apply };
}

/**
 * Opens the file's test database in a beforeAll (handing it to `onOpen`) and closes it in an
 * afterAll; returns the writer over it.
 */
export function historyDatabase(onOpen: (db: Database) => void, nextBlock: () => number) {
  let t: TestDatabase | undefined;
  let db: Database;
  beforeAll(async () => {
    t = await openTestDatabase();
    db = t.db;
    onOpen(db);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });
  return historyWriter(() => db, nextBlock);
}
