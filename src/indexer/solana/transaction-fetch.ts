/**
 * Fetching a page's Solana transactions: `getTransaction` for each positioned signature,
 * txConcurrency workers at a time (each call under the limiter and retry policy of rpc-calls.ts),
 * decoded in order. A listed signature the node answers null for (nullAttempts times) becomes a gap
 * (scan_gaps, with its position) that later passes retry first; a served one heals its gap.
 */
import { signature as toSignature } from '@solana/kit';
import type { IncompleteTransaction, ScanGap } from '../../store/solana-scan.js';
import type { AgentWalletEvent, IndexEvent } from '../../index-events.js';
import { backoffDelay, sleep } from '../rpc-retry.js';
import type { SolanaScan } from './scan-state.js';
import { positionSignatures, type PositionedSig, type SigInfo } from './slot-order.js';
import { decodeTransaction, type Decoded, type TxView } from './transaction-decode.js';

type Gap = ScanGap;
type Incomplete = IncompleteTransaction;

/** What one page of transactions gave: events, and the state to write with them. */
export interface Fetched {
  events: IndexEvent[];
  /** Agent wallet changes (written by persistFetched, not by the shared ingest). */
  wallets: AgentWalletEvent[];
  gaps: Gap[];
  healed: string[];
  incomplete: Incomplete[];
}

/** The transaction, or null when the node does not serve it after `tries` answers of null. */
async function fetchTx(s: SolanaScan, sig: string, tries: number): Promise<TxView | null> {
  for (let attempt = 1; ; attempt++) {
    const tx = await s.call(`getTransaction ${sig.slice(0, 16)}…`, (abortSignal) =>
      s.rpc
        .getTransaction(toSignature(sig), {
          commitment: 'finalized',
          encoding: 'json',
          maxSupportedTransactionVersion: 0,
        })
        .send({ abortSignal }),
    );
    if (tx) return tx as unknown as TxView;
    if (attempt >= tries) return null;
    await sleep(backoffDelay(attempt, s.o));
  }
}

/** Fetches and decodes positioned transactions, in order (null: not served), txConcurrency at a time. */
async function fetchAndDecode(
  s: SolanaScan,
  sigs: readonly PositionedSig[],
  tries: number,
): Promise<(Decoded | null)[]> {
  const results: (Decoded | null)[] = new Array(sigs.length);
  let next = 0;
  const worker = async () => {
    while (next < sigs.length) {
      const i = next++;
      const sig = sigs[i]!;
      const tx = await fetchTx(s, sig.signature, tries);
      results[i] = tx ? decodeTransaction(sig, tx, s.decode) : null;
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, s.o.txConcurrency), sigs.length) }, worker));
  return results;
}

/** Sorts decoded transactions into events, gaps (not served), healed signatures and incomplete ones. */
function collectFetched(s: SolanaScan, sigs: readonly PositionedSig[], results: (Decoded | null)[]): Fetched {
  const out: Fetched = { events: [], wallets: [], gaps: [], healed: [], incomplete: [] };
  for (const [i, r] of results.entries()) {
    const sig = sigs[i]!;
    if (!r) {
      out.gaps.push({ signature: sig.signature, slot: sig.slot, txIndex: sig.txIndex });
      continue;
    }
    out.healed.push(sig.signature);
    for (const e of r.events) out.events.push(e);
    for (const w of r.wallets) out.wallets.push(w);
    if (r.incomplete) {
      s.stats.incomplete++;
      out.incomplete.push({
        signature: sig.signature,
        slot: sig.slot,
        reason: r.incomplete,
        eventsKept: r.events.length,
      });
      s.log.warn(
        `[index] ${s.network}: transaction ${sig.signature} (slot ${sig.slot}) is incomplete: ${r.incomplete}; ` +
          `${r.events.length} events kept, recorded in incomplete_transactions`,
        {
          chain: s.network,
          tx: sig.signature,
          slot: sig.slot,
          reason: r.incomplete,
          events_kept: r.events.length,
        },
      );
    }
  }
  return out;
}

export async function fetchAll(
  s: SolanaScan,
  sigs: readonly PositionedSig[],
  tries: number,
): Promise<Fetched> {
  return collectFetched(s, sigs, await fetchAndDecode(s, sigs, tries));
}

/** Fetches a page's complete slots; the transactions not served are counted and warned as gaps. */
export async function fetchPage(s: SolanaScan, ready: readonly SigInfo[]): Promise<Fetched> {
  const f = await fetchAll(s, positionSignatures(ready, s.stats), s.o.nullAttempts);
  s.stats.gaps += f.gaps.length;
  for (const g of f.gaps)
    s.log.warn(
      `[index] ${s.network}: the node did not serve transaction ${g.signature} (slot ${g.slot}); recorded as a gap, retried on later passes`,
      { chain: s.network, tx: g.signature, slot: g.slot },
    );
  return f;
}
