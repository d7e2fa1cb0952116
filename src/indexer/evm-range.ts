/**
 * The EVM scanner's options and figures, and its adaptive getLogs range: start at
 * `initialRange`, narrow on "range too large" / response-size / "too many results" errors and on
 * timeouts (to what the error suggests, else half), double again (up to `maxRange` and a named
 * limit) after a success that returned few logs.
 */
import type { RangeHint } from './rpc-retry.js';

export interface EvmScanOptions {
  /**
   * The scanner's first getLogs window of a deep scan, in blocks, when narrower than
   * `initialRange` (null: none): a scan of more than 8 x this many blocks opens narrow and grows x8
   * per answer of few logs back to `initialRange` (see AdaptiveRange.open), so that a backfill of a
   * dense chain on a node without a range limit does not begin with one window of the whole chain
   * (280 MB built whole before its refusal at 200,000 feedback). It opens only on a node that
   * serves a first window wider than `initialRange` (asked with a filter that matches nothing:
   * ./evm-scanner.ts `probeRangeLimit`): through a range-capped endpoint the refusal of that probe
   * sets the width at once, where a narrow opening asked more windows than the refusal costs.
   */
  openingRange: number | null;
  /** The getLogs range after the opening, in blocks. */
  initialRange: number;
  /** Ranges grow back (x2) up to this after successes. */
  maxRange: number;
  /** Ranges never grow after a response with this many logs or more (keeps batches moderate). */
  growBelowLogs: number;
  /** Attempts per request on retryable errors (429, 5xx, network, timeouts at the minimum range). */
  maxAttempts: number;
  /** First backoff delay; doubles per attempt, with full jitter, capped at maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Per-request timeout. */
  timeoutMs: number;
  /** Longest wait a 429's Retry-After may impose before a retry. */
  maxRetryAfterMs: number;
  /**
   * eth_getBlockByNumber requests in flight when logs carry no timestamp (sent as JSON-RPC batches
   * of at most 10: 20 is two batches).
   */
  blockConcurrency: number;
  /** Cached block timestamps per scanner (one scanner lives for one pass). */
  blockCacheSize: number;
  /** The largest JSON-RPC answer read, in bytes (viem's own default); a larger one is a range error. */
  maxResponseBytes: number;
}

export const DEFAULT_EVM_SCAN_OPTIONS: EvmScanOptions = {
  openingRange: 32,
  initialRange: 10_000,
  maxRange: 100_000,
  growBelowLogs: 2_000,
  maxAttempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  timeoutMs: 30_000,
  maxRetryAfterMs: 60_000,
  blockConcurrency: 20,
  blockCacheSize: 50_000,
  maxResponseBytes: 10 * 1024 * 1024,
};

/**
 * The range to ask after an answer refused for its size (viem's ResponseBodyTooLargeError, here or
 * in the error's causes) whose full size was known: the node sent a Content-Length (reth and most
 * providers do), so viem refused it before reading a byte. The next window is the share of this
 * one that fits, with a margin (density varies): one refusal instead of a halving per refusal,
 * each of them an answer the node built whole. An answer refused while it was being read (no
 * Content-Length: `size` barely above the limit) says nothing more than "too large": null, the
 * caller halves.
 */
export function sizeHint(err: unknown, from: number, span: number): RangeHint | null {
  let e: unknown = err;
  for (let depth = 0; e && depth < 8; depth++) {
    const o = e as { name?: unknown; size?: unknown; maxSize?: unknown; cause?: unknown };
    if (
      o.name === 'ResponseBodyTooLargeError' &&
      typeof o.size === 'number' &&
      typeof o.maxSize === 'number'
    ) {
      if (!(o.maxSize > 0) || o.size < 2 * o.maxSize) return null;
      const width = Math.max(1, Math.floor((span * o.maxSize * 0.8) / o.size));
      return width < span ? { from, to: from + width - 1 } : null;
    }
    e = o.cause;
  }
  return null;
}

/** What the scanner did, for the pass report and tests. */
export interface EvmScanStats {
  requests: number;
  retries: number;
  halvings: number;
  /** Range changes taken from the error's own suggestion (a named range or a named limit). */
  suggested: number;
  /** The width limit a node named ("limited to a 10,000 range"): ranges never grow above it. */
  ceiling: number | null;
  minRange: number;
  lastRange: number;
  /** The widest range the node served (a census repair's later rounds use narrower windows). */
  widest: number;
  skippedLogs: number;
  blockFetches: number;
  /** Answers checked against their parts, answers proven cut, the smallest cut count (./log-caps.ts). */
  capChecks: number;
  truncations: number;
  cap: number | null;
  /** One-block windows read from their receipts. */
  denseBlocks: number;
}

/** A getLogs request the node refused as too wide (or timed out on): the caller narrows it. */
export class RangeTooWide extends Error {
  constructor(readonly original: unknown) {
    super('range too wide');
  }
}

export function emptyStats(o: EvmScanOptions): EvmScanStats {
  return {
    requests: 0,
    retries: 0,
    halvings: 0,
    suggested: 0,
    ceiling: null,
    minRange: o.initialRange,
    lastRange: o.initialRange,
    widest: 0,
    skippedLogs: 0,
    blockFetches: 0,
    capChecks: 0,
    truncations: 0,
    cap: null,
    denseBlocks: 0,
  };
}

/**
 * The getLogs range: when a range is too wide, the range the error suggests (a named range, or a
 * named limit that also becomes a ceiling the range never grows above), else half; doubled again
 * (up to maxRange and the ceiling) after a success with few logs (after a shrink, only after three
 * successes in a row).
 */
export class AdaptiveRange {
  width: number;
  private streak = 0;
  private shrunk = false;
  /** The count of the last window trimmed after a check (see trimAfterCheck). */
  private checked: number | null = null;
  /** While opening (see open): the width the opening grows back to. */
  private opening: number | null = null;

  constructor(
    private readonly o: EvmScanOptions,
    private readonly stats: EvmScanStats,
  ) {
    this.width = Math.max(1, Math.min(o.initialRange, o.maxRange));
  }

  /**
   * The scan opens at `width` blocks when that is narrower than the current width: the next
   * windows grow x8 after each answer of fewer than an eighth of `growBelowLogs` logs (the same
   * expected answer as a x2 growth after half of it), back to the current width; the first answer
   * with more logs, a refusal or a check ends the opening and the usual rule applies. It costs a
   * sparse chain two or three more requests per pass (32, 256, 2,048 blocks, then 10,000) and
   * saves a dense one a first answer of the whole range, which a node without a response limit
   * builds whole (280 MB at 200,000 feedback in 1,387 blocks) before it is refused for its size.
   */
  open(width: number): void {
    const w = Math.max(1, width);
    if (w >= this.width) return;
    this.opening = this.width;
    this.width = w;
    this.stats.lastRange = w;
  }

  /**
   * A request over `span` blocks was too wide: the next one covers what the error suggests when
   * that is narrower, else half. Returns the new width.
   */
  shrink(span: number, hint: RangeHint): number {
    if (hint.limit !== undefined && hint.limit < span) {
      this.stats.ceiling = Math.min(this.stats.ceiling ?? hint.limit, hint.limit);
      return this.set(hint.limit, true);
    }
    if (hint.from !== undefined && hint.to !== undefined && hint.to - hint.from + 1 < span) {
      return this.set(hint.to - hint.from + 1, true);
    }
    this.stats.halvings++;
    return this.set(Math.floor(span / 2), false);
  }

  private set(width: number, suggested: boolean): number {
    const next = Math.max(1, width);
    this.opening = null;
    if (suggested) this.stats.suggested++;
    this.stats.minRange = Math.min(this.stats.minRange, next);
    this.width = next;
    this.stats.lastRange = next;
    this.streak = 0;
    this.shrunk = true;
    return next;
  }

  /**
   * A full-width window's answer of `logs` logs reached the largest count seen, was checked
   * against its parts (./log-caps.ts) and found whole. At the range's plateau (where it would not
   * double anyway: `logs` at least half of `growBelowLogs`, or a doubled window above `maxRange` or
   * the named ceiling) the next windows are an eighth narrower, so that at the same density they
   * hold fewer logs than that count and need no check, and the range grows again only after an
   * answer of less than half that count (a doubled window would reach it). Without it a chain
   * whose windows all hold the same number of logs (a steady stream of events) pays two extra
   * requests for every window. Below the plateau a check trims nothing and pins nothing: the range
   * goes on growing (an opening goes on x8), since there a doubled window's larger count is the
   * way to the plateau, and a trim there kept a narrow opening's windows narrow for a whole scan
   * (the cold start at scale 0.01: 605 getLogs on bsc instead of 84). Which answers are checked
   * does not change (any answer that reaches the count still is), only which windows are asked. A
   * window clipped by the end of the scan, or of one block, trims nothing.
   */
  trimAfterCheck(span: number, logs: number): void {
    if (span !== this.width || span < 2) return;
    if (!this.atPlateau(span, logs)) return;
    this.opening = null;
    this.width = Math.max(1, span - Math.max(1, Math.floor(span / 8)));
    this.checked = Math.max(this.checked ?? 0, logs);
    this.stats.lastRange = this.width;
  }

  /**
   * Whether a window of `span` blocks and `logs` logs is about as wide as the range gets: the node
   * refused a wider one (a named limit, a suggested range, a size or a timeout), a doubled window
   * would pass `maxRange` or the named ceiling, or hold about `growBelowLogs` logs.
   */
  atPlateau(span: number, logs: number): boolean {
    const top = Math.min(this.o.maxRange, this.stats.ceiling ?? Infinity);
    return this.shrunk || logs * 2 >= this.o.growBelowLogs || span * 2 > top;
  }

  /** A request succeeded with `logs` logs. */
  succeeded(logs: number): void {
    if (this.opening !== null) {
      const target = this.opening;
      if (logs * 8 < this.o.growBelowLogs && this.stats.cap === null) {
        this.width = Math.min(target, this.width * 8);
        if (this.width >= target) this.opening = null;
        this.stats.lastRange = this.width;
        return;
      }
      this.opening = null;
    }
    this.streak++;
    const top = Math.min(this.o.maxRange, this.stats.ceiling ?? Infinity);
    // Behind a proven cap (or after a trim), ranges grow only while answers stay well below it.
    const cap = this.stats.cap;
    const few =
      logs < this.o.growBelowLogs &&
      (cap === null || logs * 2 < cap) &&
      (this.checked === null || logs * 2 < this.checked);
    if (few && this.width < top && this.streak >= (this.shrunk ? 3 : 1)) {
      this.width = Math.min(top, this.width * 2);
      this.streak = 0;
    }
    this.stats.lastRange = this.width;
  }
}
