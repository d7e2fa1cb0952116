/**
 * Every Solana RPC call under one policy: at most a bounded, adaptive number in flight (Limiter,
 * AIMD), a timeout per call, retries with exponential backoff and jitter on timeouts, 5xx, network
 * and server-side JSON-RPC errors (maxAttempts), and HTTP 429 handled apart: Retry-After is
 * honoured (every caller pauses), the calls in flight halve, and 429s count against
 * maxRateLimitedAttempts only.
 */
import { recordRpcError } from '../../metrics.js';
import {
  backOffBeforeRetry,
  backoffDelay,
  classifySolanaError,
  retryAfterMs,
  sleep,
  withTimeout,
} from '../rpc-retry.js';
import type { ScannerLogger } from '../scanner.js';
import type { SolanaCall, SolanaScanOptions, SolanaScanStats } from './scan-state.js';

export /**
 * Calls in flight: at most `limit` (1..max); halved on a 429 (with a pause of Retry-After for
 * every caller), grown by one after `limit` successes in a row (AIMD).
 */
class Limiter {
  inFlight = 0;
  limit: number;
  minLimit: number;
  private pausedUntil = 0;
  private streak = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly max: number) {
    this.limit = Math.max(1, max);
    this.minLimit = this.limit;
  }

  async acquire(): Promise<void> {
    for (;;) {
      const wait = this.pausedUntil - Date.now();
      if (wait > 0) {
        await sleep(wait);
        continue;
      }
      if (this.inFlight < this.limit) {
        this.inFlight++;
        return;
      }
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  release(): void {
    this.inFlight--;
    const w = this.waiters;
    this.waiters = [];
    for (const wake of w) wake();
  }

  succeeded(): void {
    if (this.limit >= this.max) return;
    if (++this.streak >= this.limit) {
      this.streak = 0;
      this.limit++;
    }
  }

  limited(pauseMs: number): void {
    this.limit = Math.max(1, Math.floor(this.limit / 2));
    this.minLimit = Math.min(this.minLimit, this.limit);
    this.streak = 0;
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + pauseMs);
  }
}

/**
 * The retry policy of every Solana call: fatal errors at once; 429s pause every caller
 * (Retry-After, else backoff), halve the calls in flight and count against maxRateLimitedAttempts
 * only; other errors back off with jitter up to maxAttempts.
 */
export function solanaCaller(
  network: string,
  o: SolanaScanOptions,
  limiter: Limiter,
  stats: SolanaScanStats,
  log: ScannerLogger,
): SolanaCall {
  return async function call<T>(what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let attempt = 0;
    let limitedCount = 0;
    for (;;) {
      await limiter.acquire();
      stats.requests++;
      let err: unknown;
      try {
        const v = await withTimeout(what, o.timeoutMs, fn);
        limiter.succeeded();
        return v;
      } catch (e) {
        err = e;
      } finally {
        limiter.release();
      }
      const kind = classifySolanaError(err);
      recordRpcError(network, kind);
      if (kind === 'fatal') throw err;
      if (kind === 'rate_limited') {
        stats.rateLimited++;
        if (++limitedCount >= o.maxRateLimitedAttempts) throw err;
        const hinted = retryAfterMs(err);
        const pause = Math.min(o.maxRetryAfterMs, hinted ?? backoffDelay(Math.min(limitedCount, 10), o));
        limiter.limited(pause);
        stats.minConcurrency = Math.min(stats.minConcurrency, limiter.minLimit);
        stats.retries++;
        log.debug?.(
          `[index] ${network}: ${what}: rate limited (429); pausing ${pause} ms${hinted !== null ? ' (Retry-After)' : ''}, ` +
            `${limiter.limit} in flight from now`,
          { chain: network, call: what, pause_ms: pause, in_flight_limit: limiter.limit, kind },
        );
        continue; // acquire() waits out the pause
      }
      if (kind === 'timeout') stats.timeouts++;
      if (++attempt >= o.maxAttempts) throw err;
      stats.retries++;
      await backOffBeforeRetry(log, network, what, err, attempt, kind, o);
    }
  };
}
