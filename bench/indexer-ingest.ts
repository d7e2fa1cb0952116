/**
 * Ingest benchmark: N synthetic normalized NewFeedback events (plus 1 % revocations and a few
 * hundred agents), written through src/indexer/ingest.ts in batches, as the pass writes them:
 * each batch with its checkpoint in one transaction. Prints events/second.
 *
 *   npx tsx bench/indexer-ingest.ts                 # PGlite in memory
 *   DATABASE_URL=postgres://… npx tsx bench/indexer-ingest.ts   # also PostgreSQL (private schema, dropped after)
 *   BENCH_EVENTS=500000 BENCH_BATCH=10000 npx tsx bench/indexer-ingest.ts
 */
import type { Database } from '../src/db/database.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import { BATCH, batches, onEachDatabase } from './synthetic-index.js';

async function run(label: string, db: Database): Promise<void> {
  await db.query(`INSERT INTO chains (network, kind) VALUES ('base', 'evm') ON CONFLICT DO NOTHING`);
  let n = 0;
  let ratings = 0;
  const started = performance.now();
  for (const b of batches()) {
    const c = await ingestBatch(db, b.events, {
      network: 'base',
      lastScannedBlock: b.to,
      headAtLastSync: b.to,
      caughtUp: false,
    });
    n += b.events.length;
    ratings += c.ratings;
  }
  const secs = (performance.now() - started) / 1000;
  const [check] = await db.query<{ r: number; v: number }>(
    'SELECT (SELECT count(*) FROM ratings)::int AS r, (SELECT count(*) FROM ratings WHERE revoked)::int AS v',
  );
  console.log(
    `${label}: ${n} events (${ratings} ratings, ${check?.v} revoked) in batches of ${BATCH}: ${secs.toFixed(1)} s = ` +
      `${Math.round(n / secs).toLocaleString('en-US')} events/s`,
  );
  // re-run: every insert conflicts (the idempotent replay after a crash)
  const again = performance.now();
  for (const b of batches()) {
    await ingestBatch(db, b.events, {
      network: 'base',
      lastScannedBlock: b.to,
      headAtLastSync: b.to,
      caughtUp: false,
    });
  }
  const secs2 = (performance.now() - again) / 1000;
  console.log(
    `${label}: replay of the same events (all conflicts): ${Math.round(n / secs2).toLocaleString('en-US')} events/s`,
  );
  if (check?.r !== ratings) throw new Error('row count mismatch');
}

await onEachDatabase(run);
