/**
 * The evidence counts a paid answer shows (documents fetched, matching their commitment, payments
 * verified) are read from per-agent counts a trigger keeps (migration 0110), so the answer reads
 * O(agents), never every document of a big subject. Whatever sequence of inserts, fetch outcomes,
 * re-fetches and rollback deletes happens, the kept counts equal a recount of the documents, and
 * readEvidenceCounts answers that recount.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { readEvidenceCounts } from '../src/read/documents.js';
import { openTestDatabase, testDbKind, type TestDatabase } from './helpers/db.js';

let t: TestDatabase;
let db: Database;
beforeAll(async () => {
  t = await openTestDatabase();
  db = t.db;
});
afterAll(async () => {
  await t.close();
});

const AGENTS = ['1', '2', '3'];
const STATES = ['queued', 'leased', 'retry', 'succeeded', 'failed'] as const;
const INTEGRITY = [null, 'match', 'mismatch', 'no_commitment', 'unreachable', 'not_json', 'changed'] as const;
const PAYMENT = [null, 'verified', 'not_found', 'mismatch', 'unsupported_chain'] as const;

type Op =
  | {
      kind: 'insert';
      agent: string;
      block: number;
      state: (typeof STATES)[number];
      integrity: (typeof INTEGRITY)[number];
    }
  | {
      kind: 'update';
      pick: number;
      /** a fetch that got bytes (the first one writes first_keccak256; later ones keep it) */
      fetch: boolean;
      state: (typeof STATES)[number];
      integrity: (typeof INTEGRITY)[number];
      payment: (typeof PAYMENT)[number];
    }
  | { kind: 'rollback'; above: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('insert' as const),
    agent: fc.constantFrom(...AGENTS),
    block: fc.integer({ min: 1, max: 40 }),
    state: fc.constantFrom(...STATES),
    integrity: fc.constantFrom(...INTEGRITY),
  }),
  fc.record({
    kind: fc.constant('update' as const),
    pick: fc.nat(),
    fetch: fc.boolean(),
    state: fc.constantFrom(...STATES),
    integrity: fc.constantFrom(...INTEGRITY),
    payment: fc.constantFrom(...PAYMENT),
  }),
  fc.record({ kind: fc.constant('rollback' as const), above: fc.integer({ min: 0, max: 40 }) }),
);

async function recount(): Promise<Record<string, [number, number, number]>> {
  const rows = await db.query<{ a: string; f: number; m: number; v: number }>(
    `SELECT agent_id AS a, count(*) FILTER (WHERE first_keccak256 IS NOT NULL)::int AS f,
            count(*) FILTER (WHERE integrity_state = 'match')::int AS m,
            count(*) FILTER (WHERE payment_state = 'verified')::int AS v
       FROM feedback_documents GROUP BY agent_id`,
  );
  return Object.fromEntries(rows.filter((r) => r.f + r.m + r.v > 0).map((r) => [r.a, [r.f, r.m, r.v]]));
}

async function kept(): Promise<Record<string, [number, number, number]>> {
  const rows = await db.query<{ a: string; f: number; m: number; v: number }>(
    `SELECT agent_id AS a, fetched::int AS f, matching::int AS m, verified::int AS v FROM agent_evidence
      WHERE fetched <> 0 OR matching <> 0 OR verified <> 0`,
  );
  return Object.fromEntries(rows.map((r) => [r.a, [r.f, r.m, r.v]]));
}

describe(`evidence counts kept per agent (${testDbKind})`, () => {
  it('equal a recount of the documents after any sequence of writes', async () => {
    let seq = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
        await db.exec('DELETE FROM feedback_documents; DELETE FROM agent_evidence');
        for (const o of ops) {
          if (o.kind === 'insert') {
            seq++;
            await db.query(
              `INSERT INTO feedback_documents (network, tx_hash, log_index, agent_id, rater, block_number, uri, state, integrity_state)
               VALUES ('base', $1, 0, $2, '0x00000000000000000000000000000000000000aa', $3, 'https://x.example/f.json', $4, $5)`,
              [`0x${seq.toString(16).padStart(64, '0')}`, o.agent, o.block, o.state, o.integrity],
            );
          } else if (o.kind === 'update') {
            const rows = await db.query<{ tx: string }>(
              `SELECT tx_hash AS tx FROM feedback_documents ORDER BY tx_hash`,
            );
            if (rows.length === 0) continue;
            await db.query(
              `UPDATE feedback_documents SET state = $2, integrity_state = $3, payment_state = $4,
                      first_keccak256 = CASE WHEN $5 THEN coalesce(first_keccak256, $1) ELSE first_keccak256 END
                WHERE tx_hash = $1`,
              [rows[o.pick % rows.length]!.tx, o.state, o.integrity, o.payment, o.fetch],
            );
          } else {
            await db.query(`DELETE FROM feedback_documents WHERE network = 'base' AND block_number > $1`, [
              o.above,
            ]);
          }
        }
        expect(await kept()).toEqual(await recount());
        const want = await recount();
        for (const a of AGENTS) {
          const [f, m, v] = want[a] ?? [0, 0, 0];
          expect(await readEvidenceCounts(db, [{ network: 'base', agentId: a }])).toEqual({
            ratings_with_document: f,
            ratings_with_matching_document: m,
            ratings_with_verified_payment: v,
          });
        }
      }),
      { numRuns: 25 },
    );
  });
});
