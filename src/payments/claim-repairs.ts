/**
 * Claims a request had to leave behind when it lost its database, repaired by this process as soon
 * as the database answers again (journal-replay.ts runs `apply` in `serve`). Each is keyed by the
 * claim and the token the request wrote with it (`claim_token`, migration 0140), so only that
 * request's claim moves, never one another request has taken since:
 *
 *  - `release`: the request never sent the authorization to settlement (the claim's INSERT
 *    committed as the connection dropped, so the request saw an error and answered `503
 *    database_unavailable`; or the settle was refused or never sent and the release failed). Nothing
 *    was charged: the claim is dropped, and the buyer's retry settles it at once instead of
 *    answering `payment_in_flight` until PAYMENT_SETTLE_TIMEOUT_SECONDS.
 *  - `unknown`: the settle's outcome was never heard and the claim could not be marked so: it
 *    becomes `settling-unknown`, which the retry decides from the chain at once (spent → served,
 *    unspent → settled once).
 *
 * Kept in memory: a process that dies with repairs pending leaves those claims to the settle
 * timeout, as before.
 */
import type { Queryable } from '../db/database.js';
import { markOwnClaimUnknown, releaseOwnClaim, type ClaimKey } from '../store/payments.js';

export type ClaimRepair = 'release' | 'unknown';

export interface ClaimRepairs {
  /** Notes a repair to make once the database answers again. */
  add(key: ClaimKey, token: string, repair: ClaimRepair): void;
  /** Repairs still to make. */
  readonly size: number;
  /**
   * Makes every noted repair, in order; stops at the first error (that one and the rest stay
   * noted). Returns how many claims were released or marked unknown.
   */
  apply(db: Queryable): Promise<number>;
}

export function claimRepairs(): ClaimRepairs {
  const pending = new Map<string, { key: ClaimKey; token: string; repair: ClaimRepair }>();
  return {
    add(key, token, repair) {
      pending.set(`${key.join('|')}|${token}`, { key, token, repair });
    },
    get size() {
      return pending.size;
    },
    async apply(db) {
      let moved = 0;
      for (const [id, r] of [...pending]) {
        const done =
          r.repair === 'release'
            ? await releaseOwnClaim(db, r.key, r.token)
            : await markOwnClaimUnknown(db, r.key, r.token);
        pending.delete(id);
        if (done) moved += 1;
      }
      return moved;
    },
  };
}
