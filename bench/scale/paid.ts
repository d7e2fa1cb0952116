/**
 * The `paid` section of the scale benchmark: the paid handlers run in process (validate + run)
 * for the typical, mid and big subjects, BENCH_CALLS timed calls per row, then 8 concurrent big
 * wallet profiles (wall time, peak RSS).
 */
import type { Database } from '../../src/db/database.js';
import type { AppContext } from '../../src/doors/http/context.js';
import type { RawPaidRequest } from '../../src/paid/handler.js';
import { paidHandlers } from '../../src/paid/index.js';
import { AGENTS, BIG, MID, TYPICAL } from './options.js';
import { mbOf, notePeak, timedCalls, withPeak } from './timing.js';

type Percentiles = { p50: number; p99: number };

/** The p50/p99 of the rows the RESULT line carries. */
export interface PaidRows {
  typicalProfile: Percentiles;
  midProfile: Percentiles;
  bigProfile: Percentiles;
  bigHistory: Percentiles;
  bigAgent: Percentiles;
}

async function paid(ctx: AppContext, tier: string, req: RawPaidRequest): Promise<number> {
  const h = paidHandlers[tier]!;
  const v = await h.validate(ctx, req);
  if (!v.ok) throw new Error(`${tier}: validate ${v.status} ${JSON.stringify(v.body)}`);
  const r = await h.run(ctx, v.input, { receipt: null });
  if (r.status !== 200) throw new Error(`${tier}: ${r.status}`);
  return JSON.stringify(r.body).length;
}

/** Prints the paid rows (the database round trip first, for scale) and returns the measured ones. */
export async function paidRows(db: Database, ctx: AppContext, label: string): Promise<PaidRows> {
  console.log(`\npaid answers (${label}; handlers in process, validate + run)`);
  // The floor under every paid row on this machine: one trivial round trip to the database.
  await timedCalls('database round trip (SELECT 1), for scale', () => db.query('SELECT 1'));
  const raters = async (agent: string) => {
    const [r] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM live_agent_rater WHERE network = 'base' AND agent_id = $1 AND live_count > 0`,
      [agent],
    );
    return r?.n ?? 0;
  };
  const typicalProfile = await timedCalls(
    `TYPICAL wallet profile (${await raters(String(AGENTS))} raters)`,
    () => paid(ctx, 'wallet-lookup', { params: { wallet: TYPICAL }, query: {} }),
  );
  await timedCalls('TYPICAL agent detail (its 30 ratings)', () =>
    paid(ctx, 'agent-detail', { params: { network: 'base', agent_id: String(AGENTS) }, query: {} }),
  );
  const midProfile = await timedCalls(`MID wallet profile (${await raters(String(AGENTS + 1))} raters)`, () =>
    paid(ctx, 'wallet-lookup', { params: { wallet: MID }, query: {} }),
  );
  const bigProfile = await timedCalls(`BIG wallet profile (${await raters('0')} raters)`, () =>
    paid(ctx, 'wallet-lookup', { params: { wallet: BIG }, query: {} }),
  );
  const bigHistory = await timedCalls('big history (week)', () =>
    paid(ctx, 'wallet-history', { params: { wallet: BIG }, query: {} }),
  );
  const bigAgent = await timedCalls('big agent detail, limit 200', () =>
    paid(ctx, 'agent-detail', { params: { network: 'base', agent_id: '0' }, query: { limit: ['200'] } }),
  );
  const t0 = performance.now();
  const { peak } = await withPeak(() =>
    Promise.all(
      Array.from({ length: 8 }, () => paid(ctx, 'wallet-lookup', { params: { wallet: BIG }, query: {} })),
    ),
  );
  notePeak(peak);
  console.log(
    `  ${'8 concurrent big wallet profiles'.padEnd(44)} wall ${(performance.now() - t0).toFixed(0)} ms  peak RSS ${mbOf(peak)} MB`,
  );
  return { typicalProfile, midProfile, bigProfile, bigHistory, bigAgent };
}
