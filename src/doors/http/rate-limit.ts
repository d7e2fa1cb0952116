/**
 * Token buckets keyed per client address and budget. A request over budget is answered 429 before
 * any handler runs: nothing queried, nothing charged, no X-PAYMENT consumed.
 * Two stores behind one interface: in process (one API process, the default) and Redis
 * (`REDIS_URL`: several API processes share the buckets; see rate-limit-redis.ts).
 */
export interface Budget {
  name: string;
  /** Sustained requests per second. */
  rate: number;
  burst: number;
}

export function policyHeader(b: Budget): string {
  return `${b.rate};w=1;burst=${b.burst}`;
}

interface Bucket {
  tokens: number;
  updated: number;
}

export class TokenBucketLimiter {
  private buckets = new Map<string, Bucket>();
  private lastSweep = 0;

  constructor(private readonly now: () => number = () => Date.now()) {}

  /** Takes one token; false when the bucket is empty. */
  take(budget: Budget, client: string): boolean {
    const t = this.now();
    this.sweep(t);
    const key = `${budget.name}\u0000${client}`;
    const b = this.buckets.get(key) ?? { tokens: budget.burst, updated: t };
    b.tokens = Math.min(budget.burst, b.tokens + ((t - b.updated) / 1000) * budget.rate);
    b.updated = t;
    const ok = b.tokens >= 1;
    if (ok) b.tokens -= 1;
    this.buckets.set(key, b);
    return ok;
  }

  /** Drops buckets idle long enough to be full again, so memory stays bounded. */
  private sweep(t: number): void {
    if (t - this.lastSweep < 60_000) return;
    this.lastSweep = t;
    for (const [k, b] of this.buckets) if (t - b.updated > 60_000) this.buckets.delete(k);
  }
}

/** Where the buckets live. `take` resolves false when the client's bucket for `budget` is empty. */
export interface RateLimitStore {
  readonly kind: 'in-process' | 'redis';
  take(budget: Budget, client: string): Promise<boolean>;
  /** Releases connections (Redis); a no-op in process. */
  close(): Promise<void>;
}

/** The in-process limiter behind the store interface. */
export class InProcessRateLimitStore implements RateLimitStore {
  readonly kind = 'in-process' as const;
  constructor(private readonly limiter: TokenBucketLimiter = new TokenBucketLimiter()) {}

  take(budget: Budget, client: string): Promise<boolean> {
    return Promise.resolve(this.limiter.take(budget, client));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
