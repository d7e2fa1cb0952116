/**
 * A long pass refreshes the planner statistics as its tables grow (after ANALYZE_FIRST_AT_EVENTS
 * events, then at each doubling), one refresh at a time, per pass; on both databases the ANALYZE
 * covers the trigger-maintained aggregates too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { ANALYZE_FIRST_AT_EVENTS, keepStatisticsFresh } from '../src/indexer/pass-statistics.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

const quiet = { info: () => undefined, warn: () => undefined };

/** The database under test, counting the ANALYZE statements it is sent (and what they name). */
function counting(inner: Database): { db: Database; analyzed: string[] } {
  const analyzed: string[] = [];
  const db = {
    ...inner,
    exec: async (sql: string) => {
      if (/^ANALYZE/.test(sql)) analyzed.push(sql);
      return inner.exec(sql);
    },
  } as Database;
  return { db, analyzed };
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

  it('a failed refresh is logged and the pass goes on', async () => {
    const warnings: string[] = [];
    const db = { ...t.db, exec: () => Promise.reject(new Error('no statistics today')) } as Database;
    const log = { info: () => undefined, warn: (l: string) => warnings.push(l) };
    expect(await keepStatisticsFresh({}, db, log, ANALYZE_FIRST_AT_EVENTS)).toBe(false);
    expect(warnings[0]).toContain('no statistics today');
  });
});
