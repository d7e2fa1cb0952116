/**
 * Planner statistics kept fresh while a long pass (a backfill) grows the tables.
 */
import type { Queryable } from '../db/database.js';
import { analyzeIndexTables } from '../store/chain-state.js';
import { describeError } from './rpc-retry.js';
import type { ScannerLogger } from './scanner.js';

/** The first refresh of the planner statistics within a pass, in events written; then at each doubling. */
export const ANALYZE_FIRST_AT_EVENTS = 20_000;

/** Per pass (keyed by its options object): events written by all its chains, the next refresh, one at a time. */
const passGrowth = new WeakMap<object, { written: number; next: number; running: boolean }>();

/**
 * A long pass refreshes the planner statistics as the tables grow: after ANALYZE_FIRST_AT_EVENTS
 * events written, then each time the pass's count doubles (a few times per backfill, O(log n)).
 * PGlite has no autovacuum and PostgreSQL's lags behind a backfill; plans made for small tables
 * turn the triggers' keyed statements into scans of whole tables, and every batch then costs more
 * than the one before. Returns whether it refreshed them.
 */
export async function keepStatisticsFresh(
  pass: object,
  db: Queryable,
  log: ScannerLogger,
  events: number,
): Promise<boolean> {
  let g = passGrowth.get(pass);
  if (!g) passGrowth.set(pass, (g = { written: 0, next: ANALYZE_FIRST_AT_EVENTS, running: false }));
  g.written += events;
  if (g.written < g.next || g.running) return false;
  g.running = true;
  g.next = g.written * 2;
  try {
    await analyzeIndexTables(db);
    return true;
  } catch (e) {
    log.warn(`[index] ANALYZE during the pass failed: ${describeError(e)}`);
    return false;
  } finally {
    g.running = false;
  }
}
