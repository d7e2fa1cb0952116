/**
 * A long pass refreshes the planner statistics as its tables grow (after ANALYZE_FIRST_AT_EVENTS
 * events, then at each doubling), one refresh at a time, per pass; on both databases the ANALYZE
 * covers the trigger-maintained aggregates too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import {
  ANALYZE_FIRST_AT_EVENTS,
  CHECKPOINT_EVERY_EVENTS,
  keepStatisticsFresh,
} from '../src/indexer/pass-statistics.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

const quiet = { info: () => undefined, warn: () => undefined };

/** The database under test, counting the ANALYZE statements it is sent (and what they name). */
function counting(inner: Database): { db: Database; analyzed: string[]; checkpoints: number } {
  const analyzed: string[] = [];
  const out = { db: inner, analyzed, checkpoints: 0 };
  out.db = {
    ...inner,
    exec: async (sql: string) => {
      if (/^ANALYZE/.test(sql)) analyzed.push(sql);
      if (sql === 'CHECKPOINT') out.checkpoints++;
      return inner.exec(sql);
    },
  } as Database;
  return out;
}

describe('planner statistics during a pass', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await openTestDatabase();
  });
  afterAll(() => t.close());

  it('are refreshed at the first threshold, then at each doubling of the events written', async () => {
    const { db, analyzed } = counting(t.db);
    const pass = {};
    const step = ANALYZE_FIRST_AT_EVENTS / 4;
    const refreshedAt: number[] = [];
    for (let written = step; written <= ANALYZE_FIRST_AT_EVENTS * 8; written += step) {
      if (await keepStatisticsFresh(pass, db, quiet, step)) refreshedAt.push(written);
    }
    const first = ANALYZE_FIRST_AT_EVENTS;
    expect(refreshedAt).toEqual([first, first * 2, first * 4, first * 8]);
    expect(analyzed).toHaveLength(4);
    expect(analyzed[0]).toMatch(/live_rater_subject/);
    expect(analyzed[0]).toMatch(/live_agent_rater\b/);
    // Another pass starts its own count.
    expect(await keepStatisticsFresh({}, db, quiet, first - 1)).toBe(false);
  });

  it('run one at a time: a batch arriving while a refresh runs does not start another', async () => {
    const { db, analyzed } = counting(t.db);
    const pass = {};
    const [a, b] = await Promise.all([
      keepStatisticsFresh(pass, db, quiet, ANALYZE_FIRST_AT_EVENTS),
      keepStatisticsFresh(pass, db, quiet, ANALYZE_FIRST_AT_EVENTS * 4),
    ]);
    expect([a, b]).toEqual([true, false]);
    expect(analyzed).toHaveLength(1);
  });

  it('on PGlite, a CHECKPOINT every CHECKPOINT_EVERY_EVENTS events lets the WAL be recycled', async () => {
    const c = counting(t.db);
    const pass = {};
    const lsn = async () =>
      (await t.db.query<{ l: string }>('SELECT checkpoint_lsn::text AS l FROM pg_control_checkpoint()'))[0]!
        .l;
    await t.db.exec('CREATE TEMP TABLE IF NOT EXISTS wal_filler (n int)');
    await t.db.exec('INSERT INTO wal_filler SELECT generate_series(1, 1000)');
    const before = await lsn();
    // Just under the threshold: nothing; crossing it: one checkpoint (PGlite only).
    await keepStatisticsFresh(pass, c.db, quiet, CHECKPOINT_EVERY_EVENTS - 1);
    expect(c.checkpoints).toBe(0);
    await keepStatisticsFresh(pass, c.db, quiet, 1);
    const pglite = t.db.kind === 'pglite';
    expect(c.checkpoints).toBe(pglite ? 1 : 0);
    if (pglite) expect(await lsn()).not.toBe(before);
    // The count starts again after a checkpoint.
    await keepStatisticsFresh(pass, c.db, quiet, CHECKPOINT_EVERY_EVENTS - 1);
    expect(c.checkpoints).toBe(pglite ? 1 : 0);
    await keepStatisticsFresh(pass, c.db, quiet, 1);
    expect(c.checkpoints).toBe(pglite ? 2 : 0);
  });

  it('a failed refresh is logged and the pass goes on', async () => {
    const warnings: string[] = [];
    const db = { ...t.db, exec: () => Promise.reject(new Error('no statistics today')) } as Database;
    const log = { info: () => undefined, warn: (l: string) => warnings.push(l) };
    expect(await keepStatisticsFresh({}, db, log, ANALYZE_FIRST_AT_EVENTS)).toBe(false);
    expect(warnings[0]).toContain('no statistics today');
  });
});
