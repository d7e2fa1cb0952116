/**
 * What one indexing pass reports, per chain and in all: the result types, their empty and
 * not-started forms, the counters' sums, and the lines a pass logs for each chain's outcome (a
 * failed chain's line names the endpoint, the deepest cause and what to do).
 */
import type { ChainConfig } from '../chains.js';
import type { CensusResult } from '../completeness/after-scan.js';
import { redactUrls } from '../log.js';
import { recordChainPass } from '../metrics.js';
import type { EvmScanStats } from './evm-scanner.js';
import type { IngestCounts } from './ingest.js';
import { describeError } from './rpc-retry.js';
import type { ScannerLogger } from './scanner.js';
import type { SolanaScanStats } from './solana-scanner.js';

/** `stopped`: the pass was asked to stop (signal) before this chain caught up; not a failure. */
export type ChainPassStatus = 'ok' | 'failed' | 'skipped' | 'stopped';

export interface ChainPassResult {
  network: string;
  kind: string;
  status: ChainPassStatus;
  ok: boolean;
  /** The block range this pass covered (null when it did not get that far or had nothing to do). */
  from: number | null;
  to: number | null;
  head: number | null;
  /** Normalized events read from the chain this pass. */
  events: number;
  /** Rows the pass actually added (0 on a re-run). */
  inserted: IngestCounts;
  batches: number;
  millis: number;
  error?: string;
  /** For a failed chain: the endpoint tried (credentials stripped) and the deepest cause. */
  endpoint?: string;
  cause?: string;
  /** For a failed chain whose error came from the database: its SQLSTATE (the RPC is not to blame). */
  databaseCode?: string;
  scan?: EvmScanStats;
  /** The Solana scanner's figures (requests, rate limiting, gaps, incomplete transactions). */
  solana?: SolanaScanStats;
  /** The completeness census after the scan (EVM chains, CENSUS on): its outcome and the repairs it made. */
  census?: CensusResult;
  /** A range below the recorded lowest scanned block (startBlock moved earlier), scanned this pass. */
  missedRange?: { from: number; to: number };
  /** A reorg below the margin was healed at the start of this pass (ancestor null: full rescan). */
  reorg?: { mismatchAt: number; ancestor: number | null; fullRescan: boolean };
}

export type PassReport =
  | { status: 'locked'; chains: []; failed: []; millis: number }
  | {
      status: 'ok';
      chains: ChainPassResult[];
      /** Networks that failed this pass (skipped chains are not failures). */
      failed: string[];
      millis: number;
      afterPassError?: string;
      /** True when the pass stopped early on its signal. */
      stopped?: boolean;
    };

export function zeroCounts(): IngestCounts {
  return {
    ratings: 0,
    revocations: 0,
    transfers: 0,
    metadata: 0,
    revokedApplied: 0,
    responses: 0,
    documentsQueued: 0,
  };
}

export function addCounts(a: IngestCounts, b: IngestCounts): void {
  a.ratings += b.ratings;
  a.revocations += b.revocations;
  a.transfers += b.transfers;
  a.metadata += b.metadata;
  a.revokedApplied += b.revokedApplied;
  a.responses += b.responses;
  a.documentsQueued += b.documentsQueued;
}

export function notStarted(chain: ChainConfig): ChainPassResult {
  return {
    network: chain.network,
    kind: chain.kind,
    status: 'stopped',
    ok: false,
    from: null,
    to: null,
    head: null,
    events: 0,
    inserted: zeroCounts(),
    batches: 0,
    millis: 0,
  };
}

/** A chain's result before its pass: ok, nothing scanned yet. */
export function emptyChainResult(chain: ChainConfig): ChainPassResult {
  return {
    network: chain.network,
    kind: chain.kind,
    status: 'ok',
    ok: true,
    from: null,
    to: null,
    head: null,
    events: 0,
    inserted: zeroCounts(),
    batches: 0,
    millis: 0,
  };
}

/** The deepest message of an error's cause chain (e.g. `connect ECONNREFUSED 127.0.0.1:8545`). */
export function rootCause(err: unknown): string {
  let e: unknown = err;
  let deepest = describeError(err);
  for (let depth = 0; e && depth < 10; depth++) {
    const o = e as { message?: unknown; code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof o.message === 'string' && o.message.trim()) {
      deepest = describeError(e);
      if (typeof o.code === 'string' && !deepest.includes(o.code)) deepest = `${o.code}: ${deepest}`;
    }
    e = o.cause ?? (Array.isArray(o.errors) ? o.errors[0] : undefined);
  }
  return redactUrls(deepest);
}

/** What an operator can do about a chain that failed. */
function failureHint(chain: ChainConfig, databaseCode: string | undefined): string {
  if (databaseCode) {
    return (
      `the database refused a statement (SQLSTATE ${databaseCode}), not the RPC: nothing of the batch was kept and the ` +
      `chain resumes from its checkpoint on the next pass; see the database's own log if it recurs`
    );
  }
  const v = `RPC_URL_${chain.network.toUpperCase()}`;
  return (
    `set ${v} to a reachable ${chain.kind === 'solana' ? 'Solana' : 'EVM'} RPC endpoint, or override or disable the chain ` +
    `in CHAINS_FILE ({"${chain.network}": {"enabled": false}}); INDEXER_PERIOD_SECONDS=0 turns the indexer off`
  );
}

/** One line per chain: its outcome (a failed chain's is its only failure line), and its metrics. */
export function logChainOutcomes(
  results: readonly ChainPassResult[],
  chains: readonly ChainConfig[],
  log: ScannerLogger,
): void {
  for (const [i, r] of results.entries()) {
    recordChainPass(r.network, r.status, r.millis / 1000, r.events);
    const range = r.from !== null && r.to !== null ? ` blocks ${r.from}..${r.to}` : '';
    const fields = {
      chain: r.network,
      outcome: r.status,
      from: r.from,
      to: r.to,
      head: r.head,
      events: r.events,
      ratings: r.inserted.ratings,
      revocations: r.inserted.revocations,
      transfers: r.inserted.transfers,
      batches: r.batches,
      ms: r.millis,
    };
    if (r.status === 'ok' || r.status === 'stopped') {
      log.info(
        `[index] ${r.network} ${r.status}${range}, ${r.events} events, +${r.inserted.ratings} ratings, ` +
          `+${r.inserted.revocations} revocations, +${r.inserted.transfers} transfers in ${r.millis} ms` +
          (r.census ? `, census ${r.census.state}` : ''),
        { ...fields, ...(r.census ? { census: r.census.state } : {}) },
      );
    } else if (r.status === 'skipped') {
      log.info(`[index] ${r.network} skipped: ${r.error ?? ''}`, { ...fields, reason: r.error });
    } else {
      const hint = failureHint(chains[i]!, r.databaseCode);
      log.warn(
        `[index] ${r.network} failed: ${r.error ?? ''} (endpoint ${r.endpoint}; cause: ${r.cause}). Hint: ${hint}`,
        { ...fields, error: r.error, endpoint: r.endpoint, cause: r.cause, hint },
      );
    }
  }
}
