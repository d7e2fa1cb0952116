/**
 * The chain order of Solana events inside a slot: the log_index an event's position packs into
 * (transaction index among the program's transactions of the slot, event index, derived event).
 * No I/O.
 */

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
