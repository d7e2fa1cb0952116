/**
 * The Solana scanner (@solana/kit): slots play the role of blocks.
 *
 * Backfill (scan(from, to)) is a bounded WALK over `getSignaturesForAddress(programId)`, newest to
 * oldest, one page (pageLimit signatures) at a time: each page's complete slots are fetched
 * (`getTransaction`, a bounded and adaptive number in flight), decoded and handed over as one
 * batch together with the walk's cursor (table solana_scan_cursor: the oldest signature written),
 * so the pass commits them in one transaction. Such batches do not move the chain's checkpoint;
 * the last one (the walk reached `from`, or the start of the program's history) moves it to `to`
 * and deletes the cursor. Memory holds one page, never the history; a crash resumes the walk
 * below the cursor's signature; a first pass lists the history once (no start-block discovery).
 *
 * Order inside a slot: `getSignaturesForAddress` lists a slot's transactions in block order
 * (newest first). A page's trailing slot may continue on the next page, so it is held back until
 * the slot is complete; then every transaction gets its index among the program's transactions of
 * the slot (oldest first, failed ones counted), and every event the position
 * (slot, tx index, event index) packed by solanaLogIndex.
 *
 * Faults that heal:
 *  - every call has a timeout (timeoutMs, AbortSignal) and is retried with exponential backoff and
 *    jitter on timeouts, 5xx, network and server-side JSON-RPC errors (maxAttempts);
 *  - HTTP 429: Retry-After is honoured (all calls pause), the number of calls in flight halves
 *    (AIMD: it grows back by one after a window of successes), and 429s do not use up maxAttempts
 *    (maxRateLimitedAttempts bounds them): a pass over a limited endpoint slows down;
 *  - `getTransaction` → null for a listed signature (nullAttempts times): recorded as a gap
 *    (scan_gaps, with its position), the checkpoint moves on, later passes retry the gaps first;
 *  - "Log truncated": the events before the cut are kept and the transaction is recorded in
 *    incomplete_transactions.
 * Failed transactions (err) are skipped; an event that does not decode is skipped with an escaped
 * warning. Event identity: tx hash = the signature (base58), block number = the slot, block time =
 * the transaction's blockTime (null when the node has none).
 *
 * Responses (ResponseAppended): every batch writes its agent wallet changes (WalletUpdated,
 * WalletResetOnOwnerSync) and classes its responses, and the later responses of the agents it
 * transfers or changes the wallet of, by history (`owner`: the agent's owner at the response's
 * position, `operator`: the agent wallet in force there, else `third_party`), since the walk writes
 * a response before the older transfers and wallet changes that decide its class.
 * Only finalized slots are read: there is no reorg to roll back.
 *
 * The parts, in src/indexer/solana/: scan-state.ts (options, figures, the state the steps share),
 * rpc-calls.ts (the limiter and the retry policy of every call), signature-walk.ts (the walk and its
 * resume), slot-order.ts (complete slots, positions, log_index), transaction-fetch.ts (getTransaction
 * in flight, nulls as gaps), transaction-decode.ts (one transaction's events), batches.ts (what each
 * batch writes, the responders classed by history); the event decoding: program-logs.ts,
 * program-events.ts over borsh.ts, normalize.ts.
 */
import {
  address,
  createSolanaRpc,
  createSolanaRpcFromTransport,
  type Rpc,
  type RpcTransport,
  type SolanaRpcApi,
} from '@solana/kit';
import type { ChainConfig } from '../chains.js';
import type { Queryable } from '../db/database.js';
import {
  defaultIndexLogger,
  sanitizeText,
  type ChainScanner,
  type ScanBatch,
  type ScannerLogger,
} from './scanner.js';
import { retryGaps } from './solana/batches.js';
import { Limiter, solanaCaller } from './solana/rpc-calls.js';
import {
  emptyStats,
  expectedGenesisOf,
  solanaOptions,
  type SolanaScan,
  type SolanaScanOptions,
  type SolanaScanStats,
} from './solana/scan-state.js';
import { walkOrResume } from './solana/signature-walk.js';
import { decodeContextFor } from './solana/transaction-decode.js';

export type { SolanaScanOptions, SolanaScanStats } from './solana/scan-state.js';

/** Injection points: a ready RPC or a transport (tests), and the database for the walk's state. */
export interface SolanaRpcSource {
  rpc?: Rpc<SolanaRpcApi>;
  transport?: RpcTransport;
}

interface SolanaScannerDeps extends SolanaRpcSource {
  /** Where the cursor, gaps and incomplete transactions are read (without it: no resume, no gap retries). */
  db?: Queryable;
}

/** Fails when the endpoint serves another cluster than the expected one. */
async function verifyGenesis(s: SolanaScan): Promise<void> {
  const genesis = await s.call('getGenesisHash', (abortSignal) =>
    s.rpc.getGenesisHash().send({ abortSignal }),
  );
  if (s.expectedGenesis && genesis !== s.expectedGenesis)
    throw new Error(
      `${s.network}: the RPC endpoint serves genesis ${sanitizeText(String(genesis)).slice(0, 64)}, expected ${s.expectedGenesis} (wrong cluster?)`,
    );
}

/** The latest finalized slot. */
async function finalizedSlot(s: SolanaScan): Promise<number> {
  return Number(
    await s.call('getSlot', (abortSignal) =>
      s.rpc.getSlot({ commitment: 'finalized' }).send({ abortSignal }),
    ),
  );
}

// ------------------------------------------------------------------ the scanner

export function createSolanaScanner(
  chain: ChainConfig,
  opts: Partial<SolanaScanOptions> = {},
  log: ScannerLogger = defaultIndexLogger(),
  deps: SolanaScannerDeps = {},
): ChainScanner & { solanaStats: SolanaScanStats } {
  const o = solanaOptions(opts);
  if (!chain.programId) throw new Error(`chain "${chain.network}" has no programId`);
  const network = chain.network;
  const limiter = new Limiter(o.txConcurrency);
  const stats = emptyStats(limiter.limit);
  const s: SolanaScan = {
    network,
    program: address(chain.programId),
    rpc:
      deps.rpc ??
      (deps.transport ? createSolanaRpcFromTransport(deps.transport) : createSolanaRpc(chain.rpcUrl)),
    call: solanaCaller(network, o, limiter, stats, log),
    o,
    stats,
    log,
    db: deps.db ?? null,
    decode: decodeContextFor(network, chain.programId, stats, log),
    expectedGenesis: expectedGenesisOf(network, o),
  };
  return {
    network,
    solanaStats: stats,
    verify: () => verifyGenesis(s),
    head: () => finalizedSlot(s),
    /**
     * No listing here: the walk of the first pass goes down to the program's oldest signature
     * itself (and records it as the start block), so the history is listed once.
     */
    discoverStartBlock: async () => 0,
    async *scan(from: number, to: number): AsyncIterable<ScanBatch> {
      if (from > to) return;
      yield* retryGaps(s);
      yield* walkOrResume(s, from, to);
    },
  };
}
