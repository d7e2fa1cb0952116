/**
 * What a pass is given (src/indexer/pass.ts `runIndexPass`) and shares with the modules that run
 * its parts (pass-start.ts, pass-batches.ts): options, hooks, the scanner type, the logger.
 */
import type { Config } from '../config.js';
import type { Database, Queryable } from '../db/database.js';
import type { EvmReads, EvmScanOptions, EvmScanStats } from './evm-scanner.js';
import type { ProgressEvent } from './progress.js';
import { defaultIndexLogger, type ChainScanner, type ScannerLogger } from './scanner.js';
import type { SolanaRpcSource, SolanaScanOptions, SolanaScanStats } from './solana-scanner.js';

export type AfterPass = (db: Database) => Promise<void>;

export type IndexLogger = ScannerLogger;

export interface BatchInfo {
  network: string;
  /** 1-based batch number within this chain's pass. */
  batch: number;
  from: number;
  to: number;
  events: number;
}

export interface PassHooks {
  /** Inside the batch transaction, after every write, before COMMIT: a throw rolls the batch back. */
  beforeCommit?: (info: BatchInfo, tx: Queryable) => Promise<void> | void;
  /** After the batch committed: a throw fails the chain (the batch stays written). */
  afterBatch?: (info: BatchInfo) => Promise<void> | void;
}

export interface RunIndexPassOptions {
  db: Database;
  config: Config;
  onProgress?: (p: ProgressEvent) => void;
  log?: IndexLogger;
  /**
   * Runs after the pass (inside the lock; skipped when the pass stopped early). The scheduler and
   * the CLI pass `refreshAfterPass` (src/after-pass.ts); absent or null: nothing runs.
   */
  afterPass?: AfterPass | null;
  /** Chains scanned at the same time. Default 4. */
  concurrency?: number;
  /** EVM scanner tuning (ranges, retries, timeouts). */
  scan?: Partial<EvmScanOptions>;
  /** Solana scanner tuning, and (tests) an injected RPC or transport instead of the chain's rpcUrl. */
  solana?: Partial<SolanaScanOptions> & SolanaRpcSource;
  hooks?: PassHooks;
  /** Only these networks (still only the enabled ones). */
  networks?: string[];
  /** Progress display: 'auto' = one updating line on a TTY, else log lines. */
  progress?: 'auto' | 'lines' | 'off';
  now?: () => Date;
  /**
   * Stops the pass at the next batch boundary (Ctrl-C, SIGTERM): the batch being written commits
   * with its checkpoint, chains not started yet are not started, the after-pass hook is skipped.
   */
  signal?: AbortSignal;
  /**
   * Batches the scanner may read ahead of the one being written (./pipeline.ts): scanning,
   * decoding and writing overlap; checkpoints still move in order. Default 2; 0: no overlap.
   */
  readAhead?: number;
  /**
   * A scan of COALESCE_MIN_BLOCKS blocks or more (a deep backfill) writes its small batches
   * coalesced into fewer, larger ones (./pipeline.ts `coalesce`). Default true; false: one write per
   * scanned batch.
   */
  coalesce?: boolean;
}

export type AnyScanner = ChainScanner & {
  stats?: EvmScanStats;
  solanaStats?: SolanaScanStats;
  reads?: EvmReads;
};

export const NO_SCANNER = 'no scanner for this chain kind yet (skipped; not counted as a failure)';

export const defaultLogger: IndexLogger = defaultIndexLogger();
