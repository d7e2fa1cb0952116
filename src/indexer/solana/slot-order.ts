/**
 * The chain order of Solana events inside a slot: a page's slots held back until complete
 * (completeSlots), each transaction's index among the program's transactions of its slot
 * (positionSignatures), and the log_index an event's position packs into (solanaLogIndex). No I/O.
 */
import type { SolanaScanStats } from './scan-state.js';

/** log_index positions one transaction spans: events 0..2047, two positions each. */
const SOLANA_TX_STRIDE = 4096;
/** Most events of one transaction that get a position (a node's 10 kB log cap keeps far below). */
export const SOLANA_MAX_EVENTS_PER_TX = SOLANA_TX_STRIDE / 2;
/** Highest transaction index inside one slot that fits log_index (a 32-bit integer). */
export const SOLANA_MAX_TX_INDEX = Math.floor(0x7fffffff / SOLANA_TX_STRIDE) - 1;

/**
 * The position inside its slot of the event with data-line index `index` of the transaction with
 * index `txIndex` among the program's transactions of that slot (block order, 0 = first), `sub`
 * 0 or 1 (derived events). Slot, then this number, is the chain order.
 */
export function solanaLogIndex(txIndex: number, index: number, sub: 0 | 1 = 0): number {
  if (!Number.isInteger(txIndex) || txIndex < 0 || txIndex > SOLANA_MAX_TX_INDEX)
    throw new RangeError(`transaction index ${txIndex} out of 0..${SOLANA_MAX_TX_INDEX}`);
  if (!Number.isInteger(index) || index < 0 || index >= SOLANA_MAX_EVENTS_PER_TX)
    throw new RangeError(`event index ${index} out of 0..${SOLANA_MAX_EVENTS_PER_TX - 1}`);
  return txIndex * SOLANA_TX_STRIDE + index * 2 + sub;
}

export interface SigInfo {
  signature: string;
  slot: number;
  failed: boolean;
}

/** A signature with its position: the transaction's index among the program's ones of its slot. */
export interface PositionedSig {
  signature: string;
  slot: number;
  txIndex: number;
}

/**
 * Positions a page's complete slots: each transaction's index among the program's transactions
 * of its slot (oldest first, failed ones counted but skipped).
 */
export function positionSignatures(sigs: readonly SigInfo[], stats: SolanaScanStats): PositionedSig[] {
  const out: PositionedSig[] = [];
  let i = 0;
  while (i < sigs.length) {
    let j = i;
    while (j < sigs.length && sigs[j]!.slot === sigs[i]!.slot) j++;
    const n = j - i;
    for (let k = i; k < j; k++) {
      const s = sigs[k]!;
      if (s.failed) {
        stats.failedTransactions++;
        continue;
      }
      const txIndex = n - 1 - (k - i);
      if (txIndex > SOLANA_MAX_TX_INDEX)
        throw new Error(`slot ${s.slot} has more than ${SOLANA_MAX_TX_INDEX + 1} program transactions`);
      out.push({ signature: s.signature, slot: s.slot, txIndex });
    }
    i = j;
  }
  return out;
}

/**
 * One page of the walk (newest first) added to the signatures held back from the previous page:
 * those inside [from, to], split into the complete slots (`ready`) and the lowest slot, which may
 * continue on the next page (`held`), unless the walk is done (the page was the last one, or it
 * reached below `from`).
 */
export function completeSlots(
  page: readonly SigInfo[],
  held: SigInfo[],
  from: number,
  to: number,
  pageLimit: number,
): { ready: SigInfo[]; held: SigInfo[]; done: boolean; ended: boolean; reachedFrom: boolean; seen: number } {
  const ended = page.length < pageLimit;
  let reachedFrom = false;
  const fresh: SigInfo[] = held;
  for (const s of page) {
    if (s.slot > to) continue;
    if (s.slot < from) {
      reachedFrom = true;
      break;
    }
    fresh.push(s);
  }
  const done = ended || reachedFrom;
  if (done) return { ready: fresh, held: [], done, ended, reachedFrom, seen: fresh.length };
  const lowest = fresh.length ? fresh[fresh.length - 1]!.slot : null;
  const cut = lowest === null ? 0 : fresh.findIndex((s) => s.slot === lowest);
  return { ready: fresh.slice(0, cut), held: fresh.slice(cut), done, ended, reachedFrom, seen: fresh.length };
}
