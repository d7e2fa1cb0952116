/**
 * Solana backfill memory: a first pass over a program history of N signatures (two transactions a
 * slot, one NewFeedback event each) through a replay transport that makes every answer on the fly
 * (the ledger itself takes no memory), into PGlite in a temporary directory (or PostgreSQL with
 * DATABASE_URL, a private schema dropped after). Each size runs in a child process of its own and
 * prints its peak RSS (the process's maxRSS) and the peak JS heap (sampled every 50 ms): the walk
 * holds one page of signatures, so neither should grow with the history.
 *
 *   npm run bench:solana                              # 20,000 and 200,000 signatures
 *   BENCH_SOLANA_SIGNATURES=5000,50000 npm run bench:solana
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { getBase58Decoder, getBase58Encoder, type RpcTransport } from '@solana/kit';
import { loadConfig, type Config } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { runIndexPass } from '../src/indexer/pass.js';
import {
  agentRegistered,
  key,
  MAINNET_GENESIS,
  newFeedback,
  PROGRAM_ID,
  programLogs,
} from '../test/helpers/solana-fixtures.js';

const b58d = getBase58Decoder();
const b58e = getBase58Encoder();

/** Signature i: 64 bytes carrying i (so `before` needs no lookup table). */
function sigOf(i: number): string {
  const b = new Uint8Array(64).fill(7);
  new DataView(b.buffer).setUint32(0, i);
  return b58d.decode(b);
}
function indexOf(s: string): number {
  const b = b58e.encode(s);
  return new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(0);
}

function syntheticTransport(n: number): { transport: RpcTransport; head: number } {
  const agents = Array.from({ length: 1000 }, (_, i) => key(1_000_000 + i));
  const clients = Array.from({ length: 5000 }, (_, i) => key(2_000_000 + i));
  const collection = key(3);
  const slotOf = (i: number) => 1000 + Math.floor(i / 2);
  const head = slotOf(n - 1) + 10;
  const transport = (async ({ payload }: { payload: unknown }) => {
    const { id, method, params } = payload as { id: unknown; method: string; params: unknown[] };
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id, result });
    switch (method) {
      case 'getGenesisHash':
        return ok(MAINNET_GENESIS);
      case 'getSlot':
        return ok(head);
      case 'getSignaturesForAddress': {
        const cfg = (params[1] ?? {}) as { before?: string; limit?: number };
        const start = cfg.before ? indexOf(cfg.before) - 1 : n - 1;
        const out = [];
        for (let i = start; i >= 0 && out.length < (cfg.limit ?? 1000); i--)
          out.push({
            signature: sigOf(i),
            slot: slotOf(i),
            err: null,
            memo: null,
            blockTime: 1_700_000_000 + i,
            confirmationStatus: 'finalized',
          });
        return ok(out);
      }
      case 'getTransaction': {
        const i = indexOf(params[0] as string);
        const asset = agents[i % agents.length]!;
        const ev =
          i < agents.length
            ? agentRegistered(asset, collection, clients[i]!, `ipfs://agent/${i}`)
            : newFeedback({
                asset,
                client: clients[i % clients.length]!,
                index: BigInt(i),
                slot: BigInt(slotOf(i)),
                value: BigInt(i % 101),
                decimals: 0,
              });
        return ok({
          slot: slotOf(i),
          blockTime: 1_700_000_000 + i,
          version: 0,
          meta: { err: null, logMessages: programLogs([ev]), fee: 5000, preBalances: [], postBalances: [] },
          transaction: { signatures: [sigOf(i)], message: { accountKeys: [PROGRAM_ID], instructions: [] } },
        });
      }
      default:
        return { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } };
    }
  }) as RpcTransport;
  return { transport, head };
}

async function runOne(n: number): Promise<void> {
  const base = loadConfig({});
  const config: Config = {
    ...base,
    chains: base.chains.map((c) =>
      c.network === 'solana'
        ? { ...c, rpcUrl: 'http://127.0.0.1:9/unused', startBlock: null, confirmations: 0, enabled: true }
        : { ...c, enabled: false },
    ),
  };
  const pgUrl = process.env.DATABASE_URL || null;
  let dir: string | null = null;
  let schema: string | null = null;
  let url: string | null = null;
  if (pgUrl) {
    schema = `bench_${randomBytes(5).toString('hex')}`;
    const c = new pg.Client({ connectionString: pgUrl });
    await c.connect();
    await c.query(`CREATE SCHEMA ${schema}`);
    await c.end();
    const u = new URL(pgUrl);
    u.searchParams.set('options', `-c search_path=${schema}`);
    url = u.toString();
  } else dir = mkdtempSync(join(tmpdir(), 'repindex-bench-solana-'));
  const db = await openDatabase({ databaseUrl: url, dataDir: dir ?? 'memory://' });
  let peakHeap = 0;
  const sampler = setInterval(() => {
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  }, 50);
  try {
    await migrate(db);
    const { transport, head } = syntheticTransport(n);
    const t0 = performance.now();
    const r = await runIndexPass({
      db,
      config,
      progress: 'off',
      afterPass: null,
      log: { info: () => undefined, warn: (l) => console.error(l) },
      solana: { transport, pageLimit: 1000 },
    });
    const secs = (performance.now() - t0) / 1000;
    peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
    if (r.status !== 'ok' || r.failed.length) throw new Error(`pass failed: ${JSON.stringify(r)}`);
    const s = r.chains[0]!;
    const [cnt] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ratings WHERE network = 'solana'`,
    );
    const mb = (b: number) => Math.round(b / 1024 / 1024);
    console.log(
      JSON.stringify({
        signatures: n,
        database: pgUrl ? 'postgres' : 'pglite',
        head,
        seconds: Math.round(secs * 10) / 10,
        signatures_per_second: Math.round(n / secs),
        batches: s.batches,
        ratings: cnt!.n,
        peak_signatures_held: s.solana?.peakSignatures,
        peak_rss_mb: mb(process.resourceUsage().maxRSS * 1024),
        peak_heap_mb: mb(peakHeap),
      }),
    );
  } finally {
    clearInterval(sampler);
    await db.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (schema && pgUrl) {
      const c = new pg.Client({ connectionString: pgUrl });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    }
  }
}

const sizeArg = process.argv.indexOf('--size');
if (sizeArg >= 0) {
  await runOne(Number(process.argv[sizeArg + 1]));
} else {
  const sizes = (process.env.BENCH_SOLANA_SIGNATURES ?? '20000,200000')
    .split(',')
    .map((s) => Number(s.trim()));
  console.log('Solana backfill, first pass, one child process per size (peak RSS = the process maxRSS):');
  for (const n of sizes) {
    const child = spawnSync(process.execPath, ['--import', 'tsx', process.argv[1]!, '--size', String(n)], {
      stdio: ['ignore', 'pipe', 'inherit'],
      encoding: 'utf8',
    });
    if (child.status !== 0) {
      console.error(`size ${n} failed (exit ${child.status})`);
      process.exitCode = 1;
      continue;
    }
    process.stdout.write(child.stdout);
  }
}
