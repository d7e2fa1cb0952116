/**
 * Step 7 of the paywall, and the answer to a request that lost the race for its authorization:
 * what to do with a payment whose authorization already has a claim row (`payment_claims`).
 *
 *  - bound to another resource → 402 `payment_resource_mismatch`;
 *  - `settled` → its receipt (a racing request has just stored it), else 402 `payment_already_used`;
 *  - `settling` (another request, here or on another process, is settling it, or was when its
 *    process died or lost the database):
 *      1. this process journaled its settlement → recorded now and served (`served_on_retry`);
 *      2. the chain is asked at once (`spentOnChain`: the token's `authorizationState` and its
 *         `AuthorizationUsed` log), whatever the claim's age: spent with its transaction → the
 *         settlement is recorded (idempotent: every replica may record it, one receipt row stands)
 *         and the retry is served `200` with the receipt; spent with no transaction visible → 503
 *         `payment_spent_pending` (retry in 5 s); not spent, or not readable → today's rule:
 *         402 `payment_in_flight` (saying which) until PAYMENT_SETTLE_TIMEOUT_SECONDS, then one
 *         retry reopens it (`settling-unknown`) and goes on to verify and settle it, once;
 *  - `settling-unknown` (a settle whose outcome was never heard) → the same chain decision: spent
 *    → recorded and served; spent, no transaction → 503 `payment_spent_pending`; unspent or
 *    unreadable → the request goes on (verify, take the claim over, settle once).
 *
 * A race loser (`raceLoser`: the facilitator refused a nonce a claim holds, or the claim was
 * taken between step 7 and the claim) gets the same decision, but never goes on: in flight.
 *
 * The requests of one authorization in this process share one chain read for READ_REUSE_MS (a
 * retry storm costs the RPC at most one read a second per authorization).
 */
import { spentOnChain, type SpentOnChain } from './authorization-state.js';
import {
  receiptExpiry,
  settleTimeout,
  type Attempt,
  type Checked,
  type InFlightKnowledge,
  type PaidResponse,
} from './attempt.js';
import { recordJournaled } from './journal.js';
import { replayReceipt, serveOwed } from './receipt-answers.js';
import { logger } from '../log.js';
import { recordPayment } from '../metrics.js';
import { findClaim, recordSettlement, reopenStaleClaim } from '../store/payments.js';

/** How long a chain read that did not find the authorization spent is reused. */
const READ_REUSE_MS = 1000;

type ClaimRow = NonNullable<Awaited<ReturnType<typeof findClaim>>>;

/**
 * What a known claim decides: an answer, or go on (verify, claim, settle: step 8 onwards), with
 * what the chain said (a race loser, which never goes on, is in flight with it).
 */
type Decision = PaidResponse | { proceed: InFlightKnowledge };

/** Step 7: an authorization already claimed → decided here (see the module comment), or null. */
export async function refuseKnownClaim(a: Attempt, p: Checked): Promise<PaidResponse | null> {
  const known = await findClaim(a.ctx.db, p.claimKey, settleTimeout(a.ctx));
  if (!known) return null;
  const d = await decideClaim(a, p, known, { mayProceed: true });
  return 'proceed' in d ? null : d;
}

/**
 * A request that lost the race for its authorization (another request claimed or settled it):
 * served when the settlement is known (receipt, journal, chain), else `payment_in_flight`, never
 * `payment_already_used`. Null when no claim for this authorization exists.
 */
export async function raceLoser(a: Attempt, p: Checked): Promise<PaidResponse | null> {
  const claim = await findClaim(a.ctx.db, p.claimKey, settleTimeout(a.ctx));
  if (!claim) return null;
  // Never goes on from here: a claim that would let it (stale, or unknown and unspent) is left to
  // the retry, which takes it over.
  const d = await decideClaim(a, p, claim, { mayProceed: false });
  return 'proceed' in d ? a.inFlight(d.proceed) : d;
}

async function decideClaim(
  a: Attempt,
  p: Checked,
  known: ClaimRow,
  opts: { mayProceed: boolean },
): Promise<Decision> {
  if (known.resource !== a.resource) {
    return a.reject(
      'payment_resource_mismatch',
      'this authorization was presented for a different resource; a receipt never unlocks another resource',
    );
  }
  if (known.status === 'settled') {
    // Settled: by a request that raced this one (its receipt was stored after step 5 looked), its
    // receipt serves this header; otherwise the receipt is gone and the authorization is spent.
    return (
      (await replayReceipt(a, p)) ??
      a.reject(
        'payment_already_used',
        'this authorization has already paid one call and its receipt is no longer reusable',
      )
    );
  }
  if (known.status === 'settling') {
    const journaled = await fromJournal(a, p);
    if (journaled) return journaled;
  }
  const chain = await readChain(a, p, known.settlement_tx);
  if (chain.kind === 'spent') return recordFromChain(a, p, known, chain.tx);
  if (chain.kind === 'spent_tx_unknown') {
    logger('paywall').info(
      { outcome: 'spent_pending', network: p.claimKey[0] },
      'authorization spent on chain, its settlement transaction not visible yet',
    );
    return a.spentPending('recording');
  }
  const knowledge: InFlightKnowledge = chain.kind === 'unspent' ? 'unspent' : 'unknown';
  if (chain.kind === 'unreadable') {
    logger('paywall').warn(
      { err: chain.error, network: p.claimKey[0] },
      'could not read the authorization state on chain',
    );
  }
  if (known.status === 'settling') {
    // Today's rule: being settled elsewhere until the settle timeout. Past it, its process died
    // or lost its database before recording an outcome: one retry reopens it and goes on (the
    // facilitator's verify and the atomic claim settle it once); concurrent ones are in flight.
    if (!known.stale || !opts.mayProceed) return a.inFlight(knowledge);
    if (!(await reopenStaleClaim(a.ctx.db, p.claimKey, settleTimeout(a.ctx)))) return a.inFlight(knowledge);
  }
  if (chain.kind === 'unspent' && opts.mayProceed) {
    logger('paywall').info(
      { outcome: 'released', network: p.claimKey[0] },
      'unknown settlement found unspent on chain',
    );
    recordPayment('released');
  }
  // Unspent (or not readable): verified, the claim taken over, settled once.
  return { proceed: knowledge };
}

/** A settlement this process journaled but never recorded: recorded now, and the retry served. */
async function fromJournal(a: Attempt, p: Checked): Promise<PaidResponse | null> {
  const journal = a.ctx.journal;
  if (!journal) return null;
  const journaled = await journal.find(p.claimKey).catch((err: unknown) => {
    logger('paywall').error(
      { err: (err as Error).message, journal: journal.path },
      'could not read the settlement journal',
    );
    return undefined;
  });
  if (!journaled) return null;
  a.settled = { transaction: journaled.tx, network: journaled.network, payer: journaled.payer };
  await recordJournaled(a.ctx.db, journaled, receiptExpiry(a));
  await journal.recorded(p.claimKey).catch(() => undefined);
  logger('paywall').info(
    { outcome: 'reconciled', tx: journaled.tx, source: 'journal' },
    'settlement recorded from the journal on a retry',
  );
  recordPayment('reconciled');
  return serveOwed(a, journaled.receipt_key);
}

/**
 * The chain's answer for this authorization (`spentOnChain`; never throws), one read shared by the
 * requests of this paywall within READ_REUSE_MS; without a chain reader, `unreadable`.
 */
async function readChain(a: Attempt, p: Checked, claimTx: string | null): Promise<SpentOnChain> {
  const read = a.ctx.readAuthorization;
  if (!read) return { kind: 'unreadable', error: 'no chain reader' };
  const key = p.claimKey.join('|');
  const now = Date.now();
  for (const [k, r] of a.chainReads) if (now - r.at > READ_REUSE_MS) a.chainReads.delete(k);
  const shared = a.chainReads.get(key);
  if (shared) return shared.result;
  const [network, payer, nonce] = p.claimKey;
  const result = spentOnChain(read, { network, asset: p.requirement.asset, payer, nonce }, claimTx);
  a.chainReads.set(key, { at: now, result });
  return result;
}

/**
 * The authorization is spent on chain, with its transaction: the settlement is recorded (claim
 * `settled`, receipt row; idempotent, so every replica deciding it at once leaves one receipt) and
 * the retry is served from the receipt, no new charge.
 */
async function recordFromChain(a: Attempt, p: Checked, known: ClaimRow, tx: string): Promise<PaidResponse> {
  const [network, payer] = p.claimKey;
  const receiptKey = known.receipt_key ?? p.receiptKey;
  a.settled = { transaction: tx, network, payer };
  await recordSettlement(a.ctx.db, {
    claimKey: p.claimKey,
    receiptKey,
    resource: a.resource,
    amount: p.requirement.amount,
    tx,
    payer,
    expires: receiptExpiry(a),
    runStartedAt: null,
  });
  logger('paywall').info(
    { outcome: 'reconciled', tx, network, source: 'chain', claim: known.status },
    'authorization found spent on chain: settlement recorded, the retry is served',
  );
  recordPayment('reconciled');
  return serveOwed(a, receiptKey);
}
