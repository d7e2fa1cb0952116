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
import { censusAfterScan } from '../completeness/after-scan.js';
import { recordPass } from '../metrics.js';
import { analyzeIndexTables, recordChainError, registerChains } from '../store/chain-state.js';
import { checkRegistries } from './config-check.js';
import { createEvmScanner, type EvmScanner } from './evm-scanner.js';
import { ingestBatch } from './ingest.js';
import { ingestScanBatch, recordChainFailure, type ScanSpan } from './pass-batches.js';
import {
  defaultLogger,
  NO_SCANNER,
  type AnyScanner,
  type IndexLogger,
  type RunIndexPassOptions,
} from './pass-options.js';
import {
  emptyChainResult,
  logChainOutcomes,
  notStarted,
  type ChainPassResult,
  type PassReport,
} from './pass-report.js';
import { firstBlockToScan, healDeepReorg, scanMissedRange } from './pass-start.js';
import { coalesce, COALESCE_MIN_BLOCKS, readAhead, readAheadFor } from './pipeline.js';
import { Progress } from './progress.js';
import { describeError } from './rpc-retry.js';
import { createSolanaScanner, type SolanaScanOptions } from './solana-scanner.js';

export type { AfterPass, BatchInfo, IndexLogger, PassHooks, RunIndexPassOptions } from './pass-options.js';
export type { ChainPassResult, PassReport } from './pass-report.js';

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
    const scanned = readAhead(scanner.scan(from, target), readAheadFor(chain, opts.readAhead));
    // a deep backfill (a cold start): small batches coalesced into fewer writes (./pipeline.ts)
    const batches =
      span.total >= COALESCE_MIN_BLOCKS && opts.coalesce !== false ? coalesce(scanned) : scanned;
    for await (const batch of batches) {
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
