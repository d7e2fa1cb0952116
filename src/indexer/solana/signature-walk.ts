/**
 * The backfill walk of a Solana scan: the program's signatures, newest to oldest, one page
 * (pageLimit) at a time, each page's complete slots fetched and yielded as one batch with the walk's
 * cursor; an interrupted walk resumes below its cursor (the overview: src/indexer/solana-scanner.ts).
 */
import { signature as toSignature } from '@solana/kit';
import { clearWalkCursor, readWalkCursor } from '../../store/solana-scan.js';
import type { ScanBatch } from '../scanner.js';
import { finalWalkBatch, midWalkBatch } from './batches.js';
import type { SolanaScan } from './scan-state.js';
import { completeSlots, type SigInfo } from './slot-order.js';
import { fetchPage } from './transaction-fetch.js';

/** One page of the program's signatures (newest first), below `before` when given. */
async function signaturePage(s: SolanaScan, before: string | undefined): Promise<SigInfo[]> {
  const page = await s.call('getSignaturesForAddress', (abortSignal) =>
    s.rpc
      .getSignaturesForAddress(s.program, {
        commitment: 'finalized',
        limit: s.o.pageLimit,
        ...(before ? { before: toSignature(before) } : {}),
      })
      .send({ abortSignal }),
  );
  s.stats.signaturePages++;
  return page.map((x) => ({
    signature: x.signature as string,
    slot: Number(x.slot),
    failed: x.err !== null && x.err !== undefined,
  }));
}

/**
 * The walk over [from, to], newest to oldest, starting below `before` (undefined: at the newest
 * signature). Yields one non-advancing batch per page of complete slots and, last, the batch
 * that moves the checkpoint to `to` and ends the walk.
 */
async function* walk(
  s: SolanaScan,
  from: number,
  to: number,
  before: string | undefined,
): AsyncGenerator<ScanBatch> {
  let cursor = before;
  // Signatures of the lowest slot seen so far, which may continue on the next page (newest first).
  let held: SigInfo[] = [];
  for (;;) {
    const page = await signaturePage(s, cursor);
    if (page.length) cursor = page[page.length - 1]!.signature;
    const step = completeSlots(page, held, from, to, s.o.pageLimit);
    s.stats.peakSignatures = Math.max(s.stats.peakSignatures, step.seen);
    const { ready, done, ended, reachedFrom } = step;
    held = step.held;
    if (!done && ready.length === 0) continue;
    const f = await fetchPage(s, ready);
    const oldest = ready.length ? ready[ready.length - 1]! : null;
    if (done) {
      yield finalWalkBatch(s, from, to, f, ended && !reachedFrom && oldest ? oldest.slot : null);
      return;
    }
    yield midWalkBatch(s, from, to, f, oldest!);
  }
}

/**
 * The walk over [from, to]: an interrupted walk over [from, c.toSlot] with c.toSlot ≤ to is
 * finished below its cursor first, then the rest is walked; any other cursor is dropped.
 */
export async function* walkOrResume(s: SolanaScan, from: number, to: number): AsyncGenerator<ScanBatch> {
  let start = from;
  if (s.db) {
    const c = await readWalkCursor(s.db, s.network);
    if (c && c.fromSlot === from && c.toSlot <= to) {
      const resumeTo = c.toSlot;
      s.log.info(
        `[index] ${s.network}: resuming the walk over slots ${from}..${resumeTo} below slot ${c.lowSlot}`,
        {
          chain: s.network,
          from,
          to: resumeTo,
          low_slot: c.lowSlot,
        },
      );
      yield* walk(s, from, resumeTo, c.beforeSignature);
      start = resumeTo + 1;
    } else if (c) {
      await clearWalkCursor(s.db, s.network);
    }
  }
  if (start <= to) yield* walk(s, start, to, undefined);
}
