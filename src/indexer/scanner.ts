/**
 * The chain-kind-neutral scanner interface. A scanner (EVM today, Solana later) turns a block (or
 * slot) range into NORMALIZED events; the shared ingest (ingest.ts) writes them with the chain's
 * checkpoint in one transaction. Normalized means: addresses as the chain spells them (EVM ones
 * lower-cased), agent ids and counters as decimal strings, every chain string already made safe
 * for PostgreSQL TEXT (see sanitizeText), block times from the chain's own clock. The event types
 * are src/index-events.ts, shared with the store that writes them.
 */

import type { Queryable } from '../db/database.js';
import { logger } from '../log.js';

import type { IndexEvent } from '../index-events.js';

/**
 * One contiguous, fully scanned range [from, to] and every event in it; or (advance: false) a
 * part of the work that does not complete a range in order (a page of a backwards walk, healed
 * gaps): its events are written but the checkpoint stays where it is.
 */
export interface ScanBatch {
  from: number;
  to: number;
  events: IndexEvent[];
  /** Default true: the checkpoint moves to `to` with this batch. */
  advance?: boolean;
  /** The scanner's own state, written in the batch's transaction (cursor, gaps). */
  persist?: (tx: Queryable) => Promise<void>;
}

export interface ChainScanner {
  readonly network: string;
  /**
   * Checks that the endpoint serves the configured chain (throws with a clear message otherwise).
   */
  verify(): Promise<void>;
  /**
   * The hash of a block as the chain has it now (null: the chain has no such block). Optional:
   * a scanner without it (Solana: finalized slots only) gets no deep-reorg check.
   */
  blockHash?(block: number): Promise<string | null>;
  /** The chain's current head block (slot), before any confirmation margin. */
  head(): Promise<number>;
  /** The first block worth scanning when neither the config nor the database knows it. */
  discoverStartBlock(head: number): Promise<number>;
  /**
   * Scans [from, to], yielding batches whose advancing ones (advance !== false) are contiguous
   * and cover the range exactly, in order; non-advancing batches may come between them. The
   * scanner chooses the batch sizes (adaptive ranges) and owns retries; an error it gives up on
   * is thrown out of the iterator.
   */
  scan(from: number, to: number): AsyncIterable<ScanBatch>;
}

// ------------------------------------------------------------------ shared normalization helpers

// eslint-disable-next-line no-control-regex -- NUL is exactly what must go
const NUL_RE = /\u0000/g;
const LONE_SURROGATE_RE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Makes a hostile chain string storable in PostgreSQL TEXT: NUL (rejected by PostgreSQL) and lone
 * surrogates (not encodable as UTF-8) become U+FFFD, the same mark an invalid UTF-8 sequence gets
 * when the bytes are decoded. Everything else (quotes, `<script>`, very long text) is kept intact:
 * escaping is the renderer's job.
 */
export function sanitizeText(s: string): string {
  return s.replace(NUL_RE, '\uFFFD').replace(LONE_SURROGATE_RE, '\uFFFD');
}

/** Caps a string that is part of a database key (btree entries are limited to ~2.7 kB). */
export function capKeyText(s: string, maxChars: number): string {
  return s.length <= maxChars ? s : s.slice(0, maxChars);
}

/** Exact decimal string of raw / 10^decimals (trailing fractional zeros trimmed). */
export function scaleDecimal(raw: bigint, decimals: number): string {
  if (!Number.isInteger(decimals) || decimals < 0) throw new RangeError(`bad decimals ${decimals}`);
  const negative = raw < 0n;
  const abs = negative ? -raw : raw;
  if (decimals === 0) return (negative ? '-' : '') + abs.toString();
  const digits = abs.toString().padStart(decimals + 1, '0');
  const int = digits.slice(0, digits.length - decimals);
  const frac = digits.slice(digits.length - decimals).replace(/0+$/, '');
  const body = frac ? `${int}.${frac}` : int;
  return negative && body !== '0' ? `-${body}` : body;
}

/** Structured fields of a log line (chain, block range, cause, …). */
type LogFields = Record<string, unknown>;

/**
 * Where the indexer's lines go. The default is the process logger (src/log.ts); tests pass a
 * collecting one. `debug` (retries, range changes) is optional: a logger without it drops them.
 */
export interface ScannerLogger {
  info(line: string, fields?: LogFields): void;
  warn(line: string, fields?: LogFields): void;
  debug?(line: string, fields?: LogFields): void;
}

/** The indexer's default logger: the `index` component of the process logger. */
export function defaultIndexLogger(): ScannerLogger {
  return {
    info: (l, f) => logger('index').info(f ?? {}, l),
    warn: (l, f) => logger('index').warn(f ?? {}, l),
    debug: (l, f) => logger('index').debug(f ?? {}, l),
  };
}
