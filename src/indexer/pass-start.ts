/**
 * Where a chain's pass starts (src/indexer/pass.ts): a deep reorg healed first, the first block
 * to scan (checkpoint, start block, discovered start), and a range below the lowest block ever
 * scanned (a start block moved down) scanned before the rest.
 */
import type { ChainConfig } from '../chains.js';
import type { Database } from '../db/database.js';
import {
  lowerScannedFrom,
  readChainPassState,
  setStartBlock,
  type ChainPassState,
} from '../store/chain-state.js';
import { ConfigurationError } from './config-check.js';
import { ingestBelowCheckpoint } from './pass-batches.js';
import type { IndexLogger, RunIndexPassOptions } from './pass-options.js';
import type { ChainPassResult } from './pass-report.js';
import type { Progress } from './progress.js';
import { healReorg } from './rollback.js';
import type { ChainScanner } from './scanner.js';

/**
 * Deep reorg (below the confirmation margin): the chain no longer has the newest checkpoint's
 * block. Rolls back to the common ancestor in one transaction (the scan goes on from there) and
 * records it in the result.
 */
export async function healDeepReorg(
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
export async function firstBlockToScan(
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

/**
 * A start block moved below the lowest block ever scanned: the range between is scanned first
 * (its rows written, the checkpoint left where it is), then the lowest scanned block lowered. On
 * a chain's first pass (or a database from before the column) the lowest scanned block is set.
 * `position`: the chain's row as firstBlockToScan read it (nothing wrote what this reads since).
 */
export async function scanMissedRange(
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
