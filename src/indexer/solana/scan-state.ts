/**
 * What a Solana scanner is told, counts and holds: its options (and their defaults), the figures
 * of a pass, and the state its steps share (SolanaScan: the chain, its RPC and the policy of its
 * calls, the figures, the database, the decoding context). Built by createSolanaScanner
 * (src/indexer/solana-scanner.ts). No I/O.
 */
import type { Address, Rpc, SolanaRpcApi } from '@solana/kit';
import type { Queryable } from '../../db/database.js';
import type { ScannerLogger } from '../scanner.js';

export interface SolanaScanOptions {
  /** Signatures per getSignaturesForAddress page (the RPC maximum is 1000): one committed batch. */
  pageLimit: number;
  /** Most requests in flight (SOLANA_RPC_CONCURRENCY); a rate-limited endpoint lowers it for a while. */
  txConcurrency: number;
  /** Timeout of every RPC call (SOLANA_RPC_TIMEOUT_MS). */
  timeoutMs: number;
  /** Attempts per request on retryable errors (timeouts, 5xx, network); 429s are not counted here. */
  maxAttempts: number;
  /** Answers 429 a request may get before the pass gives up on it. */
  maxRateLimitedAttempts: number;
  /** Longest Retry-After honoured (longer ones are capped). */
  maxRetryAfterMs: number;
  /** First backoff delay; doubles per attempt, with full jitter, capped at maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** getTransaction answers of null for a listed signature before it is recorded as a gap. */
  nullAttempts: number;
  /** Gaps retried at the start of each pass (oldest first). */
  gapRetryLimit: number;
  /**
   * Genesis hash verify() expects; default: mainnet-beta's for the network `solana`, none (any
   * cluster) for other network names. null: do not check.
   */
  expectedGenesisHash?: string | null;
}

const DEFAULT_SOLANA_SCAN_OPTIONS: SolanaScanOptions = {
  pageLimit: 1000,
  txConcurrency: 8,
  timeoutMs: 30_000,
  maxAttempts: 5,
  maxRateLimitedAttempts: 40,
  maxRetryAfterMs: 60_000,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  nullAttempts: 3,
  gapRetryLimit: 200,
};

const SOLANA_MAINNET_GENESIS = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';

export interface SolanaScanStats {
  requests: number;
  retries: number;
  signaturePages: number;
  transactions: number;
  failedTransactions: number;
  skippedEvents: number;
  /** Answers 429 received. */
  rateLimited: number;
  timeouts: number;
  /** Lowest in-flight limit the AIMD control reached (txConcurrency when never limited). */
  minConcurrency: number;
  /** Signatures recorded as gaps this pass, and gaps healed this pass. */
  gaps: number;
  gapsHealed: number;
  /** Transactions recorded as incomplete this pass. */
  incomplete: number;
  /** Most signatures held in memory at once (one page plus a held-back slot). */
  peakSignatures: number;
}

/** A Solana RPC call: `call(what, fn)` runs fn under the limiter, the timeout and the retry policy. */
export type SolanaCall = <T>(what: string, fn: (signal: AbortSignal) => Promise<T>) => Promise<T>;

/** What decoding a transaction needs: the chain, the program, the figures, where skips are reported. */
export interface DecodeContext {
  network: string;
  programId: string;
  stats: SolanaScanStats;
  skip(sig: string, slot: number, index: number, why: string): void;
}

/** One scanner's state: the chain, its RPC and the policy of its calls, the figures, the database. */
export interface SolanaScan {
  network: string;
  program: Address;
  rpc: Rpc<SolanaRpcApi>;
  call: SolanaCall;
  o: SolanaScanOptions;
  stats: SolanaScanStats;
  log: ScannerLogger;
  /** Where the cursor, gaps and incomplete transactions are read (null: no resume, no gap retries). */
  db: Queryable | null;
  decode: DecodeContext;
  /** The genesis hash verify() expects (null: any cluster). */
  expectedGenesis: string | null;
}

/** The options given over the defaults (an undefined value keeps the default). */
export function solanaOptions(opts: Partial<SolanaScanOptions>): SolanaScanOptions {
  const o: SolanaScanOptions = { ...DEFAULT_SOLANA_SCAN_OPTIONS };
  for (const [k, v] of Object.entries(opts))
    if (v !== undefined) (o as unknown as Record<string, unknown>)[k] = v;
  return o;
}

/** The genesis hash to expect: the option's, else mainnet-beta's for `solana`, else none. */
export function expectedGenesisOf(network: string, o: SolanaScanOptions): string | null {
  if (o.expectedGenesisHash !== undefined) return o.expectedGenesisHash;
  return network === 'solana' ? SOLANA_MAINNET_GENESIS : null;
}

export function emptyStats(minConcurrency: number): SolanaScanStats {
  return {
    requests: 0,
    retries: 0,
    signaturePages: 0,
    transactions: 0,
    failedTransactions: 0,
    skippedEvents: 0,
    rateLimited: 0,
    timeouts: 0,
    minConcurrency,
    gaps: 0,
    gapsHealed: 0,
    incomplete: 0,
    peakSignatures: 0,
  };
}
