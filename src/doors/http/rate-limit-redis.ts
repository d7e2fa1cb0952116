/**
 * The rate limiter's buckets in Redis (`REDIS_URL`), so every API process behind the load balancer
 * draws from one budget per client. Same semantics as the in-process TokenBucketLimiter: `rate`
 * tokens per second refill up to `burst`, one token per request.
 *
 * One Lua script does read-refill-take-write atomically on the Redis server, using the server's
 * own TIME so all API processes share one clock (their own clocks may drift). Each bucket key
 * expires once it would be full again (burst / rate seconds), so idle buckets vanish and a missing
 * key means a full bucket.
 *
 * Redis outage: FAIL OPEN to a per-process in-process limiter. A 429 is throttling, not
 * protection of correctness; an unreachable Redis must not take the API down. While Redis is down
 * each process limits on its own (the effective budget becomes N × burst for N processes), and a
 * warning is logged at most once per minute. The connection is lazy, has no offline queue and
 * short connect/command timeouts, so a dead Redis costs a request at most `commandTimeoutMs`.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { InProcessRateLimitStore, type Budget, type RateLimitStore } from './rate-limit.js';
import { logger } from '../../log.js';

// KEYS[1] bucket; ARGV rate (tokens/s), burst, ttl (ms). Returns 1 when a token was taken.
// Timestamps are integer microseconds from TIME (exact in a Lua double until 2255).
const TAKE_SCRIPT = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local now = redis.call('TIME')
local t = tonumber(now[1]) * 1000000 + tonumber(now[2])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(b[1])
local ts = tonumber(b[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = t
end
if t > ts then
  tokens = math.min(burst, tokens + (t - ts) / 1000000 * rate)
  ts = t
end
local ok = 0
if tokens >= 1 then
  tokens = tokens - 1
  ok = 1
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'ts', string.format('%.0f', ts))
redis.call('PEXPIRE', KEYS[1], ttl)
return ok
`;
const TAKE_SHA = createHash('sha1').update(TAKE_SCRIPT).digest('hex');

interface RedisRateLimitOptions {
  url: string;
  /** Prefix of every bucket key (tests use a unique one per run). Default `repindex:rl:`. */
  keyPrefix?: string;
  connectTimeoutMs?: number;
  commandTimeoutMs?: number;
  /** Where outage warnings go (at most once per `logEveryMs`). Default: the process logger. */
  log?: (msg: string) => void;
  logEveryMs?: number;
}

export class RedisRateLimitStore implements RateLimitStore {
  readonly kind = 'redis' as const;
  readonly keyPrefix: string;
  private readonly redis: Redis;
  private readonly fallback = new InProcessRateLimitStore();
  private readonly log: (msg: string) => void;
  private readonly logEveryMs: number;
  private lastLog = -Infinity;
  private connecting: Promise<void> | null = null;
  private closed = false;
  /** Requests answered by the in-process fallback since the store was made (tests, metrics). */
  fallbacks = 0;

  constructor(opts: RedisRateLimitOptions) {
    this.keyPrefix = opts.keyPrefix ?? 'repindex:rl:';
    this.log = opts.log ?? ((m) => logger('rate-limit').warn(m));
    this.logEveryMs = opts.logEveryMs ?? 60_000;
    this.redis = new Redis(opts.url, {
      lazyConnect: true,
      enableOfflineQueue: false,
      connectTimeout: opts.connectTimeoutMs ?? 1000,
      commandTimeout: opts.commandTimeoutMs ?? 500,
      maxRetriesPerRequest: 0,
      // Keep reconnecting in the background while requests fall back in process.
      retryStrategy: (times) => Math.min(times * 200, 5000),
    });
    // Without a listener ioredis reports every failed reconnect as an unhandled 'error' event.
    this.redis.on('error', (e: Error) => this.warn(e));
  }

  async take(budget: Budget, client: string): Promise<boolean> {
    try {
      await this.ensureConnected();
      const key = `${this.keyPrefix}${budget.name}:${client}`;
      // Idle long enough to be full again: the key can go (a missing key is a full bucket).
      const ttlMs = Math.ceil((budget.burst / budget.rate) * 1000) + 1000;
      const args = [1, key, budget.rate, budget.burst, ttlMs] as const;
      let r: unknown;
      try {
        r = await this.redis.evalsha(TAKE_SHA, ...args);
      } catch (e) {
        if (!/NOSCRIPT/.test((e as Error).message)) throw e;
        r = await this.redis.eval(TAKE_SCRIPT, ...args);
      }
      return Number(r) === 1;
    } catch (e) {
      this.warn(e as Error);
      this.fallbacks += 1;
      return this.fallback.take(budget, client);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.redis.status === 'ready') {
      await this.redis.quit().catch(() => this.redis.disconnect());
    } else {
      this.redis.disconnect();
    }
  }

  /** The first request connects (lazily); later ones find it ready or fail fast. */
  private async ensureConnected(): Promise<void> {
    if (this.closed) throw new Error('rate-limit store closed');
    // Requests that arrive while the first connect is under way wait for it too.
    if (this.redis.status === 'wait') {
      this.connecting ??= this.redis.connect().finally(() => {
        this.connecting = null;
      });
    }
    if (this.connecting) await this.connecting;
  }

  private warn(e: Error): void {
    const t = Date.now();
    if (this.closed || t - this.lastLog < this.logEveryMs) return;
    this.lastLog = t;
    // The URL is never logged (it may hold a password).
    this.log(
      `[rate-limit] Redis unavailable (${e.message}); limiting in process until it is back (fail-open)`,
    );
  }
}
