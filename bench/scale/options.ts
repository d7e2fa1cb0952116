/**
 * The scale benchmark's knobs (environment variables, read once) and the fixed wallets of its
 * synthetic index. See bench/scale.ts for what each one changes.
 */
export const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
export const AGENTS = Number(process.env.BENCH_AGENTS ?? 500);
export const CALLS = Number(process.env.BENCH_CALLS ?? 50);
export const PASS = Number(process.env.BENCH_PASS ?? 10_000);
export const INGEST = Number(process.env.BENCH_INGEST ?? 50_000);
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
export const RATERS = 4_999;
export const WARMUP = Number(process.env.BENCH_WARMUP ?? 3);
/** BENCH_FULL_REBUILD=0 skips the full rebuild printed beside the incremental refresh (saves minutes at 5 M). */
export const FULL_REBUILD = process.env.BENCH_FULL_REBUILD !== '0';
/** Which sections run (comma list of paid, refresh, ingest, free; default all); skipped ones print null. */
export const PARTS = new Set(
  (process.env.BENCH_PARTS ?? 'paid,refresh,ingest,free').split(',').map((p) => p.trim()),
);
/**
 * BENCH_KEEP_SCHEMA=name (PostgreSQL only, for profiling): load into that schema once and keep it;
 * later runs with the same name reuse the loaded rows (the refresh/ingest parts add rows to it).
 */
export const KEEP = /^[a-z_][a-z0-9_]{0,40}$/.test(process.env.BENCH_KEEP_SCHEMA ?? '')
  ? process.env.BENCH_KEEP_SCHEMA!
  : null;
export const LOAD = process.env.BENCH_LOAD === '1';

export const addr = (i: number) => `0x${(i + 1).toString(16).padStart(40, '0')}`;
export const BIG = addr(10_000); // owner of agent 0
export const TYPICAL = addr(20_000); // owner of agent AGENTS: 10 raters
export const MID = addr(20_001); // owner of agent AGENTS + 1: 5,000 raters
