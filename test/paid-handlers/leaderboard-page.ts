/**
 * Paid handlers on the demo scenario, the deep leaderboard page (tier leaderboard-deep): pages
 * continue the /leaderboard order, the type filter, out-of-range input. Registered by test/paid-
 * handlers.test.ts inside its describe, on its one demo copy (the fixture: test/helpers/paid-
 * demo.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { readLeaderboard } from '../../src/read/leaderboard.js';
import { paidDemoTools, type PaidDemo } from '../helpers/paid-demo.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

/** The 'leaderboard page' suite over the file's fixture. */
export function leaderboardPageSuite(fixture: () => PaidDemo): void {
  let demo: PaidDemo['demo'];
  const { call } = paidDemoTools(fixture);
  beforeAll(() => {
    ({ demo } = fixture());
  });

  describe('leaderboard page', () => {
    it('pages continue the /leaderboard order', async () => {
      const free = await readLeaderboard(demo.db, { offset: 0, limit: 100 });
      expect(free.rows.length).toBeGreaterThan(4);
      const p1 = await call('leaderboard-deep', {}, { limit: '3' });
      const p2 = await call('leaderboard-deep', {}, { limit: '3', offset: '3' });
      expect(p1.status).toBe(200);
      expect(p1.body.next_offset).toBe(3);
      expect(p1.body.total).toBeNull();
      const paged = [...p1.body.rows, ...p2.body.rows];
      expect(paged).toEqual(JSON.parse(JSON.stringify(free.rows.slice(0, 6))));
      expect(paged.map((r: any) => r.rank)).toEqual([1, 2, 3, 4, 5, 6]);
      const all = await call('leaderboard-deep', {});
      expect(all.body.limit).toBe(100);
      expect(all.body.rows).toEqual(JSON.parse(JSON.stringify(free.rows)));
      const past = await call('leaderboard-deep', {}, { offset: String(free.rows.length + 10) });
      expect(past.body.rows).toEqual([]);
      expect(past.body.next_offset).toBeNull();
    });

    it('type filter reuses readLeaderboard', async () => {
      const typed = demo.facts.typedAgents[0]!;
      const expected = await readLeaderboard(demo.db, { offset: 0, limit: 500, type: typed.type });
      const { body } = await call('leaderboard-deep', {}, { type: typed.type, limit: '500' });
      expect(body.rows).toEqual(JSON.parse(JSON.stringify(expected.rows)));
      for (const r of body.rows) expect(r.declared_types).toContain(typed.type);
    });

    it('422 out of range', async () => {
      const bad: Record<string, string>[] = [
        { limit: '0' },
        { limit: '501' },
        { offset: '-1' },
        { limit: '1.5' },
        { type: '' },
        { page: '2' },
      ];
      for (const q of bad) {
        expect((await call('leaderboard-deep', {}, q)).status).toBe(422);
      }
      expect((await call('leaderboard-deep', {}, { limit: '500' })).status).toBe(200);
    });
  });
}
