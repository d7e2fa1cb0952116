/**
 * The JavaScript cost of one paid answer, apart from the database (profiling aid beside
 * `bench/paid-profile.ts`): the statements of one call are captured once from a schema kept by
 * `BENCH_KEEP_SCHEMA=name npm run bench:scale` into a JSON file, then the handler runs
 * REPLAY_CALLS times against those captured rows (a copy per call, made outside the timing). Prints
 * the CPU per call, p50/p99 and a digest of the body (it must not move when the code is changed
 * for speed).
 *
 *   BENCH_KEEP_SCHEMA=s5m DATABASE_URL=postgres://… npx tsx bench/paid-replay.ts   # capture + replay
 *   REPLAY_FILE=/tmp/mid-row.json node --max-semi-space-size=32 --import tsx bench/paid-replay.ts
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx bench/paid-replay.ts        # where it goes
 *   REPLAY_ALLOC=1 REPLAY_FILE=/tmp/mid-row.json npx tsx bench/paid-replay.ts          # what it allocates
 *
 * REPLAY_TIER (default wallet-lookup) and REPLAY_WALLET (the bench's wallet index, default 20001:
 * the MID subject of bench:scale) choose the call.
 */
import { createHash } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { loadConfig } from '../src/config.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import type { AppContext } from '../src/doors/http/context.js';
import { paidHandlers } from '../src/paid/index.js';
import type { RawPaidRequest } from '../src/paid/handler.js';
import { configureLogging } from '../src/log.js';

configureLogging({ level: 'warn' });
const file = process.env.REPLAY_FILE ?? '/tmp/repindex-paid-replay.json';
const tier = process.env.REPLAY_TIER ?? 'wallet-lookup';
const calls = Number(process.env.REPLAY_CALLS ?? 200);
const warmup = Math.min(20, Math.floor(calls / 5));
const addr = (i: number) => `0x${(i + 1).toString(16).padStart(40, '0')}`;
const req: RawPaidRequest = {
  params: { wallet: addr(Number(process.env.REPLAY_WALLET ?? 20_001)) },
  query: {},
};
const config = loadConfig({ INDEXER_PERIOD_SECONDS: '0' });
const handler = paidHandlers[tier];
if (!handler) throw new Error(`unknown tier ${tier}`);

type Rows = Record<string, unknown>[];
let captured: Rows[] = [];
if (existsSync(file)) captured = JSON.parse(readFileSync(file, 'utf8')) as Rows[];
else {
  const u = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  u.searchParams.set('options', `-c search_path=${process.env.BENCH_KEEP_SCHEMA ?? 's5m'}`);
  const db = await openDatabase({ databaseUrl: u.toString(), dataDir: 'memory://' });
  await migrate(db);
  const capturing: Database = {
    ...db,
    query: async <T extends Record<string, unknown>>(
      sql: string,
      params?: readonly unknown[],
      options?: Parameters<Database['query']>[2],
    ): Promise<T[]> => {
      const rows = await db.query<T>(sql, params, options);
      captured.push(rows);
      return rows;
    },
  };
  const ctx: AppContext = { config, db: capturing, now: () => new Date() };
  const v = await handler.validate(ctx, req);
  if (!v.ok) throw new Error(JSON.stringify(v.body));
  await handler.run(ctx, v.input, { receipt: null });
  writeFileSync(file, JSON.stringify(captured));
  await db.close();
  console.log(`captured ${captured.length} statement result(s) into ${file}`);
}

let copies: Rows[] = [];
let next = 0;
const replaying = {
  query: async () => copies[next++] ?? [],
} as unknown as Database;
const ctx: AppContext = { config, db: replaying, now: () => new Date(0) };
/** A fresh copy of the captured rows for the next call, and the call's validated input (untimed). */
async function prepare() {
  copies = captured.map((rows) => structuredClone(rows));
  next = 0;
  const v = await handler!.validate(ctx, req);
  if (!v.ok) throw new Error(JSON.stringify(v.body));
  return v;
}
const times: number[] = [];
let cpuMs = 0;
let body = '';
for (let k = 0; k < calls; k++) {
  const v = await prepare();
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const r = await handler.run(ctx, v.input, { receipt: null });
  body = JSON.stringify(r.body);
  const t = performance.now() - t0;
  const c = process.cpuUsage(c0);
  if (k < warmup) continue;
  times.push(t);
  cpuMs += (c.user + c.system) / 1000;
}
times.sort((a, b) => a - b);
const n = times.length;
console.log(
  `${tier} replayed ${n} times: CPU ${(cpuMs / n).toFixed(2)} ms/call, p50 ${times[n >> 1]!.toFixed(2)} ms, ` +
    `p99 ${times[Math.min(n - 1, Math.floor(n * 0.99))]!.toFixed(2)} ms; body ${body.length} chars, ` +
    `sha256 ${createHash('sha256').update(body).digest('hex').slice(0, 16)}`,
);

// REPLAY_ALLOC=1: what one answer allocates (V8's sampling heap profiler, every allocation counted
// whether a scavenge collects it or not), in total and by function. Every MB is a share of the
// young-generation scavenges that pause a paid answer under load.
if (process.env.REPLAY_ALLOC === '1') {
  type Frame = { callFrame: { functionName: string; url: string }; selfSize: number; children: Frame[] };
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', {
    samplingInterval: 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  const sampled = 50;
  for (let k = 0; k < sampled; k++) {
    const v = await prepare();
    await handler.run(ctx, v.input, { receipt: null });
  }
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as {
    profile: { head: Frame };
  };
  session.disconnect();
  const by = new Map<string, number>();
  let total = 0;
  const walk = (f: Frame, parent: string): void => {
    const name = f.callFrame.functionName || '(anonymous)';
    // built-ins (Map#set, Array#push) under the function that called them
    const key = f.callFrame.url
      ? `${name} ${f.callFrame.url.split('/').slice(-2).join('/')}`
      : `${name} <- ${parent}`;
    if (!key.includes('paid-replay') && !parent.includes('paid-replay')) {
      by.set(key, (by.get(key) ?? 0) + f.selfSize);
      total += f.selfSize;
    }
    for (const c of f.children) walk(c, key);
  };
  walk(profile.head, '');
  console.log(`allocated per answer (sampled over ${sampled}): ${(total / sampled / 1048576).toFixed(2)} MB`);
  for (const [k, b] of [...by].sort((x, y) => y[1] - x[1]).slice(0, 10))
    console.log(`  ${(b / sampled / 1024).toFixed(0).padStart(6)} kB  ${k}`);
}
