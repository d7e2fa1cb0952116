/** What every HTTP handler may use. Built once per process by the server (or by a test). */
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { Config } from '../../config.js';
import type { Database } from '../../db/database.js';
import type { FacilitatorClient } from '../../payments/facilitator.js';
import type { FreeAnswerCache } from './free-cache.js';
import type { RateLimitStore } from './rate-limit.js';

export interface AppContext {
  config: Config;
  db: Database;
  /** Injectable clock (tests); defaults to Date.now. */
  now: () => Date;
  /** x402 facilitator (tests inject one); defaults to the HTTP client on `config.facilitatorUrl`. */
  facilitator?: FacilitatorClient;
  /**
   * Rate-limit buckets: Redis when REDIS_URL is set (shared by every API process), in process
   * otherwise. Absent (tests): each app made from this context keeps its own in-process buckets.
   */
  rateLimit?: RateLimitStore;
  /**
   * Precomputed free answers (free-cache.ts). Absent: each app made from this context builds its
   * own; null: every free answer is computed per request (the bench compares both).
   */
  freeCache?: FreeAnswerCache | null;
}

/**
 * Hono environment: node-server puts the socket in `incoming`. An in-process call made by a door
 * (MCP tools, A2A dispatch) carries no socket but `inProcessClient`: the rate-limit key of the
 * client whose POST started it, so the call spends from THAT client's bucket (one client, one
 * bucket, whatever the door). A call with neither (a test harness calling `app.request`) is not
 * rate limited.
 */
export type AppEnv = {
  Bindings: { incoming?: { socket?: { remoteAddress?: string } }; inProcessClient?: string };
  Variables: { client?: string };
};

export type App = OpenAPIHono<AppEnv>;
