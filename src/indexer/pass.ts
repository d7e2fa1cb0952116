/**
 * One indexing pass over every ENABLED chain: from each chain's checkpoint (or start block) to
 * head − confirmations, batch by batch, each batch written with its checkpoint in one
 * transaction (ingest.ts). Only one pass runs at a time, also across processes
 * (`db.tryWithLock('index-pass')`: a PostgreSQL advisory lock). Chains run concurrently (small
 * limit); a chain that fails records last_error / last_error_at and does not stop the others.
 * After the pass the free aggregates are refreshed (the after-pass hook).
 */
import type { ChainConfig } from '../chains.js';
import type { Config } from '../config.js';
import type { Database, Queryable } from '../db/database.js';
import { refreshAggregates } from '../read/aggregates.js';
import { registerChains } from './chain-state.js';
import {
  createEvmScanner,
  describeError,
  type EvmScanOptions,
  type EvmScanStats,
  type ScannerLogger,
} from './evm-scanner.js';
import { ingestBatch, type IngestCounts } from './ingest.js';
import type { ChainScanner } from './scanner.js';
import { createSolanaScanner, type SolanaRpcSource, type SolanaScanOptions } from './solana-scanner.js';

export type AfterPass = (db: Database) => Promise<void>;

const refreshAfterPass: AfterPass = async (db) => {
  await refreshAggregates(db);
};
let registeredAfterPass: AfterPass | null = refreshAfterPass;

/**
 * Replaces the hook every pass runs after scanning (default: refreshAggregates of
 * src/read/aggregates.ts). null disables it. Returns the previous hook.
 */
export function setAfterPassHook(hook: AfterPass | null): AfterPass | null {
  const previous = registeredAfterPass;
  registeredAfterPass = hook;
  return previous;
}

export type IndexLogger = ScannerLogger;

export interface ProgressEvent {
  network: string;
  /** Blocks written so far in this pass, and blocks this pass has to cover. */
  done: number;
  total: number;
  /** Last block written. */
  block: number;
  target: number;
}

export interface BatchInfo {
  network: string;
  /** 1-based batch number within this chain's pass. */
  batch: number;
  from: number;
  to: number;
  events: number;
}

export interface PassHooks {
  /** Inside the batch transaction, after every write, before COMMIT: a throw rolls the batch back. */
  beforeCommit?: (info: BatchInfo, tx: Queryable) => Promise<void> | void;
  /** After the batch committed: a throw fails the chain (the batch stays written). */
  afterBatch?: (info: BatchInfo) => Promise<void> | void;
}

export interface RunIndexPassOptions {
  db: Database;
  config: Config;
  onProgress?: (p: ProgressEvent) => void;
  log?: IndexLogger;
  /** Runs after the pass (inside the lock). Default: the registered hook (setAfterPassHook); null: none. */
  afterPass?: AfterPass | null;
  /** Chains scanned at the same time. Default 4. */
  concurrency?: number;
  /** EVM scanner tuning (ranges, retries, timeouts). */
  scan?: Partial<EvmScanOptions>;
  /** Solana scanner tuning, and (tests) an injected RPC or transport instead of the chain's rpcUrl. */
  solana?: Partial<SolanaScanOptions> & SolanaRpcSource;
  hooks?: PassHooks;
  /** Only these networks (still only the enabled ones). */
  networks?: string[];
  /** Progress display: 'auto' = one updating line on a TTY, else log lines. */
  progress?: 'auto' | 'lines' | 'off';
  now?: () => Date;
}

export type ChainPassStatus = 'ok' | 'failed' | 'skipped';

export interface ChainPassResult {
  network: string;
  kind: string;
  status: ChainPassStatus;
  ok: boolean;
  /** The block range this pass covered (null when it did not get that far or had nothing to do). */
  from: number | null;
  to: number | null;
  head: number | null;
  /** Normalised events read from the chain this pass. */
  events: number;
  /** Rows the pass actually added (0 on a re-run). */
  inserted: IngestCounts;
  batches: number;
  millis: number;
  error?: string;
  scan?: EvmScanStats;
}

export type PassReport =
  | { status: 'locked'; chains: []; failed: []; millis: number }
  | {
      status: 'ok';
      chains: ChainPassResult[];
      /** Networks that failed this pass (skipped chains are not failures). */
      failed: string[];
      millis: number;
      afterPassError?: string;
    };

const NO_SCANNER = 'no scanner for this chain kind yet (skipped; not counted as a failure)';

function zeroCounts(): IngestCounts {
  return { ratings: 0, revocations: 0, transfers: 0, metadata: 0, revokedApplied: 0 };
}

function addCounts(a: IngestCounts, b: IngestCounts): void {
  a.ratings += b.ratings;
  a.revocations += b.revocations;
  a.transfers += b.transfers;
  a.metadata += b.metadata;
  a.revokedApplied += b.revokedApplied;
}

const defaultLogger: IndexLogger = { info: (l) => console.log(l), warn: (l) => console.warn(l) };

// ------------------------------------------------------------------ progress display

class Progress {
  private readonly state = new Map<string, ProgressEvent>();
  private lastLine = new Map<string, number>();
  private drawn = false;
  private lastDraw = 0;

  constructor(
    private readonly mode: 'tty' | 'lines' | 'off',
    private readonly log: IndexLogger,
    private readonly intervalMs = 5_000,
  ) {}

  update(p: ProgressEvent, final = false): void {
    this.state.set(p.network, p);
    if (this.mode === 'off') return;
    const now = Date.now();
    if (this.mode === 'tty') {
      if (!final && now - this.lastDraw < 100) return;
      this.lastDraw = now;
      const parts = [...this.state.values()].map((s) => `${s.network} ${s.done}/${s.total} (${pct(s)}%)`);
      process.stderr.write(`\r\x1b[K[index] ${parts.join(' · ')}`);
      this.drawn = true;
      return;
    }
    const last = this.lastLine.get(p.network) ?? 0;
    if (final || now - last >= this.intervalMs) {
      this.lastLine.set(p.network, now);
      this.log.info(`[index] ${p.network} ${p.done}/${p.total} blocks (${pct(p)}%)`);
    }
  }

  /** Ends the updating line before a normal log line. */
  clear(): void {
    if (this.drawn) {
      process.stderr.write('\r\x1b[K');
      this.drawn = false;
    }
  }
}

function pct(p: ProgressEvent): number {
  return p.total <= 0 ? 100 : Math.floor((p.done * 100) / p.total);
}

// ------------------------------------------------------------------ the pass

export async function runIndexPass(opts: RunIndexPassOptions): Promise<PassReport> {
  const started = Date.now();
  const { db } = opts;
  const locked = await db.tryWithLock('index-pass', () => passLocked(opts, started));
  if (!locked.acquired) {
    (opts.log ?? defaultLogger).warn('[index] another pass holds the index lock; skipped');
    return { status: 'locked', chains: [], failed: [], millis: Date.now() - started };
  }
  return locked.value;
}

async function passLocked(opts: RunIndexPassOptions, started: number): Promise<PassReport> {
  const { db, config } = opts;
  const baseLog = opts.log ?? defaultLogger;
  const now = opts.now ?? (() => new Date());
  const mode =
    opts.progress === 'off'
      ? 'off'
      : opts.progress === 'lines' || !process.stderr.isTTY || opts.log
        ? 'lines'
        : 'tty';
  const progress = new Progress(mode, baseLog);
  const log: IndexLogger = {
    info: (l) => {
      progress.clear();
      baseLog.info(l);
    },
    warn: (l) => {
      progress.clear();
      baseLog.warn(l);
    },
  };

  await registerChains(db, config.chains);
  const chains = config.chains.filter(
    (c) => c.enabled && (!opts.networks || opts.networks.includes(c.network)),
  );
  const results: ChainPassResult[] = new Array(chains.length);
  let next = 0;
  const worker = async () => {
    while (next < chains.length) {
      const i = next++;
      results[i] = await indexChain(chains[i]!, opts, log, progress, now);
    }
  };
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  await Promise.all(Array.from({ length: Math.min(concurrency, chains.length) }, worker));
  progress.clear();

  const failed = results.filter((r) => r.status === 'failed').map((r) => r.network);
  for (const r of results) {
    const range = r.from !== null && r.to !== null ? ` blocks ${r.from}..${r.to}` : '';
    const what =
      r.status === 'ok'
        ? `ok${range}, ${r.events} events, +${r.inserted.ratings} ratings, +${r.inserted.revocations} revocations, ` +
          `+${r.inserted.transfers} transfers in ${r.millis} ms`
        : `${r.status}: ${r.error ?? ''}`;
    (r.status === 'failed' ? log.warn : log.info)(`[index] ${r.network} ${what}`);
  }

  // Fresh planner statistics after a pass that wrote rows (PGlite has no autovacuum; on
  // PostgreSQL this only anticipates it). ANALYZE samples, so it stays cheap on big tables.
  const wrote = results.reduce(
    (n, r) => n + r.inserted.ratings + r.inserted.revocations + r.inserted.transfers,
    0,
  );
  if (wrote > 0) {
    await db
      .exec('ANALYZE agents, ratings, revocations, ownership_transfers, agent_metadata')
      .catch((e: unknown) => {
        log.warn(`[index] ANALYZE failed: ${describeError(e)}`);
      });
  }

  const report: PassReport = { status: 'ok', chains: results, failed, millis: 0 };
  const hook = opts.afterPass === undefined ? registeredAfterPass : opts.afterPass;
  if (hook) {
    try {
      await hook(db);
    } catch (e) {
      report.afterPassError = describeError(e);
      log.warn(`[index] after-pass hook failed: ${report.afterPassError}`);
    }
  }
  report.millis = Date.now() - started;
  const okCount = results.filter((r) => r.status === 'ok').length;
  const skipped = results.filter((r) => r.status === 'skipped').map((r) => r.network);
  log.info(
    `[index] pass done in ${report.millis} ms: ${okCount}/${results.length} chains ok` +
      (skipped.length ? `, skipped: ${skipped.join(', ')}` : '') +
      (failed.length ? `, failed: ${failed.join(', ')}` : ''),
  );
  return report;
}

async function recordError(db: Database, network: string, message: string, at: Date): Promise<void> {
  await db
    .query(`UPDATE chains SET last_error = $2, last_error_at = $3 WHERE network = $1`, [
      network,
      message,
      at.toISOString(),
    ])
    .catch(() => undefined);
}

function makeScanner(
  chain: ChainConfig,
  opts: RunIndexPassOptions,
  log: IndexLogger,
): (ChainScanner & { stats?: EvmScanStats }) | null {
  if (chain.kind === 'evm') return createEvmScanner(chain, opts.scan, log);
  if (chain.kind === 'solana') {
    const { rpc, transport, ...tuning } = opts.solana ?? {};
    return createSolanaScanner(chain, tuning, log, { rpc, transport });
  }
  return null; // a chain kind without a scanner yet
}

async function indexChain(
  chain: ChainConfig,
  opts: RunIndexPassOptions,
  log: IndexLogger,
  progress: Progress,
  now: () => Date,
): Promise<ChainPassResult> {
  const { db } = opts;
  const t0 = Date.now();
  const result: ChainPassResult = {
    network: chain.network,
    kind: chain.kind,
    status: 'ok',
    ok: true,
    from: null,
    to: null,
    head: null,
    events: 0,
    inserted: zeroCounts(),
    batches: 0,
    millis: 0,
  };
  let scanner: (ChainScanner & { stats?: EvmScanStats }) | null = null;
  try {
    scanner = makeScanner(chain, opts, log);
    if (!scanner) {
      result.status = 'skipped';
      result.ok = false;
      result.error = `${chain.kind}: ${NO_SCANNER}`;
      await recordError(db, chain.network, result.error, now());
      return result;
    }
    await scanner.verify();
    const head = await scanner.head();
    result.head = head;
    const target = head - chain.confirmations;
    const [row] = await db.query<{ last_scanned_block: number | null; start_block: number | null }>(
      'SELECT last_scanned_block, start_block FROM chains WHERE network = $1',
      [chain.network],
    );
    let start = chain.startBlock ?? row?.start_block ?? null;
    if (start === null && row?.last_scanned_block == null) {
      start = await scanner.discoverStartBlock(Math.max(0, head));
      await db.query('UPDATE chains SET start_block = $2 WHERE network = $1', [chain.network, start]);
    }
    const checkpoint = row?.last_scanned_block ?? null;
    const from = Math.max(checkpoint === null ? 0 : checkpoint + 1, start ?? 0);
    if (checkpoint !== null && checkpoint > target) {
      log.info(
        `[index] ${chain.network}: checkpoint ${checkpoint} is ahead of head − confirmations ${target}; nothing to do`,
      );
    }

    if (from > target) {
      // Nothing new below the margin: still record the sync (head, success, caught up).
      await ingestBatch(db, [], {
        network: chain.network,
        lastScannedBlock: from - 1 >= 0 ? from - 1 : null,
        headAtLastSync: head,
        caughtUp: true,
        successAt: now(),
      });
      progress.update({ network: chain.network, done: 0, total: 0, block: from - 1, target }, true);
      return result;
    }

    result.from = from;
    const total = target - from + 1;
    progress.update({ network: chain.network, done: 0, total, block: from - 1, target }, true);
    for await (const batch of scanner.scan(from, target)) {
      const info: BatchInfo = {
        network: chain.network,
        batch: result.batches + 1,
        from: batch.from,
        to: batch.to,
        events: batch.events.length,
      };
      const last = batch.to >= target;
      const counts = await ingestBatch(
        db,
        batch.events,
        {
          network: chain.network,
          lastScannedBlock: batch.to,
          headAtLastSync: head,
          caughtUp: last,
          successAt: last ? now() : null,
        },
        opts.hooks?.beforeCommit ? { beforeCommit: (tx) => opts.hooks!.beforeCommit!(info, tx) } : {},
      );
      result.batches++;
      result.to = batch.to;
      result.events += batch.events.length;
      addCounts(result.inserted, counts);
      const p: ProgressEvent = {
        network: chain.network,
        done: batch.to - from + 1,
        total,
        block: batch.to,
        target,
      };
      progress.update(p, last);
      opts.onProgress?.(p);
      if (opts.hooks?.afterBatch) await opts.hooks.afterBatch(info);
    }
    return result;
  } catch (e) {
    result.status = 'failed';
    result.ok = false;
    result.error = describeError(e);
    await recordError(db, chain.network, result.error, now());
    return result;
  } finally {
    result.millis = Date.now() - t0;
    if (scanner?.stats) result.scan = { ...scanner.stats };
  }
}
