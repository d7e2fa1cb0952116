/**
 * One fetched Solana transaction decoded: failed ones skipped, the program's own `Program data:`
 * events decoded and positioned, an event that does not decode skipped with an escaped warning
 * (decodeContextFor), and a transaction whose logs the node cut ("Log truncated") or that holds
 * more events than a position fits marked incomplete, the events before the cut kept. Event
 * identity: tx hash = the signature (base58), block number = the slot, block time = the
 * transaction's blockTime (null when the node has none).
 */
import type { AgentWalletEvent, IndexEvent } from '../../index-events.js';
import { sanitizeText, type ScannerLogger } from '../scanner.js';
import { toAgentWallet, toIndexEvents } from './normalize.js';
import { decodeEvent } from './program-events.js';
import { extractProgramData } from './program-logs.js';
import type { DecodeContext, SolanaScanStats } from './scan-state.js';
import { SOLANA_MAX_EVENTS_PER_TX, solanaLogIndex, type PositionedSig } from './slot-order.js';

/** getTransaction's answer, reduced to what the scanner reads. */
export interface TxView {
  slot: bigint | number;
  blockTime: bigint | number | null;
  meta: { err: unknown; logMessages?: readonly string[] | null } | null;
}

/** Events of one transaction, its agent wallet changes, and why it is incomplete (null: complete). */
export type Decoded = { events: IndexEvent[]; wallets: AgentWalletEvent[]; incomplete: string | null };

export function decodeTransaction(p: PositionedSig, tx: TxView, c: DecodeContext): Decoded {
  const { stats, network } = c;
  stats.transactions++;
  if (!tx.meta || (tx.meta.err !== null && tx.meta.err !== undefined)) {
    if (tx.meta) stats.failedTransactions++;
    return { events: [], wallets: [], incomplete: null };
  }
  const slot = Number(tx.slot ?? p.slot);
  const blockTime =
    tx.blockTime === null || tx.blockTime === undefined ? null : new Date(Number(tx.blockTime) * 1000);
  const logs = tx.meta.logMessages;
  if (!logs) return { events: [], wallets: [], incomplete: 'the node returned no log messages' };
  const { items, truncated } = extractProgramData(logs, c.programId);
  let incomplete: string | null = truncated
    ? 'logs truncated by the node ("Log truncated"): later events are missing'
    : null;
  const events: IndexEvent[] = [];
  const wallets: AgentWalletEvent[] = [];
  for (const item of items) {
    if (item.index >= SOLANA_MAX_EVENTS_PER_TX) {
      incomplete = `more than ${SOLANA_MAX_EVENTS_PER_TX} events in one transaction`;
      break;
    }
    if (!item.data) {
      c.skip(p.signature, slot, item.index, 'malformed base64 in Program data');
      continue;
    }
    const d = decodeEvent(item.data);
    if (!d.ok) {
      if (!d.ignored) c.skip(p.signature, slot, item.index, d.reason);
      continue;
    }
    const pos = {
      network,
      txHash: p.signature,
      logIndex: solanaLogIndex(p.txIndex, item.index),
      blockNumber: slot,
      blockTime,
    };
    events.push(...toIndexEvents(d.event, pos));
    const wallet = toAgentWallet(d.event, pos);
    if (wallet) wallets.push(wallet);
  }
  return { events, wallets, incomplete };
}

/** Where decoding reports an event it skips (counted, warned with the hostile text escaped). */
export function decodeContextFor(
  network: string,
  programId: string,
  stats: SolanaScanStats,
  log: ScannerLogger,
): DecodeContext {
  return {
    network,
    programId,
    stats,
    skip(sig, slot, index, why) {
      stats.skippedEvents++;
      log.warn(
        `[index] ${network}: skipped an undecodable event ${JSON.stringify({
          tx: sanitizeText(sig).slice(0, 100),
          slot,
          index,
          reason: sanitizeText(why).slice(0, 300),
        })}`,
      );
    },
  };
}
