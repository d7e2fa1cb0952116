/**
 * Cold start: the whole synthetic ERC-8004 history indexed from scratch by the real CLI
 * (`bin/repindex.js index --once`, a child process) through endpoints set like public ones.
 *
 * The history (./coldstart/world.ts): ten EVM chains, 400,000 agents (60 % on bsc), 3,500,000
 * feedback with a long tail, revocations, responses, transfers, at scale 1. It is served by the
 * fast log server (./coldstart/log-server.ts, a child process: its CPU is not the indexer's), each
 * chain paced to 10–25 requests/s with a 429 every 50th request, behind test/helpers/rpc-proxy.ts
 * refusing eth_getLogs wider than the chain's range cap (2,000–10,000 blocks). Solana is not
 * served (disabled): see bench/README.md.
 *
 * Printed per database (PGlite in a temporary data folder; PostgreSQL in a database of its own,
 * dropped after): the wall time to a complete index (the CLI's exit, every chain scanned to its
 * head minus the reorg margin and its full census `ok`, checked in the database), RPC requests per
 * chain, the indexer's peak RSS (VmHWM) and CPU busy share of the wall time (the PostgreSQL
 * backends' CPU apart), and how much of the wall time the indexer had a request in flight at the
 * log server (per chain and over all chains: the time it waited on the RPC); then `RESULT {json}`.
 *
 *   npm run bench:coldstart                                  # full scale, both databases
 *   BENCH_COLDSTART_SCALE=0.05 npm run bench:coldstart       # a quick run
 *   BENCH_COLDSTART_DB=pglite npm run bench:coldstart        # one database (pglite | postgres | both)
 *   BENCH_COLDSTART_CPU_PROF=/tmp/prof npm run bench:coldstart   # the indexer under --cpu-prof
 *
 * Env: BENCH_COLDSTART_SCALE (1), BENCH_COLDSTART_SPAN (blocks per chain, 2,000,000 × scale, at
 * least 100,000), BENCH_COLDSTART_SEED (34), BENCH_COLDSTART_RPS_FACTOR (1: multiplies every
 * chain's rate), BENCH_COLDSTART_429_EVERY (50; 0 = none), BENCH_COLDSTART_STAMP (1: logs carry
 * blockTimestamp; 0: the indexer fetches block times), BENCH_COLDSTART_DB (both),
 * BENCH_COLDSTART_CPU_PROF (a folder), DATABASE_URL (the PostgreSQL server and name prefix:
 * default postgres://postgres@127.0.0.1:5432/repindex_coldstart).
 */
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { openDatabase } from '../src/db/database.js';
import type { ServedChain, ServerStats } from './coldstart/log-server.js';
import { sample, type SamplerResult } from './coldstart/sampler.js';

const env = process.env;
const SCALE = Number(env.BENCH_COLDSTART_SCALE ?? 1);
const SPAN = Number(env.BENCH_COLDSTART_SPAN ?? Math.max(100_000, Math.round(2_000_000 * SCALE)));
const DBS =
  (env.BENCH_COLDSTART_DB ?? 'both') === 'both' ? ['pglite', 'postgres'] : [env.BENCH_COLDSTART_DB!];
const PG_URL = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/repindex_coldstart';
const ROOT = new URL('..', import.meta.url).pathname;

interface LogServer {
  proc: ChildProcess;
  chains: ServedChain[];
  buildSeconds: number;
  rss: number;
  stats(): Promise<ServerStats>;
  close(): Promise<void>;
}

function startServer(): Promise<LogServer> {
  const proc = fork(join(ROOT, 'bench/coldstart/log-server.ts'), [], {
    execArgv: ['--import', 'tsx', '--max-old-space-size=4096'],
    env: {
      ...env,
      COLDSTART_CHILD: '1',
      COLDSTART_SCALE: String(SCALE),
      COLDSTART_SPAN: String(SPAN),
      COLDSTART_SEED: env.BENCH_COLDSTART_SEED ?? '34',
      COLDSTART_STAMP: env.BENCH_COLDSTART_STAMP ?? '1',
      COLDSTART_RPS_FACTOR: env.BENCH_COLDSTART_RPS_FACTOR ?? '1',
      COLDSTART_429_EVERY: env.BENCH_COLDSTART_429_EVERY ?? '50',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`the log server exited (${code})`)));
    proc.once('message', (m: { chains: ServedChain[]; buildSeconds: number; rss: number }) =>
      resolve({
        proc,
        chains: m.chains,
        buildSeconds: m.buildSeconds,
        rss: m.rss,
        stats: () =>
          new Promise((r) => {
            proc.once('message', (s: { stats: ServerStats }) => r(s.stats));
            proc.send({ type: 'stats' });
          }),
        close: () =>
          new Promise((r) => {
            proc.removeAllListeners('exit');
            proc.once('exit', () => r());
            proc.send({ type: 'close' });
          }),
      }),
    );
  });
}

/** The database the indexer writes: a PGlite folder, or a PostgreSQL database of its own. */
async function prepareDatabase(kind: string, dir: string) {
  if (kind === 'pglite') {
    const dataDir = join(dir, 'data');
    return {
      env: { DATA_DIR: dataDir },
      open: () => openDatabase({ databaseUrl: null, dataDir }),
      drop: async () => {},
    };
  }
  const u = new URL(PG_URL);
  const name = `${u.pathname.slice(1) || 'repindex'}_coldstart_${process.pid}`;
  const admin = new URL(PG_URL);
  admin.pathname = '/postgres';
  const c = new pg.Client({ connectionString: admin.toString() });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name}`);
  await c.query(`CREATE DATABASE ${name}`);
  await c.end();
  u.pathname = `/${name}`;
  const url = u.toString();
  return {
    env: { DATABASE_URL: url, DATA_DIR: join(dir, 'data') },
    name,
    url,
    open: () => openDatabase({ databaseUrl: url, dataDir: join(dir, 'data') }),
    drop: async () => {
      const d = new pg.Client({ connectionString: admin.toString() });
      await d.connect();
      await d.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await d.end();
    },
  };
}

async function runOne(kind: string) {
  const dir = mkdtempSync(join(tmpdir(), 'coldstart-'));
  const server = await startServer();
  const db = await prepareDatabase(kind, dir);
  try {
    const chainsFile = join(dir, 'chains.json');
    const table: Record<string, unknown> = { solana: { enabled: false } };
    const rpc: Record<string, string> = {};
    for (const c of server.chains) {
      table[c.network] = { chainId: c.chainId, startBlock: c.start, confirmations: 12, enabled: true };
      rpc[`RPC_URL_${c.network.toUpperCase()}`] = c.url;
    }
    writeFileSync(chainsFile, JSON.stringify(table));
    const prof = env.BENCH_COLDSTART_CPU_PROF;
    const args = [
      ...(prof ? ['--cpu-prof', `--cpu-prof-dir=${prof}`] : []),
      join(ROOT, 'bin/repindex.js'),
      'index',
      '--once',
    ];
    const childEnv: Record<string, string | undefined> = {
      ...env,
      ...db.env,
      ...rpc,
      CHAINS_FILE: chainsFile,
      FEEDBACK_FETCH: '0',
      REGISTRATION_FETCH: '0',
      LIVENESS_PROBES: '0',
      RATER_EVIDENCE: '0',
      LOG_LEVEL: env.LOG_LEVEL ?? 'warn',
    };
    if (kind === 'pglite') delete childEnv.DATABASE_URL;
    const load0 = loadavg();
    const t0 = performance.now();
    const child = spawn(process.execPath, args, { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    const keep = (b: Buffer) => {
      stderr = (stderr + b.toString()).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    const sampler = sample(child.pid!);
    // The PostgreSQL backends serving the indexer: their CPU is counted apart.
    let backends: NodeJS.Timeout | null = null;
    let watch: pg.Client | null = null;
    if ('url' in db) {
      watch = new pg.Client({ connectionString: db.url });
      await watch.connect();
      const w = watch;
      const look = () =>
        void w
          .query<{ pid: number }>(
            'SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
          )
          .then((r) => r.rows.forEach((x) => sampler.addExtra(x.pid)))
          .catch(() => undefined);
      look();
      backends = setInterval(look, 1_000);
    }
    const code = await new Promise<number>((r) => child.once('exit', (c) => r(c ?? -1)));
    const wall = (performance.now() - t0) / 1000;
    const usage: SamplerResult = sampler.stop();
    if (backends) clearInterval(backends);
    await watch?.end();
    const stats = await server.stats();
    const load1 = loadavg();
    // Complete: every chain scanned to its head minus the margin, its full census ok.
    const d = await db.open();
    const rows = await d.query<{
      network: string;
      last_scanned_block: number | null;
      census_state: string | null;
      census_scope: string | null;
      last_error: string | null;
    }>(
      'SELECT network, last_scanned_block::int8 AS last_scanned_block, census_state, census_scope, last_error FROM chains',
    );
    const [counts] = await d.query<{ agents: number; ratings: number }>(
      'SELECT (SELECT count(*) FROM agents)::int AS agents, (SELECT count(*) FROM ratings)::int AS ratings',
    );
    await d.close();
    const perChain = server.chains.map((c) => {
      const row = rows.find((r) => r.network === c.network);
      const s = stats.chains[c.network]!;
      const requests = Object.values(s.calls).reduce((a, b) => a + b, 0);
      return {
        network: c.network,
        agents: c.agents,
        feedback: c.feedback,
        events: c.events,
        range_cap: c.rangeCap,
        rps: c.rps,
        requests,
        http_requests: s.http_requests,
        calls: s.calls,
        rate_limited: s.rate_limited,
        range_refused: s.range_refused,
        logs_served: s.logs_served,
        rpc_busy_share: Math.round((s.busy_ms / 1000 / wall) * 1000) / 1000,
        scanned: Number(row?.last_scanned_block ?? -1) >= c.head - 12,
        census: `${row?.census_scope ?? '-'}:${row?.census_state ?? 'none'}`,
        ...(row?.last_error ? { last_error: row.last_error.slice(0, 500) } : {}),
      };
    });
    const complete = code === 0 && perChain.every((c) => c.scanned && c.census === 'full:ok');
    return {
      database: kind,
      exit_code: code,
      complete,
      wall_seconds: Math.round(wall * 10) / 10,
      agents: counts!.agents,
      ratings: counts!.ratings,
      indexer_cpu_seconds: usage.cpu_seconds,
      cpu_busy_share: Math.round((usage.cpu_seconds / wall) * 1000) / 1000,
      postgres_cpu_seconds: 'url' in db ? usage.extra_cpu_seconds : null,
      peak_rss_mb: usage.peak_rss_mb,
      rpc_busy_share_any: Math.round((stats.busy_ms_any / 1000 / wall) * 1000) / 1000,
      requests: perChain.reduce((a, c) => a + c.requests, 0),
      load_before: load0.map((x) => Math.round(x * 100) / 100),
      load_after: load1.map((x) => Math.round(x * 100) / 100),
      log_server: {
        build_seconds: Math.round(server.buildSeconds * 10) / 10,
        rss_mb: Math.round(server.rss / 2 ** 20),
      },
      chains: perChain,
      ...(complete ? {} : { stderr_tail: stderr.slice(-3_000) }),
    };
  } finally {
    await server.close();
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function print(r: Awaited<ReturnType<typeof runOne>>): void {
  console.log(
    `\n[${r.database}] ${r.complete ? 'complete' : `NOT complete (exit ${r.exit_code})`} in ${r.wall_seconds} s: ` +
      `${r.agents} agents, ${r.ratings} ratings, ${r.requests} RPC requests; load ${r.load_before.join(' ')} -> ${r.load_after.join(' ')}`,
  );
  console.log(
    `  indexer CPU ${r.indexer_cpu_seconds} s = ${(r.cpu_busy_share * 100).toFixed(1)} % of the wall time (target < 50 %)` +
      `${r.postgres_cpu_seconds !== null ? `; PostgreSQL backends ${r.postgres_cpu_seconds} s` : ''}; peak RSS ${r.peak_rss_mb} MB (target < 1024)`,
  );
  console.log(
    `  a request in flight at the log server ${(r.rpc_busy_share_any * 100).toFixed(1)} % of the wall time`,
  );
  console.log('  chain       agents  feedback  cap     rps  requests  429  refused  in flight  census');
  for (const c of r.chains)
    console.log(
      `  ${c.network.padEnd(10)} ${String(c.agents).padStart(7)} ${String(c.feedback).padStart(9)} ${String(c.range_cap).padStart(6)} ${String(c.rps).padStart(5)} ` +
        `${String(c.requests).padStart(9)} ${String(c.rate_limited).padStart(4)} ${String(c.range_refused).padStart(8)} ${`${(c.rpc_busy_share * 100).toFixed(1)} %`.padStart(10)}  ${c.census}${c.scanned ? '' : ' (not scanned to head)'}`,
    );
  for (const c of r.chains) if ('last_error' in c) console.log(`  ${c.network}: ${c.last_error}`);
  if ('stderr_tail' in r) console.log(`  output (tail):\n${r.stderr_tail}`);
}

async function main(): Promise<void> {
  console.log(`cold start: scale ${SCALE}, ${SPAN} blocks per chain, databases ${DBS.join(', ')}`);
  const results = [];
  for (const kind of DBS) {
    const r = await runOne(kind);
    print(r);
    results.push(r);
  }
  const targets = results.map((r) => ({
    database: r.database,
    complete: r.complete,
    cpu_under_half: r.cpu_busy_share < 0.5,
    rss_under_1gb: r.peak_rss_mb < 1024,
  }));
  console.log(`RESULT ${JSON.stringify({ scale: SCALE, span: SPAN, runs: results, targets })}`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
