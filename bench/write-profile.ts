import { createHash } from 'node:crypto';
/**
 * Where the backfill's write time goes, without a node: batches shaped like `bench:backfill`'s
 * (50 agents registered and transferred, then 150 feedback a block from 9 clients, tag1 `q`, one
 * batch about every 29 blocks = ~4,300 events), each written by `ingestBatch` with its checkpoint
 * in one transaction, into a fresh PGlite in memory and (DATABASE_URL) a private PostgreSQL
 * schema. Prints the seconds per tenth of the batches (a term growing with the table shows as a
 * rising column), the statements by total time, and the trigger functions' own times
 * (pg_stat_user_functions).
 *
 *   npx tsx bench/write-profile.ts --events 50000
 *   DATABASE_URL=postgres://… npx tsx bench/write-profile.ts --events 200000
 */
import type { Database } from '../src/db/database.js';
import type { IndexEvent } from '../src/index-events.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import { onEachDatabase } from './synthetic-index.js';
import { statementTimer } from './sql-timer.js';

const arg = process.argv.indexOf('--events');
const EVENTS = Number(arg > 0 ? process.argv[arg + 1] : (process.env.BENCH_EVENTS ?? 50_000));
const PER_BLOCK = 150;
const AGENTS = 50;
const BLOCKS_PER_BATCH = Number(process.env.BENCH_BLOCKS_PER_BATCH ?? 29);
const hex = (n: number, w: number) => n.toString(16).padStart(w, '0');
const addr = (i: number) => `0x${hex(i + 1, 40)}`;

/** The backfill's chain as the scanner hands it on: batches of whole blocks. */
function* backfillBatches(events: number): Generator<{ to: number; events: IndexEvent[] }> {
  const t0 = Date.UTC(2026, 0, 1);
  const owner = addr(0);
  let block = 1;
  let out: IndexEvent[] = [];
  const pos = (i: number, logIndex: number) => ({
    network: 'base',
    txHash: `0x${createHash('sha256').update(`${block}:${i}`).digest('hex')}`,
    logIndex,
    blockNumber: block,
    blockTime: new Date(t0 + block * 2000),
  });
  for (let a = 0; a < AGENTS; a++, block++) {
    const agentId = String(a + 1);
    out.push({ ...pos(a, 0), kind: 'transfer', agentId, from: addr(-1), to: owner });
    out.push({
      ...pos(a, 1),
      kind: 'registered',
      agentId,
      agentUri: `https://agent${a}.example`,
      minter: owner,
    });
  }
  const counters = new Map<string, number>();
  let blocksInBatch = 0;
  for (let sent = 0; sent < events; block++) {
    const k = Math.min(PER_BLOCK, events - sent);
    for (let j = 0; j < k; j++) {
      const i = sent + j;
      const agentId = String((i % AGENTS) + 1);
      const rater = addr(1 + (i % 9));
      const key = `${agentId}|${rater}`;
      const idx = (counters.get(key) ?? 0) + 1;
      counters.set(key, idx);
      out.push({
        ...pos(i, j),
        kind: 'feedback',
        agentId,
        rater,
        feedbackIndex: String(idx),
        valueRaw: String(i % 101),
        valueDecimals: 0,
        value: String(i % 101),
        tag1: 'q',
        tag2: '',
        endpoint: '',
        feedbackUri: '',
        feedbackHash: `0x${hex(0, 64)}`,
      });
    }
    sent += k;
    if (++blocksInBatch >= BLOCKS_PER_BATCH) {
      yield { to: block, events: out };
      out = [];
      blocksInBatch = 0;
    }
  }
  if (out.length) yield { to: block - 1, events: out };
}

const { times, timed } = statementTimer(110);

async function run(label: string, raw: Database): Promise<void> {
  times.clear();
  const profile = process.env.BENCH_PROFILE_SQL !== '0';
  await raw.query(`INSERT INTO chains (network, kind) VALUES ('base', 'evm') ON CONFLICT DO NOTHING`);
  if (profile) await raw.exec(`SET track_functions = 'all'`).catch(() => undefined);
  const db = profile ? (timed(raw) as Database) : raw;
  const all = [...backfillBatches(EVENTS)];
  const perBatch: number[] = [];
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  let rows = 0;
  for (const b of all) {
    const s = performance.now();
    const c = await ingestBatch(db, b.events, {
      network: 'base',
      lastScannedBlock: b.to,
      headAtLastSync: all.at(-1)!.to,
      caughtUp: false,
    });
    rows += c.ratings;
    perBatch.push(performance.now() - s);
  }
  const secs = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const cpuS = (cpu.user + cpu.system) / 1e6;
  const [chk] = await raw.query<{ n: number }>('SELECT count(*)::int AS n FROM ratings');
  if (chk?.n !== rows) throw new Error(`rows ${chk?.n} != inserted ${rows}`);
  const tenth = Math.max(1, Math.floor(perBatch.length / 10));
  const deciles: string[] = [];
  for (let i = 0; i < perBatch.length; i += tenth) {
    const part = perBatch.slice(i, i + tenth);
    deciles.push((part.reduce((a, b) => a + b, 0) / part.length).toFixed(0));
  }
  console.log(
    `${label}: ${rows} ratings in ${all.length} batches: ${secs.toFixed(2)} s = ${Math.round(rows / secs)} rows/s ` +
      `(this process's CPU ${cpuS.toFixed(2)} s); ` +
      `ms per batch by tenth: ${deciles.join(' ')}`,
  );
  if (!profile) return;
  const top = [...times.entries()].sort((a, b) => b[1].ms - a[1].ms).slice(0, 14);
  for (const [sql, t] of top)
    console.log(`  ${(t.ms / 1000).toFixed(2).padStart(7)} s ${String(t.n).padStart(5)}x  ${sql}`);
  const fns = await raw
    .query<{ funcname: string; calls: number; self: number; total: number }>(
      `SELECT funcname, calls::int, self_time AS self, total_time AS total FROM pg_stat_user_functions ORDER BY total_time DESC LIMIT 12`,
    )
    .catch(() => []);
  for (const f of fns)
    console.log(
      `  fn ${f.funcname.padEnd(34)} calls ${String(f.calls).padStart(5)} total ${(Number(f.total) / 1000).toFixed(2)} s self ${(Number(f.self) / 1000).toFixed(2)} s`,
    );
}

await onEachDatabase(run);
