/**
 * What every HTTP handler may use (`AppContext`), built once per process by the server (or by a
 * test), and the door's Hono types (declared in env.ts, re-exported here).
 */
import type { Config } from '../../config.js';
import type { Database } from '../../db/database.js';
import type { FacilitatorClient } from '../../payments/facilitator.js';
import type { SettlementJournal } from '../../payments/journal.js';
import type { AuthorizationReader } from '../../payments/authorization-state.js';
import type { ClaimRepairs } from '../../payments/claim-repairs.js';
import type { FreeAnswerCache } from './free-cache.js';
import type { RateLimitStore } from './rate-limit.js';

export interface AppContext {
  config: Config;
  db: Database;
  /** Injectable clock (tests); defaults to Date.now. */
  now: () => Date;
  /** x402 facilitator (tests inject one); defaults to the HTTP client on `config.facilitatorUrl`. */
  facilitator?: FacilitatorClient;
  /** The settlement journal (`serve`: PAYMENT_JOURNAL); absent in most tests (see the paywall). */
  journal?: SettlementJournal | null;
  /** Reads an authorization's state on chain (`serve`: through the network's RPC; tests inject one). */
  readAuthorization?: AuthorizationReader;
  /** Claims left behind by a request that lost the database, repaired once it answers (`serve`). */
  claimRepairs?: ClaimRepairs;
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

export type { App, AppEnv } from './env.js';
