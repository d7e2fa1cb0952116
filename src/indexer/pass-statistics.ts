/**
 * Planner statistics kept fresh while a long pass (a backfill) grows the tables, and, on PGlite,
 * the WAL kept bounded.
 */
import type { Database, Queryable } from '../db/database.js';
import { analyzeIndexTables } from '../store/chain-state.js';
import { describeError } from './rpc-retry.js';
import type { ScannerLogger } from './scanner.js';

/** The first refresh of the planner statistics within a pass, in events written; then at each doubling. */
export const ANALYZE_FIRST_AT_EVENTS = 20_000;

/**
 * PGlite: events written between two CHECKPOINTs within a pass. PGlite runs PostgreSQL as one
 * process, without a checkpointer, and the WAL's size never asks for a checkpoint there: every
 * byte of WAL a backfill writes (about 6 kB per event: 1 GB at scale 0.05 of
 * `npm run bench:coldstart`, 20 GB at full scale) would stay in pg_wal until the database closes.
 * A checkpoint every 100,000 events (about 600 MB of WAL) lets PostgreSQL recycle the segments.
 */
export const CHECKPOINT_EVERY_EVENTS = 100_000;

/** Per pass (keyed by its options object): events written by all its chains, the next refresh, one at a time. */
const passGrowth = new WeakMap<
  object,
  { written: number; next: number; running: boolean; sinceCheckpoint: number }
>();

/**
 * A long pass refreshes the planner statistics as the tables grow: after ANALYZE_FIRST_AT_EVENTS
 * events written, then each time the pass's count doubles (a few times per backfill, O(log n)).
 * PGlite has no autovacuum and PostgreSQL's lags behind a backfill; plans made for small tables
 * turn the triggers' keyed statements into scans of whole tables, and every batch then costs more
 * than the one before. On PGlite it also runs a CHECKPOINT every CHECKPOINT_EVERY_EVENTS events.
 * Returns whether it refreshed the statistics.
 */
export async function keepStatisticsFresh(
  pass: object,
  db: Queryable & { kind?: Database['kind'] },
  log: ScannerLogger,
  events: number,
): Promise<boolean> {
  let g = passGrowth.get(pass);
  if (!g)
    passGrowth.set(
      pass,
      (g = { written: 0, next: ANALYZE_FIRST_AT_EVENTS, running: false, sinceCheckpoint: 0 }),
    );
  g.written += events;
  g.sinceCheckpoint += events;
  const checkpoint = db.kind === 'pglite' && g.sinceCheckpoint >= CHECKPOINT_EVERY_EVENTS;
  if ((g.written < g.next && !checkpoint) || g.running) return false;
  g.running = true;
  try {
    if (checkpoint) {
      g.sinceCheckpoint = 0;
      await db.exec('CHECKPOINT').catch((e: unknown) => {
        log.warn(`[index] CHECKPOINT during the pass failed: ${describeError(e)}`);
      });
    }
    if (g.written < g.next) return false;
    g.next = g.written * 2;
    await analyzeIndexTables(db);
    return true;
  } catch (e) {
    log.warn(`[index] ANALYZE during the pass failed: ${describeError(e)}`);
    return false;
  } finally {
    g.running = false;
  }
}
