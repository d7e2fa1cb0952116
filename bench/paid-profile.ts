/**
 * Where a paid call's time goes (profiling aid, not part of `bench:scale`): against a schema kept
 * by `BENCH_KEEP_SCHEMA=name npm run bench:scale`, runs each paid handler PROFILE_CALLS times and
 * prints per call the number of queries, the summed time of each statement (first 60 chars) and
 * the wall time.
 *
 *   BENCH_KEEP_SCHEMA=prof1m DATABASE_URL=postgres://… node --import tsx bench/paid-profile.ts
 *   PROFILE_ONLY=mid PROFILE_EXPLAIN=1 …   # one case; then EXPLAIN (ANALYZE, BUFFERS) of each statement
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/paid-profile.ts   # where the JS time goes
 */
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import type { AppContext } from '../src/doors/http/context.js';
import { paidHandlers } from '../src/paid/index.js';
import type { RawPaidRequest } from '../src/paid/handler.js';
import { configureLogging } from '../src/log.js';

configureLogging({ level: 'warn' });
const schema = process.env.BENCH_KEEP_SCHEMA ?? 'prof1m';
const u = new URL(process.env.DATABASE_URL!);
u.searchParams.set('options', `-c search_path=${schema}`);
const db = await openDatabase({ databaseUrl: u.toString(), dataDir: 'memory://' });
await migrate(db);
const CALLS = Number(process.env.PROFILE_CALLS ?? 20);
const stats = new Map<string, { n: number; ms: number; sql: string; params?: readonly unknown[] }>();
let queries = 0;
const traced = {
  ...db,
  async query<T extends Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    const t0 = performance.now();
    queries += 1;
    try {
      return await db.query<T>(sql, params);
    } finally {
      const key = sql.replace(/\s+/g, ' ').trim().slice(0, 90);
      const s = stats.get(key) ?? { n: 0, ms: 0, sql, params };
      s.n += 1;
      s.ms += performance.now() - t0;
      stats.set(key, s);
    }
  },
};
const config = loadConfig({ INDEXER_PERIOD_SECONDS: '0' });
const ctx: AppContext = { config, db: traced as typeof db, now: () => new Date() };
const addr = (i: number) => `0x${(i + 1).toString(16).padStart(40, '0')}`;
const cases: [string, string, RawPaidRequest][] = [
  ['big profile', 'wallet-lookup', { params: { wallet: addr(10_000) }, query: {} }],
  ['big history', 'wallet-history', { params: { wallet: addr(10_000) }, query: {} }],
  ['big agent', 'agent-detail', { params: { network: 'base', agent_id: '0' }, query: { limit: ['200'] } }],
  ['small profile', 'wallet-lookup', { params: { wallet: addr(10_007) }, query: {} }],
  ['typical profile', 'wallet-lookup', { params: { wallet: addr(20_000) }, query: {} }],
  ['mid profile', 'wallet-lookup', { params: { wallet: addr(20_001) }, query: {} }],
  ['mid agent', 'agent-detail', { params: { network: 'base', agent_id: '501' }, query: {} }],
];
const only = process.env.PROFILE_ONLY;
for (const [label, tier, req] of cases) {
  if (only && !label.includes(only)) continue;
  const h = paidHandlers[tier]!;
  const times: number[] = [];
  stats.clear();
  queries = 0;
  // this process's CPU time (user + system): what the answer costs in JavaScript, whatever else runs
  const cpu0 = process.cpuUsage();
  for (let k = 0; k < CALLS; k++) {
    const t0 = performance.now();
    const v = await h.validate(ctx, req);
    if (!v.ok) throw new Error(JSON.stringify(v.body));
    const r = await h.run(ctx, v.input, { receipt: null });
    JSON.stringify(r.body);
    times.push(performance.now() - t0);
  }
  const cpu = process.cpuUsage(cpu0);
  times.sort((a, b) => a - b);
  console.log(
    `${label}: p50 ${times[Math.floor(CALLS / 2)]!.toFixed(1)} ms, max ${times[CALLS - 1]!.toFixed(1)} ms, ` +
      `${(queries / CALLS).toFixed(1)} queries/call, ` +
      `client CPU ${((cpu.user + cpu.system) / 1000 / CALLS).toFixed(1)} ms/call`,
  );
  for (const [k, s] of [...stats].sort((a, b) => b[1].ms - a[1].ms)) {
    console.log(`   ${(s.ms / CALLS).toFixed(1).padStart(7)} ms/call  x${s.n / CALLS}  ${k}`);
  }
  if (process.env.PROFILE_EXPLAIN === '1') {
    for (const s of stats.values()) {
      const plan = await db.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${s.sql}`, s.params);
      console.log(plan.map((p) => p['QUERY PLAN']).join('\n'));
    }
  }
}
await db.close();
