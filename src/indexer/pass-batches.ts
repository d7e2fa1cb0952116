/**
 * How a pass writes what it scans (src/indexer/pass.ts): one batch with its checkpoint, its
 * persisted scan state and block hash in one transaction (ingest.ts); a range below the
 * checkpoint written without moving it; a chain's failure recorded.
 */
import type { ChainConfig } from '../chains.js';
import { databaseErrorCode, type Database } from '../db/database.js';
import { redactUrl, redactUrls } from '../log.js';
import { recordChainError, recordCheckpointHash } from '../store/chain-state.js';
import { ingestBatch } from './ingest.js';
import { keepStatisticsFresh } from './pass-statistics.js';
import { defaultLogger, type BatchInfo, type RunIndexPassOptions } from './pass-options.js';
import { addCounts, rootCause, type ChainPassResult } from './pass-report.js';
import { readAhead, readAheadFor } from './pipeline.js';
import type { Progress, ProgressEvent } from './progress.js';
import { describeError } from './rpc-retry.js';
import type { ChainScanner, ScanBatch } from './scanner.js';

/** What one batch's ingest needs to know about the scan it belongs to. */
export interface ScanSpan {
  from: number;
  target: number;
  head: number;
  total: number;
}

/**
 * Writes one batch with its checkpoint (and its persisted scan state, its block hash, the
 * caller's hook) in one transaction; returns whether it was the last one.
 */
export async function ingestScanBatch(
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
export async function recordChainFailure(
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

/** Writes a range's batches without moving the checkpoint (a range below it). */
export async function ingestBelowCheckpoint(
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
