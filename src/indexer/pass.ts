/**
 * One indexing pass over every ENABLED chain: from each chain's checkpoint (or start block) to
 * head − confirmations, batch by batch, each batch written with its checkpoint in one
 * transaction (ingest.ts). Only one pass runs at a time, also across processes
 * (`db.tryWithLock('index-pass')`: a PostgreSQL advisory lock). Chains run concurrently (small
 * limit); a chain that fails records last_error / last_error_at and does not stop the others.
 * After the pass the caller's after-pass hook runs inside the lock (the scheduler and the CLI
 * pass the free aggregates' refresh: src/after-pass.ts); src/indexer never calls the read model.
 */
import type { ChainConfig } from '../chains.js';
import type { Config } from '../config.js';
import { databaseErrorCode, type Database, type Queryable } from '../db/database.js';
import { redactUrl, redactUrls } from '../log.js';
import { censusAfterScan } from '../completeness/after-scan.js';
import { recordPass } from '../metrics.js';
import {
  analyzeIndexTables,
  lowerScannedFrom,
  readChainPassState,
  recordChainError,
  recordCheckpointHash,
  registerChains,
  setStartBlock,
  type ChainPassState,
} from '../store/chain-state.js';
import { checkRegistries, ConfigurationError } from './config-check.js';
import {
  createEvmScanner,
  type EvmReads,
  type EvmScanner,
  type EvmScanOptions,
  type EvmScanStats,
} from './evm-scanner.js';
import { ingestBatch } from './ingest.js';
import {
  addCounts,
  emptyChainResult,
  logChainOutcomes,
  notStarted,
  rootCause,
  type ChainPassResult,
  type PassReport,
} from './pass-report.js';
import { readAhead, readAheadFor } from './pipeline.js';
import { keepStatisticsFresh } from './pass-statistics.js';
import { Progress, type ProgressEvent } from './progress.js';
import { healReorg } from './rollback.js';
import { describeError } from './rpc-retry.js';
import { defaultIndexLogger, type ChainScanner, type ScanBatch, type ScannerLogger } from './scanner.js';
import {
  createSolanaScanner,
  type SolanaRpcSource,
  type SolanaScanOptions,
  type SolanaScanStats,
} from './solana-scanner.js';

type AfterPass = (db: Database) => Promise<void>;

export type IndexLogger = ScannerLogger;
export type { ChainPassResult, PassReport } from './pass-report.js';

interface BatchInfo {
  network: string;
  /** 1-based batch number within this chain's pass. */
  batch: number;
  from: number;
  to: number;
  events: number;
}

interface PassHooks {
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
  /**
   * Runs after the pass (inside the lock; skipped when the pass stopped early). The scheduler and
   * the CLI pass `refreshAfterPass` (src/after-pass.ts); absent or null: nothing runs.
   */
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
  /**
   * Stops the pass at the next batch boundary (Ctrl-C, SIGTERM): the batch being written commits
   * with its checkpoint, chains not started yet are not started, the after-pass hook is skipped.
   */
  signal?: AbortSignal;
  /**
   * Batches the scanner may read ahead of the one being written (./pipeline.ts): scanning,
   * decoding and writing overlap; checkpoints still move in order. Default 2; 0: no overlap.
   */
  readAhead?: number;
}

type AnyScanner = ChainScanner & { stats?: EvmScanStats; solanaStats?: SolanaScanStats; reads?: EvmReads };

const NO_SCANNER = 'no scanner for this chain kind yet (skipped; not counted as a failure)';

const defaultLogger: IndexLogger = defaultIndexLogger();

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
    info: (l, f) => {
      progress.clear();
      baseLog.info(l, f);
    },
    warn: (l, f) => {
      progress.clear();
      baseLog.warn(l, f);
    },
    debug: (l, f) => {
      if (!baseLog.debug) return;
      progress.clear();
      baseLog.debug(l, f);
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
      results[i] = opts.signal?.aborted
        ? notStarted(chains[i]!)
        : await indexChain(chains[i]!, opts, log, progress, now);
    }
  };
  const concurrency = Math.max(1, opts.concurrency ?? 4);
  await Promise.all(Array.from({ length: Math.min(concurrency, chains.length) }, worker));
  progress.clear();

  const failed = results.filter((r) => r.status === 'failed').map((r) => r.network);
  logChainOutcomes(results, chains, log);
  // Stopped: a chain did not finish because of the signal (a signal after every chain finished
  // changes nothing: the pass completes, refresh included).
  const stopped = results.some((r) => r.status === 'stopped');

  // Fresh planner statistics after a pass that wrote rows (PGlite has no autovacuum; on
  // PostgreSQL this only anticipates it). ANALYZE samples, so it stays cheap on big tables.
  const wrote = results.reduce(
    (n, r) => n + r.inserted.ratings + r.inserted.revocations + r.inserted.transfers,
    0,
  );
  if (wrote > 0) {
    await analyzeIndexTables(db).catch((e: unknown) => {
      log.warn(`[index] ANALYZE failed: ${describeError(e)}`);
    });
  }

  const report: PassReport = {
    status: 'ok',
    chains: results,
    failed,
    millis: 0,
    ...(stopped ? { stopped } : {}),
  };
  const hook = opts.afterPass ?? null;
  if (hook && stopped) {
    log.info('[index] pass stopped: the after-pass refresh is left to the next pass', { stopped: true });
  } else if (hook) {
    try {
      await hook(db);
    } catch (e) {
      report.afterPassError = describeError(e);
      log.warn(`[index] after-pass hook failed: ${report.afterPassError}`);
    }
  }
  report.millis = Date.now() - started;
  recordPass(report.millis / 1000);
  const okCount = results.filter((r) => r.status === 'ok').length;
  const skipped = results.filter((r) => r.status === 'skipped').map((r) => r.network);
  const stoppedChains = results.filter((r) => r.status === 'stopped').map((r) => r.network);
  const events = results.reduce((n, r) => n + r.events, 0);
  log[failed.length ? 'warn' : 'info'](
    `[index] pass ${stopped ? 'stopped' : 'done'} in ${report.millis} ms: ${okCount}/${results.length} chains ok` +
      (skipped.length ? `, skipped: ${skipped.join(', ')}` : '') +
      (failed.length ? `, failed: ${failed.join(', ')}` : '') +
      (stoppedChains.length ? `, stopped: ${stoppedChains.join(', ')}` : ''),
    {
      ms: report.millis,
      chains: results.length,
      ok: okCount,
      failed,
      skipped,
      stopped: stoppedChains,
      events,
      ...(report.afterPassError ? { after_pass_error: report.afterPassError } : {}),
    },
  );
  return report;
}

function definedOnly<T extends Record<string, number | undefined>>(o: T): Partial<Record<keyof T, number>> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<
    Record<keyof T, number>
  >;
}

function makeScanner(chain: ChainConfig, opts: RunIndexPassOptions, log: IndexLogger): AnyScanner | null {
  // The operator's retry policy (RPC_RETRY_BASE_MS, RPC_MAX_ATTEMPTS); a test's own tuning wins.
  const retry = definedOnly({
    baseDelayMs: opts.config.rpcRetryBaseMs,
    maxAttempts: opts.config.rpcMaxAttempts,
  });
  if (chain.kind === 'evm') return createEvmScanner(chain, { ...retry, ...opts.scan }, log);
  if (chain.kind === 'solana') {
    const { rpc, transport, ...tuning } = opts.solana ?? {};
    const fromConfig: Partial<SolanaScanOptions> = {
      ...retry,
      timeoutMs: opts.config.solanaRpcTimeoutMs,
      txConcurrency: opts.config.solanaRpcConcurrency,
    };
    return createSolanaScanner(chain, { ...fromConfig, ...tuning }, log, { rpc, transport, db: opts.db });
  }
  return null; // a chain kind without a scanner yet
}

/**
 * Deep reorg (below the confirmation margin): the chain no longer has the newest checkpoint's
 * block. Rolls back to the common ancestor in one transaction (the scan goes on from there) and
 * records it in the result.
 */
async function healDeepReorg(
  db: Database,
  chain: ChainConfig,
  blockHash: (block: number) => Promise<string | null>,
  log: IndexLogger,
  result: ChainPassResult,
): Promise<void> {
  const healed = await healReorg(db, chain.network, blockHash);
  if (!healed) return;
  result.reorg = { mismatchAt: healed.mismatchAt, ancestor: healed.ancestor, fullRescan: healed.fullRescan };
  log.warn(
    `[index] ${chain.network}: reorg below the margin: block ${healed.mismatchAt} is no longer on the chain; ` +
      `rolled back to ${healed.fullRescan ? 'the start block (full rescan)' : `block ${healed.ancestor}`}: ` +
      `-${healed.ratings} ratings, -${healed.revocations} revocations, -${healed.transfers} transfers, ` +
      `-${healed.metadata} metadata, -${healed.agents} agents, ${healed.unrevoked} ratings un-revoked`,
  );
}

/**
 * The first block this pass scans: above the checkpoint, never below the start block (found by
 * the scanner and stored on a chain's first pass); with the chain's row as read before it (the
 * missed range's check uses it too: the only write here, a discovered start block, happens on a
 * chain with no checkpoint, where that check does not read the start block).
 */
async function firstBlockToScan(
  db: Database,
  chain: ChainConfig,
  scanner: ChainScanner,
  head: number,
  target: number,
  log: IndexLogger,
): Promise<{ from: number; position: ChainPassState }> {
  const position = await readChainPassState(db, chain.network);
  let start = chain.startBlock ?? position.startBlock;
  if (start === null && position.lastScannedBlock === null) {
    start = await scanner.discoverStartBlock(Math.max(0, head));
    await setStartBlock(db, chain.network, start);
  }
  if (start !== null && start > head) {
    throw new ConfigurationError(
      `${chain.network}: startBlock ${start} is above the chain head ${head}: nothing can be scanned. ` +
        `Set the chain's startBlock (CHAINS_FILE) to the registries' deployment block (null: found from their code), ` +
        `or check that RPC_URL_${chain.network.toUpperCase()} serves ${chain.network}`,
    );
  }
  const checkpoint = position.lastScannedBlock;
  if (checkpoint !== null && checkpoint > target) {
    log.info(
      `[index] ${chain.network}: checkpoint ${checkpoint} is ahead of head − confirmations ${target}; nothing to do`,
    );
  }
  return { from: Math.max(checkpoint === null ? 0 : checkpoint + 1, start ?? 0), position };
}

/** What one batch's ingest needs to know about the scan it belongs to. */
interface ScanSpan {
  from: number;
  target: number;
  head: number;
  total: number;
}

/**
 * Writes one batch with its checkpoint (and its persisted scan state, its block hash, the
 * caller's hook) in one transaction; returns whether it was the last one.
 */
async function ingestScanBatch(
  chain: ChainConfig,
  scanner: ChainScanner,
  batch: ScanBatch,
  span: ScanSpan,
  opts: RunIndexPassOptions,
  progress: Progress,
  result: ChainPassResult,
  now: () => Date,
): Promise<boolean> {
  const { from, target, head, total } = span;
  const info: BatchInfo = {
    network: chain.network,
    batch: result.batches + 1,
    from: batch.from,
    to: batch.to,
    events: batch.events.length,
  };
  // A non-advancing batch (a page of a backwards walk, healed gaps) leaves the checkpoint.
  const advance = batch.advance !== false;
  const last = advance && batch.to >= target;
  // The checkpoint block's hash, stored with the batch (the next pass compares it).
  const hash = scanner.blockHash && advance ? await scanner.blockHash(batch.to) : null;
  const beforeCommit = opts.hooks?.beforeCommit;
  const counts = await ingestBatch(
    opts.db,
    batch.events,
    {
      network: chain.network,
      lastScannedBlock: advance ? batch.to : null,
      headAtLastSync: head,
      caughtUp: last,
      successAt: last ? now() : null,
    },
    {
      beforeCommit: async (tx) => {
        if (batch.persist) await batch.persist(tx);
        if (hash !== null) await recordCheckpointHash(tx, chain.network, batch.to, hash);
        if (beforeCommit) await beforeCommit(info, tx);
      },
    },
  );
  result.batches++;
  if (advance) result.to = batch.to;
  result.events += batch.events.length;
  addCounts(result.inserted, counts);
  await keepStatisticsFresh(opts, opts.db, opts.log ?? defaultLogger, batch.events.length);
  // (a backwards walk's page: everything above its lowest block is done)
  const p: ProgressEvent = {
    network: chain.network,
    done: advance ? batch.to - from + 1 : Math.max(0, Math.min(total - 1, target - batch.from + 1)),
    total,
    block: batch.to,
    target,
  };
  progress.update(p, last);
  opts.onProgress?.(p);
  if (opts.hooks?.afterBatch) await opts.hooks.afterBatch(info);
  return last;
}

/** A failed chain: the error (URLs redacted) in the result and in `chains.last_error`. */
async function recordChainFailure(
  db: Database,
  chain: ChainConfig,
  e: unknown,
  result: ChainPassResult,
  now: () => Date,
): Promise<void> {
  result.status = 'failed';
  result.ok = false;
  // Error texts may carry the RPC URL (an API key in it): stripped before logs and last_error.
  result.error = redactUrls(describeError(e));
  result.endpoint = chain.rpcUrl ? redactUrl(chain.rpcUrl) : '(none configured)';
  result.cause = rootCause(e);
  const code = databaseErrorCode(e);
  if (code) result.databaseCode = code;
  await recordChainError(db, chain.network, result.error, now());
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
  const result = emptyChainResult(chain);
  let scanner: AnyScanner | null = null;
  try {
    scanner = makeScanner(chain, opts, log);
    if (!scanner) {
      result.status = 'skipped';
      result.ok = false;
      result.error = `${chain.kind}: ${NO_SCANNER}`;
      await recordChainError(db, chain.network, result.error, now());
      return result;
    }
    await scanner.verify();
    const head = await scanner.head();
    result.head = head;
    const target = head - chain.confirmations;
    if (scanner.reads) await checkRegistries(scanner.reads, chain, head);
    if (scanner.blockHash) await healDeepReorg(db, chain, scanner.blockHash.bind(scanner), log, result);
    const { from, position } = await firstBlockToScan(db, chain, scanner, head, target, log);
    if (scanner.reads)
      await scanMissedRange(chain, scanner, from, position, head, opts, log, progress, result, now);

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
      await censusOf(chain, scanner, opts, log, progress, result, now);
      return result;
    }

    result.from = from;
    const span: ScanSpan = { from, target, head, total: target - from + 1 };
    progress.update({ network: chain.network, done: 0, total: span.total, block: from - 1, target }, true);
    for await (const batch of readAhead(scanner.scan(from, target), readAheadFor(chain, opts.readAhead))) {
      const last = await ingestScanBatch(chain, scanner, batch, span, opts, progress, result, now);
      // The batch boundary: everything so far is committed with its checkpoint.
      if (!last && opts.signal?.aborted) {
        result.status = 'stopped';
        result.ok = false;
        break;
      }
    }
    if (result.status === 'ok') await censusOf(chain, scanner, opts, log, progress, result, now);
    return result;
  } catch (e) {
    await recordChainFailure(db, chain, e, result, now);
    return result;
  } finally {
    result.millis = Date.now() - t0;
    if (scanner?.stats) result.scan = { ...scanner.stats };
    if (scanner?.solanaStats) result.solana = { ...scanner.solanaStats };
  }
}

// ------------------------------------------------------------------ completeness (EVM)

/** Writes a range's batches without moving the checkpoint (a range below it). */
async function ingestBelowCheckpoint(
  chain: ChainConfig,
  scanner: ChainScanner,
  from: number,
  to: number,
  head: number,
  opts: RunIndexPassOptions,
  progress: Progress,
  result: ChainPassResult,
  now: () => Date,
): Promise<void> {
  const span: ScanSpan = { from, target: to, head, total: to - from + 1 };
  for await (const batch of readAhead(scanner.scan(from, to), readAheadFor(chain, opts.readAhead))) {
    await ingestScanBatch(chain, scanner, { ...batch, advance: false }, span, opts, progress, result, now);
    // stopped (SIGINT/SIGTERM): what is written stays, the rest is scanned again by a later pass
    if (opts.signal?.aborted) return;
  }
}

/**
 * A start block moved below the lowest block ever scanned: the range between is scanned first
 * (its rows written, the checkpoint left where it is), then the lowest scanned block lowered. On
 * a chain's first pass (or a database from before the column) the lowest scanned block is set.
 * `position`: the chain's row as firstBlockToScan read it (nothing wrote what this reads since).
 */
async function scanMissedRange(
  chain: ChainConfig,
  scanner: ChainScanner,
  from: number,
  position: ChainPassState,
  head: number,
  opts: RunIndexPassOptions,
  log: IndexLogger,
  progress: Progress,
  result: ChainPassResult,
  now: () => Date,
): Promise<void> {
  const { db } = opts;
  const start = chain.startBlock ?? position.startBlock ?? from;
  if (position.scannedFrom === null) {
    await lowerScannedFrom(db, chain.network, position.lastScannedBlock === null ? from : start);
    return;
  }
  if (start >= position.scannedFrom || position.lastScannedBlock === null) return;
  const to = position.scannedFrom - 1;
  log.warn(
    `[index] ${chain.network}: startBlock ${start} is below the lowest block scanned so far (${position.scannedFrom}): scanning ${start}..${to} first`,
    { chain: chain.network, from: start, to },
  );
  await ingestBelowCheckpoint(chain, scanner, start, to, head, opts, progress, result, now);
  if (opts.signal?.aborted) return; // not all of it: the next pass scans the missed range again
  await lowerScannedFrom(db, chain.network, start);
  result.missedRange = { from: start, to };
}

/**
 * The completeness census after an EVM chain's scan, and the repairs it makes
 * (src/completeness/after-scan.ts): repaired batches are written like the scan's, the checkpoint
 * left where it is.
 */
async function censusOf(
  chain: ChainConfig,
  scanner: AnyScanner,
  opts: RunIndexPassOptions,
  log: IndexLogger,
  progress: Progress,
  result: ChainPassResult,
  now: () => Date,
): Promise<void> {
  if (!('scanFiltered' in scanner)) return;
  const evm = scanner as AnyScanner & EvmScanner;
  const head = result.head ?? 0;
  const census = await censusAfterScan({
    db: opts.db,
    chain,
    scanner: evm,
    config: opts.config,
    log,
    now,
    signal: opts.signal,
    write: async (batch) => {
      const span: ScanSpan = { from: batch.from, target: batch.to, head, total: batch.to - batch.from + 1 };
      await ingestScanBatch(chain, evm, { ...batch, advance: false }, span, opts, progress, result, now);
    },
  });
  if (census) result.census = census;
}
