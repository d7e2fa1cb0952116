/**
 * The batches a Solana scan yields, and what each writes in the transaction of its events: gaps,
 * healed gaps, incomplete transactions, agent wallet changes, and the responses classed by the
 * ownership and wallet history (persistFetched); the walk's cursor in the middle of the walk; the
 * cursor's deletion and the start block in the walk's last batch, the one that moves the checkpoint.
 */
import type { Queryable } from '../../db/database.js';
import { raiseStartBlock } from '../../store/chain-state.js';
import { insertAgentWallets, reclassRespondersByHistory } from '../../store/responses.js';
import {
  clearScanGaps,
  clearWalkCursor,
  readScanGaps,
  recordIncompleteTransactions,
  recordScanGaps,
  saveWalkCursor,
} from '../../store/solana-scan.js';
import type { ScanBatch } from '../scanner.js';
import type { SolanaScan } from './scan-state.js';
import type { SigInfo } from './slot-order.js';
import { fetchAll, type Fetched } from './transaction-fetch.js';

/**
 * Writes the gaps, the healed gaps, the incomplete transactions and the agent wallet changes of a
 * batch, and (after the batch's events were written) classes by the ownership and wallet history
 * its responses and the responses its transfers and wallet changes can change: the walk runs newest
 * to oldest, so the transfers and wallet changes before a response often arrive in a later batch.
 */
async function persistFetched(s: SolanaScan, tx: Queryable, f: Fetched): Promise<void> {
  await recordScanGaps(tx, s.network, f.gaps);
  if (s.db) await clearScanGaps(tx, s.network, f.healed);
  await recordIncompleteTransactions(tx, s.network, f.incomplete);
  await insertAgentWallets(tx, f.wallets);
  await reclassRespondersByHistory(
    tx,
    s.network,
    f.events.filter((e) => e.kind === 'response'),
    [...f.events.filter((e) => e.kind === 'transfer'), ...f.wallets],
  );
}

/** Gaps of earlier passes, tried again (oldest first): one non-advancing batch. */
export async function* retryGaps(s: SolanaScan): AsyncGenerator<ScanBatch> {
  if (!s.db || s.o.gapRetryLimit <= 0) return;
  const sigs = await readScanGaps(s.db, s.network, s.o.gapRetryLimit);
  if (sigs.length === 0) return;
  const f = await fetchAll(s, sigs, 1);
  s.stats.gapsHealed += f.healed.length;
  if (f.healed.length)
    s.log.info(`[index] ${s.network}: ${f.healed.length} of ${sigs.length} gaps served now and indexed`, {
      chain: s.network,
      healed: f.healed.length,
      tried: sigs.length,
    });
  yield {
    from: sigs[0]!.slot,
    to: sigs[sigs.length - 1]!.slot,
    events: f.events,
    advance: false,
    persist: (tx) => persistFetched(s, tx, f),
  };
}

/**
 * The walk's last batch: moves the checkpoint to `to`, deletes the cursor and, when the walk
 * reached the start of the program's history, records its oldest slot as the start block.
 */
export function finalWalkBatch(
  s: SolanaScan,
  from: number,
  to: number,
  f: Fetched,
  oldestOfHistory: number | null,
): ScanBatch {
  return {
    from,
    to,
    events: f.events,
    persist: async (tx) => {
      await persistFetched(s, tx, f);
      if (s.db) await clearWalkCursor(tx, s.network);
      if (oldestOfHistory !== null) await raiseStartBlock(tx, s.network, oldestOfHistory);
    },
  };
}

/** A batch in the middle of the walk: does not advance the checkpoint, saves the cursor at `low`. */
export function midWalkBatch(s: SolanaScan, from: number, to: number, f: Fetched, low: SigInfo): ScanBatch {
  return {
    from: low.slot,
    to,
    events: f.events,
    advance: false,
    persist: async (tx) => {
      await persistFetched(s, tx, f);
      if (s.db)
        await saveWalkCursor(tx, s.network, {
          fromSlot: from,
          toSlot: to,
          beforeSignature: low.signature,
          lowSlot: low.slot,
        });
    },
  };
}
