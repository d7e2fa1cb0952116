/**
 * The ingest write path vs raw COPY of the same rows: BENCH_INGEST feedback events through
 * ingestBatch, then the same rows (other tx hashes) loaded into the ratings table by raw COPY
 * (PostgreSQL: `psql \copy` from a CSV file, the psql start-up included; PGlite:
 * `COPY … FROM '/dev/blob'`), with the CSV encoding of the rows.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Database } from '../../src/db/database.js';
import type { IndexEvent } from '../../src/index-events.js';
import { refreshAggregates } from '../../src/store/aggregates-refresh.js';
import { checkpoint, feedbackEvents, ingest } from './ingest.js';
import { INGEST, PASS } from './options.js';
import { RATING_COLUMNS, ratingCsv } from '../../src/store/ratings.js';

const run$ = promisify(execFile);

/** The batch as COPY reads it: the store's own encoding of a rating (src/store/ratings.ts). */
function csvOf(events: IndexEvent[]): string {
  return (
    events
      .map((e) => {
        if (e.kind !== 'feedback') throw new Error('feedback only');
        return ratingCsv(e);
      })
      .join('\n') + '\n'
  );
}

async function rawCopy(db: Database, events: IndexEvent[], url: string | null): Promise<number> {
  const csv = csvOf(events);
  const t0 = performance.now();
  if (db.copyCsv) {
    await db.copyCsv('ratings', RATING_COLUMNS, csv);
  } else {
    const dir = mkdtempSync(join(tmpdir(), 'repindex-bench-'));
    try {
      const file = join(dir, 'ratings.csv');
      writeFileSync(file, csv);
      const t1 = performance.now();
      // psql takes the schema through PGOPTIONS (the URL's `options` is node-pg's spelling)
      const u = new URL(url!);
      const options = u.searchParams.get('options') ?? '';
      u.searchParams.delete('options');
      await run$(
        'psql',
        [
          u.toString(),
          '-v',
          'ON_ERROR_STOP=1',
          '-qc',
          `\\copy ratings (${RATING_COLUMNS.join(', ')}) FROM '${file}' WITH (FORMAT csv)`,
        ],
        {
          env: { ...process.env, PGOPTIONS: options },
        },
      );
      return (performance.now() - t1) / 1000;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  return (performance.now() - t0) / 1000;
}

/**
 * The `ingest` section: prints ingestBatch's events/s beside raw COPY's rows/s, then runs the
 * after-pass refresh over the new rows; returns ingest/COPY (3 decimals).
 */
export async function ingestVsRawCopy(db: Database, url: string | null): Promise<number> {
  console.log(`\ningest write path vs raw COPY of the same rows (${INGEST} feedback events)`);
  const at = await checkpoint(db);
  const evs = feedbackEvents(INGEST, at, PASS);
  const t0 = performance.now();
  await ingest(db, evs);
  const ingestS = (performance.now() - t0) / 1000;
  // the same rows under other transaction hashes, above the ingested blocks
  const copyRows = evs.map((e) => ({ ...e, txHash: `0x${e.txHash.slice(2).replace(/^a/, 'c')}` }));
  const copyS = await rawCopy(db, copyRows, url);
  const ingestRate = INGEST / ingestS;
  const copyRate = INGEST / copyS;
  console.log(`  ingestBatch (5,000 per batch)                ${Math.round(ingestRate)} events/s`);
  console.log(
    `  raw COPY (${db.copyCsv ? "PGlite COPY FROM '/dev/blob'" : 'psql \\copy from CSV'})`.padEnd(47) +
      `${Math.round(copyRate)} rows/s  → ingest = ${((100 * ingestRate) / copyRate).toFixed(0)} % of COPY`,
  );
  const ratio = Math.round((ingestRate / copyRate) * 1000) / 1000;
  await refreshAggregates(db, { incremental: true });
  return ratio;
}
