/**
 * The two ways the ingest sends a batch's ratings store the same rows: the COPY of a CSV into a
 * staging table (PGlite) and the INSERT … SELECT FROM unnest of arrays (PostgreSQL, and any
 * handle without `copyCsv`), for any text the chain can carry (quotes, commas, newlines,
 * backslashes, empty strings, the CSV end marker), NULL hashes and block times, and duplicates.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../src/db/database.js';
import type { FeedbackEvent } from '../src/index-events.js';
import { insertRatings } from '../src/store/ratings.js';
import { openTestDatabase, testDbKind, type TestDatabase } from './helpers/db.js';

let t: TestDatabase;
beforeAll(async () => {
  t = await openTestDatabase();
  await t.db.query(`INSERT INTO chains (network, kind) VALUES ('base', 'evm') ON CONFLICT DO NOTHING`);
});
afterAll(() => t.close());

/** The handle without its COPY: the unnest path. */
const withoutCopy = (tx: Queryable): Queryable => ({
  query: (sql, params, opts) => tx.query(sql, params, opts),
  exec: (sql) => tx.exec(sql),
});

const text = fc.oneof(
  fc.constantFrom('', '"', '""', ',', '\n', '\r\n', '\\', '\\.', 'a,"b"\nc', 'NULL', '\\N', ' '),
  fc.string({ unit: 'grapheme', maxLength: 12 }).map((s) => s.split(String.fromCharCode(0)).join('')),
);

const feedback = (
  i: number,
  f: { t1: string; t2: string; ep: string; uri: string; hash: boolean; time: boolean },
) =>
  ({
    kind: 'feedback',
    network: 'base',
    txHash: `0x${i.toString(16).padStart(64, '0')}`,
    logIndex: i % 3,
    blockNumber: 100 + i,
    blockTime: f.time ? new Date(Date.UTC(2026, 0, 1) + i * 1000) : null,
    agentId: String(1 + (i % 4)),
    rater: `0x${(i % 5).toString(16).padStart(40, '0')}`,
    feedbackIndex: String(i + 1),
    valueRaw: String(i * 37 - 500),
    valueDecimals: i % 3,
    value: String((i * 37 - 500) / 10 ** (i % 3)),
    tag1: f.t1,
    tag2: f.t2,
    endpoint: f.ep,
    feedbackUri: f.uri,
    feedbackHash: f.hash ? `0x${'ab'.repeat(32)}` : null,
  }) satisfies FeedbackEvent;

const snapshot = (tx: Queryable) =>
  tx.query(
    `SELECT network, tx_hash, log_index, agent_id, rater, feedback_index::text, value_raw::text, value_decimals,
            value::text, tag1, tag2, endpoint, feedback_uri, feedback_hash, block_number, block_time, revoked
       FROM ratings ORDER BY network, tx_hash, log_index`,
  );

describe('insertRatings: COPY staging and unnest arrays', () => {
  // PostgreSQL has one path only (no COPY through `pg`).
  it.skipIf(testDbKind === 'postgres')('store the same rows and count the same inserts', async () => {
    expect(t.db.copyCsv).toBeTypeOf('function');
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({ t1: text, t2: text, ep: text, uri: text, hash: fc.boolean(), time: fc.boolean() }),
          { minLength: 1, maxLength: 12 },
        ),
        fc.integer({ min: 0, max: 3 }),
        async (fields, dup) => {
          const events = fields.map((f, i) => feedback(i, f));
          // the same key twice in a batch: the first one stays, like a replayed log
          const batch = [...events, ...events.slice(0, dup)];
          const run = (copy: boolean) =>
            t.db
              .transaction(async (tx) => {
                const n = await insertRatings(copy ? tx : withoutCopy(tx), batch);
                const again = await insertRatings(copy ? tx : withoutCopy(tx), batch);
                const rows = await snapshot(tx);
                throw Object.assign(new Error('rollback'), { result: { n, again, rows } });
              })
              .catch((e: { result?: unknown }) => {
                if (!e.result) throw e;
                return e.result;
              });
          const viaCopy = await run(true);
          const viaUnnest = await run(false);
          expect(viaCopy).toEqual(viaUnnest);
          expect((viaCopy as { n: number }).n).toBe(events.length);
          expect((viaCopy as { again: number }).again).toBe(0);
        },
      ),
      { numRuns: 25 },
    );
  });
});
