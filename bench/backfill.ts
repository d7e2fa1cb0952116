/**
 * EVM backfill throughput: a local EDR node holding N NewFeedback events (50 agents, 9 clients,
 * 150 feedback transactions a block), behind the hostile-RPC proxy in its well-behaved mode, both
 * in a child process (bench/backfill-node.ts: a production node is another process, and the node's
 * and the proxy's JSON work must not run on the indexer's event loop); one full index pass
 * (default scanner settings, the census on) into PGlite in memory. Prints the
 * backfill's events/s, then replays the very eth_getLogs requests the scanner made straight
 * against the node (sequentially, as the scanner does) and prints that raw throughput (the limit
 * the node sets) and the ratio of the two; and, to show where the time goes, the scanner alone
 * over the same blocks (no database).
 *
 *   npm run bench:backfill                      # 200,000 feedback events
 *   npm run bench:backfill -- --events 20000    # (or BENCH_BACKFILL_EVENTS=20000)
 *   DATABASE_URL=postgres://… npm run bench:backfill   # also into PostgreSQL (a private schema)
 *   BENCH_READ_AHEAD=0 npm run bench:backfill          # without the pipeline's read-ahead
 *   BENCH_TRACE=1 npm run bench:backfill               # every JSON-RPC request per phase (backfill-trace.ts)
 *   BENCH_SCAN_PROF=/tmp/scan.cpuprofile npm run bench:backfill   # CPU profile of the scanner alone
 */
import { loadConfig, type Config } from '../src/config.js';
import { fork } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector';
import { fileURLToPath } from 'node:url';
import type { Hex } from 'viem';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { deployRegistries, giveFeedbackCall, registerAgent } from '../src/demo/registries.js';
import { createEvmScanner } from '../src/indexer/evm-scanner.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import type { ScanBatch } from '../src/indexer/scanner.js';
import { registerChains } from '../src/store/chain-state.js';
import { runIndexPass } from '../src/indexer/pass.js';
import type { BackfillNodeQueries, BackfillNodeReady } from './backfill-node.js';
import { BackfillTracer } from './backfill-trace.js';
import { openPrivateSchema } from './private-schema.js';

function eventsWanted(): number {
  const i = process.argv.indexOf('--events');
  const raw = i >= 0 ? process.argv[i + 1] : process.env.BENCH_BACKFILL_EVENTS;
  const n = raw ? Number(raw) : 200_000;
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`--events must be a positive integer, got ${raw}`);
  return n;
}

const PER_BLOCK = 150;
const AGENTS = 50;

/** The node and the proxy in a child process (bench/backfill-node.ts). */
async function startNodeProcess() {
  const proc = fork(fileURLToPath(new URL('./backfill-node.ts', import.meta.url)), [], {
    // BENCH_NODE_CPU_PROF=<dir>: a CPU profile of the node process too (the proxy's and the node's JSON work)
    execArgv: [
      '--import',
      'tsx',
      ...(process.env.BENCH_NODE_CPU_PROF
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_NODE_CPU_PROF}`]
        : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const { ready } = await new Promise<BackfillNodeReady>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`the node process exited (${code})`)));
    proc.once('message', (m) => resolve(m as BackfillNodeReady));
  });
  proc.removeAllListeners('exit');
  let seq = 0;
  /** One JSON-RPC call to the node (over HTTP, from this process). */
  const request = async <T>(method: string, params: unknown[] = []): Promise<T> => {
    const res = (await (
      await fetch(ready.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: ++seq, method, params }),
      })
    ).json()) as { result?: T; error?: { message: string } };
    if (res.error) throw new Error(`${method}: ${res.error.message}`);
    return res.result as T;
  };
  return {
    rpcUrl: ready.rpcUrl,
    proxyUrl: ready.proxyUrl,
    accounts: ready.accounts as Hex[],
    privateKeys: ready.privateKeys as Hex[],
    request,
    /** The eth_getLogs filters the proxy has seen, in order. */
    logQueries: () =>
      new Promise<Record<string, unknown>[]>((resolve) => {
        proc.once('message', (m) => resolve((m as BackfillNodeQueries).queries));
        proc.send({ type: 'queries' });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.send({ type: 'close' });
      }),
  };
}

async function main(): Promise<void> {
  const n = eventsWanted();
  const node = await startNodeProcess();
  const db = await openDatabase({ databaseUrl: null, dataDir: 'memory://' });
  await migrate(db);
  try {
    const reg = await deployRegistries(node.rpcUrl, node.privateKeys[0]!);
    for (let i = 0; i < AGENTS; i++)
      await registerAgent(reg, node.privateKeys[0]!, `https://agent${i}.example`);

    // Seed: unlocked dev accounts send (eth_sendTransaction in one JSON-RPC batch per block).
    const t0 = Date.now();
    const clients = node.accounts.slice(1);
    let id = 0;
    for (let sent = 0; sent < n;) {
      const k = Math.min(PER_BLOCK, n - sent);
      const batch = Array.from({ length: k }, (_, j) => {
        const call = giveFeedbackCall(reg, {
          agentId: (sent + j) % AGENTS,
          value: (sent + j) % 101,
          tag1: 'q',
        });
        return {
          jsonrpc: '2.0',
          id: ++id,
          method: 'eth_sendTransaction',
          params: [
            {
              from: clients[(sent + j) % clients.length],
              to: call.to,
              data: call.data,
              gas: `0x${call.gas.toString(16)}`,
            },
          ],
        };
      });
      await node.request('evm_setAutomine', [false]);
      const res = (await (
        await fetch(node.rpcUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(batch),
        })
      ).json()) as { error?: { message: string } }[];
      const bad = res.find((r) => r.error);
      if (bad) throw new Error(`seeding: ${bad.error!.message}`);
      await node.request('evm_mine', []);
      await node.request('evm_setAutomine', [true]);
      sent += k;
      if (sent % 20_000 < PER_BLOCK) process.stderr.write(`seeded ${sent}/${n} feedback events\n`);
    }
    const pending = await node.request<{ transactions: unknown[] }>('eth_getBlockByNumber', [
      'pending',
      false,
    ]);
    if (pending.transactions.length > 0) throw new Error('seeding left transactions unmined');
    const head = Number(await node.request<string>('eth_blockNumber'));
    const seedS = (Date.now() - t0) / 1000;

    const base = loadConfig({});
    const config: Config = {
      ...base,
      chains: base.chains.map((c) =>
        c.network === 'base'
          ? {
              ...c,
              rpcUrl: node.proxyUrl,
              chainId: 8453,
              identityRegistry: reg.identityRegistry,
              reputationRegistry: reg.reputationRegistry,
              startBlock: 0,
              confirmations: 0,
            }
          : { ...c, enabled: false },
      ),
    };
    const quiet = { info: () => undefined, warn: (l: string) => process.stderr.write(`${l}\n`) };
    const tracer = new BackfillTracer();
    tracer.install();
    const readAheadEnv = process.env.BENCH_READ_AHEAD;
    const readAhead = readAheadEnv === undefined ? undefined : Number(readAheadEnv);

    /** One full pass into `db` through the proxy: its time, events, requests and written ranges. */
    const backfillInto = async (db: Database, name = 'pass') => {
      const before = (await node.logQueries()).length;
      tracer.wrap(db);
      tracer.phase = `${name}.1_until_first_batch`;
      const p0 = performance.now();
      const marks = { first: 0, last: 0 };
      const ranges: { from: number; to: number }[] = [];
      const r = await runIndexPass({
        db,
        config,
        log: quiet,
        afterPass: null,
        progress: 'off',
        ...(readAhead === undefined ? {} : { readAhead }),
        hooks: {
          afterBatch: (b) => {
            ranges.push({ from: b.from, to: b.to });
            if (ranges.length === 1) {
              marks.first = performance.now() - p0;
              tracer.phase = `${name}.2_batches`;
            }
            if (b.to >= head) {
              marks.last = performance.now() - p0;
              tracer.phase = `${name}.3_after_last_batch`;
            }
          },
        },
      });
      const seconds = (performance.now() - p0) / 1000;
      tracer.phase = 'other';
      const phases = {
        until_first_batch_s: Math.round(marks.first) / 1000,
        batches_s: Math.round(marks.last - marks.first) / 1000,
        after_last_batch_s: Math.round(seconds * 1000 - marks.last) / 1000,
      };
      if (r.status !== 'ok' || r.failed.length) throw new Error(`the pass failed: ${JSON.stringify(r)}`);
      const c = r.chains[0]!;
      const [rows] = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM ratings');
      return {
        seconds,
        events: c.events,
        rows: Number(rows!.n),
        requests: (await node.logQueries()).length - before,
        ranges,
        census: c.census?.state ?? null,
        phases,
        scan: c.scan ?? null,
      };
    };
    const pass = await backfillInto(db);
    const passS = pass.seconds;
    const ranges = pass.ranges;
    const requests = pass.requests;
    const c = { events: pass.events, census: { state: pass.census } };
    const rows = { n: pass.rows };

    // The limit: the getLogs requests of the ranges the pass wrote (refused wider ones and the
    // silent-cap checks left out), one after the other, straight to the node and (the scanner's
    // own path) through the proxy.
    // (the scan's own filter: the scanner's probe before it opens narrow matches nothing)
    const filter = (await node.logQueries()).find((q) => {
      const t0 = (q as { topics?: unknown[] }).topics?.[0];
      return Array.isArray(t0) && t0.length > 1;
    })!;
    const hex = (n: number) => `0x${n.toString(16)}`;
    const queries = ranges.map((g) => ({ ...filter, fromBlock: hex(g.from), toBlock: hex(g.to) }));
    const replay = async (url: string) => {
      let logs = 0;
      const g0 = performance.now();
      for (const [i, q] of queries.entries()) {
        const body = JSON.stringify({ jsonrpc: '2.0', id: i, method: 'eth_getLogs', params: [q] });
        const res = (await (
          await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
        ).json()) as { result: unknown[] };
        logs += res.result.length;
      }
      return { logs, seconds: (performance.now() - g0) / 1000 };
    };
    const direct = await replay(node.rpcUrl);
    const viaProxy = await replay(node.proxyUrl);
    const logs = direct.logs;
    const rawS = direct.seconds;

    // Where the time goes: the scanner alone over the same blocks (getLogs through the proxy,
    // block times, decoding), no database.
    const scanner = createEvmScanner(
      config.chains.find((x) => x.network === 'base')!,
      {},
      quiet,
    );
    let scanned = 0;
    const batches: ScanBatch[] = [];
    tracer.phase = 'scan_only';
    const profile = await startProfile(process.env.BENCH_SCAN_PROF);
    const s0 = performance.now();
    for await (const b of scanner.scan(0, head)) {
      scanned += b.events.length;
      batches.push(b);
    }
    const scanS = (performance.now() - s0) / 1000;
    await profile();
    tracer.phase = 'other';

    // The other half: the writes alone (the scanned batches, each with its checkpoint, one
    // transaction each, as the pass writes them; no scan, no census) into a fresh database.
    const writeOnly = async (target: Database) => {
      await registerChains(target, config.chains);
      const w0 = performance.now();
      for (const b of batches)
        await ingestBatch(target, b.events, {
          network: 'base',
          lastScannedBlock: b.to,
          headAtLastSync: head,
          caughtUp: b.to >= head,
        });
      return Math.round(((performance.now() - w0) / 1000) * 100) / 100;
    };
    const freshPglite = await openDatabase({ databaseUrl: null, dataDir: 'memory://' });
    let writeS: number;
    try {
      await migrate(freshPglite);
      writeS = await writeOnly(freshPglite);
    } finally {
      await freshPglite.close();
    }

    // The same backfill into PostgreSQL (DATABASE_URL: a private schema, dropped after), and the
    // writes alone into another one.
    const pgUrl = process.env.DATABASE_URL;
    const pgRun = pgUrl ? await backfillIntoPostgres(pgUrl, (db) => backfillInto(db, 'pg_pass')) : null;
    const pgWriteS = pgUrl ? await backfillIntoPostgres(pgUrl, writeOnly) : null;
    batches.length = 0;

    const backfillRate = c.events / passS;
    const rawRate = logs / rawS;
    const result = {
      feedback_events: n,
      chain_blocks: head + 1,
      seed_seconds: Math.round(seedS),
      backfill: {
        events: c.events,
        ratings_rows: Number(rows!.n),
        seconds: Math.round(passS * 100) / 100,
        events_per_second: Math.round(backfillRate),
        getlogs_requests: requests,
        batches: ranges.length,
        census: c.census?.state ?? null,
        phases: pass.phases,
      },
      scan_only: {
        events: scanned,
        seconds: Math.round(scanS * 100) / 100,
        events_per_second: Math.round(scanned / scanS),
      },
      write_only: { seconds: writeS, events_per_second: Math.round(scanned / writeS) },
      raw_getlogs: { logs, seconds: Math.round(rawS * 100) / 100, logs_per_second: Math.round(rawRate) },
      raw_getlogs_via_proxy: {
        logs: viaProxy.logs,
        seconds: Math.round(viaProxy.seconds * 100) / 100,
        logs_per_second: Math.round(viaProxy.logs / viaProxy.seconds),
      },
      ratio: Math.round((backfillRate / rawRate) * 1000) / 1000,
      ratio_via_proxy: Math.round((backfillRate / (viaProxy.logs / viaProxy.seconds)) * 1000) / 1000,
      ...(pgRun
        ? {
            postgres: {
              events: pgRun.events,
              ratings_rows: pgRun.rows,
              seconds: Math.round(pgRun.seconds * 100) / 100,
              events_per_second: Math.round(pgRun.events / pgRun.seconds),
              getlogs_requests: pgRun.requests,
              census: pgRun.census,
              phases: pgRun.phases,
              write_only_seconds: pgWriteS,
              ratio: Math.round((pgRun.events / pgRun.seconds / rawRate) * 1000) / 1000,
            },
          }
        : {}),
    };
    console.log(
      `backfill: ${result.backfill.events} events in ${result.backfill.seconds} s = ${result.backfill.events_per_second} events/s (${requests} getLogs requests, ${ranges.length} batches, census ${result.backfill.census})`,
    );
    console.log(
      `raw eth_getLogs over the same ranges: ${logs} logs in ${result.raw_getlogs.seconds} s = ${result.raw_getlogs.logs_per_second} logs/s`,
    );
    console.log(
      `scanner alone (getLogs via the proxy, block times, decoding; no database): ${scanned} events in ${result.scan_only.seconds} s = ${result.scan_only.events_per_second} events/s`,
    );
    console.log(
      `writes alone (the same batches, ingestBatch, PGlite): ${scanned} events in ${writeS} s = ${result.write_only.events_per_second} events/s`,
    );
    console.log(
      `raw eth_getLogs through the proxy: ${viaProxy.logs} logs in ${result.raw_getlogs_via_proxy.seconds} s = ${result.raw_getlogs_via_proxy.logs_per_second} logs/s`,
    );
    console.log(
      `ratio backfill / raw getLogs: ${result.ratio} (through the proxy: ${result.ratio_via_proxy})`,
    );
    if (result.postgres)
      console.log(
        `PostgreSQL: ${result.postgres.events} events in ${result.postgres.seconds} s = ${result.postgres.events_per_second} events/s, ratio ${result.postgres.ratio}; writes alone ${pgWriteS} s`,
      );
    if (process.env.BENCH_TRACE === '1') {
      console.log(`scanner stats of the pass: ${JSON.stringify(pass.scan)}`);
      for (const phase of Object.keys(tracer.phases).sort())
        if (phase !== 'other') console.log(`trace ${phase}: ${JSON.stringify(tracer.summary(phase))}`);
    }
    tracer.uninstall();
    console.log(`RESULT ${JSON.stringify(result)}`);
  } finally {
    await db.close();
    await node.close();
  }
}

/**
 * BENCH_SCAN_PROF=<file>: a CPU profile of this process during the scanner-alone run (open it in
 * Chrome's DevTools); returns the function that stops it and writes the file.
 */
async function startProfile(file: string | undefined): Promise<() => Promise<void>> {
  if (!file) return async () => undefined;
  const session = new Session();
  session.connect();
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, (err, res) => (err ? reject(err) : resolve(res))),
    );
  await post('Profiler.enable');
  await post('Profiler.start');
  return async () => {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    await writeFile(file, JSON.stringify(profile));
    session.disconnect();
  };
}

/** A backfill into a private schema of the PostgreSQL database at `url` (dropped after). */
async function backfillIntoPostgres<T>(url: string, run: (db: Database) => Promise<T>): Promise<T> {
  const { db, close } = await openPrivateSchema(url, 'bench_backfill');
  try {
    return await run(db);
  } finally {
    await close();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
