/**
 * The x402 paywall in front of every metered route. Order (the contract's "Paid request lifecycle"):
 *
 *  1. TREASURY_ADDRESS unset → 503 `payments_not_configured` (nothing can be quoted without payTo).
 *  2. `X-PAYMENT` and x402 v2 `PAYMENT-SIGNATURE` both sent with different values → 400
 *     `conflicting_payment_headers` (neither silently wins).
 *  3. No payment header → 402 challenge, BEFORE any validation or query.
 *  4. Header too large / not base64 / not JSON / wrong shape → 402 `invalid_payment_header`.
 *  5. Receipt reuse: sha256(header + "\n" + canonical resource), unexpired → the EXACT bytes (and
 *     status) of the answer that was paid for, stored with the receipt: no query re-runs, nothing
 *     is written, `X-Payment-Reused: true`; not counted against MAX_CONCURRENT_PAID_RUNS (no
 *     handler runs). A receipt whose paid run never stored its answer (that run failed after
 *     settling, or the settlement was recorded later from the journal or the chain) owes it: the
 *     handler runs once, under a lease, in a paid-run slot like a first run (step 8's cap: full →
 *     503 `paid_capacity_exhausted` naming the receipt; the retry of the same header is served).
 *  6. Local checks, no network (src/payments/exact-checks.ts): the payload's `resource` and every
 *     field of `accepted` must match this request's requirement for that network, the signed
 *     authorization must pay exactly the amount to the treasury → else 402
 *     `payment_requirements_mismatch`; the EIP-3009 typed-data signature
 *     (`invalid_payment_signature`). The time window (`payment_expired`, `payment_not_yet_valid`)
 *     is checked right after step 7: a retry of an authorization that moved money is served even
 *     once its validBefore has passed (its claim decides it); one that did not is refused.
 *  7. The authorization's claim row, if any (src/payments/claim-decision.ts): bound to another
 *     resource → 402 `payment_resource_mismatch`; already paid → its receipt when a request racing
 *     this one has just stored it, else 402 `payment_already_used`; being settled (`settling`) or of
 *     unknown outcome (`settling-unknown`) → this process's journal, then the chain, at once: spent
 *     with its transaction → the settlement recorded (idempotent) and served `200` with the receipt
 *     (`served_on_retry`); spent, no transaction visible → 503 `payment_spent_pending` +
 *     Retry-After; not spent (or the chain unreadable) → a `settling` claim is 402
 *     `payment_in_flight` + Retry-After (its message says which) until it has been settling for
 *     PAYMENT_SETTLE_TIMEOUT_SECONDS, then one retry reopens it and goes on below; a
 *     `settling-unknown` one goes on below (verified, taken over, settled once).
 *  8. Capacity: `MAX_CONCURRENT_PAID_RUNS` paid handler runs already in this process (first runs and
 *     answers owed on a retry, `inPaidRunSlot`) → 503 `paid_capacity_exhausted` + Retry-After,
 *     before the facilitator is asked (nothing consumed).
 *  9. Facilitator verify → invalid: 402 with its reason; unreachable: 503 `facilitator_unavailable`.
 * 10. handler.validate → 404/422 answered as is, WITHOUT settling: the authorization stays unused.
 * 11. Atomic claim of (network, payer, nonce) (INSERT … ON CONFLICT DO NOTHING) → taken (a race for
 *     one header, here or on another process; also when verify refused a nonce a claim holds):
 *     decided like step 7, but never going on: served when the settlement is known, else 402
 *     `payment_in_flight` + Retry-After.
 * 12. Facilitator settle:
 *     - success → the settlement appended to the journal (fsync), then claim `settled` and receipt
 *       row stored (expires now + RECEIPT_REUSE_SECONDS); if the database does not hold it (the
 *       journal alone, or nothing), or the answer cannot be produced because the database is away
 *       (at any step after the settlement is known), 503 `database_unavailable` with X-Payment-Receipt
 *       (`settled_unserved`: the retry of the same header is served, never charged again); then
 *       handler.run, then the answer's bytes stored on the receipt; `X-Payment-Receipt: <tx>`,
 *       `X-Payment-Reused: false`, `PAYMENT-RESPONSE` / `X-PAYMENT-RESPONSE` (base64 settle response).
 *     - explicit failure → claim released, 402 with the facilitator's reason.
 *     - not reached (connection refused) → claim released, 503 `facilitator_unavailable`.
 *     - unknown (timeout, 5xx, `settlement_pending`) → claim kept as `settling-unknown`, 503
 *       `facilitator_unavailable`. A retry with the same header for the same resource re-verifies:
 *       if the authorization is still unused on chain the facilitator says valid, the claim is
 *       taken over atomically and settled; spent, it is recorded from the chain (step 7) and
 *       served, or by the reconciliation job (reconcile.ts).
 *
 * The database unreachable before settlement (any step) → 503 `database_unavailable` + Retry-After:
 * nothing verified or settled.
 *
 * `createPaywall` only builds the shared state (`Gate`); its `handle` prices the request (`tierOf`:
 * `matchTier`, the pricing table's one tier rule) and runs these steps as named module functions
 * (steps, readPayment, replayReceipt, checkLocally, refuseKnownClaim, inPaidRunSlot,
 * verifySettleAndRun, verify, settle, runAndStore), each given the request's `Attempt`; every
 * answer leaves through one place (`finish`), where the outcome of the paid request is recorded.
 * Files: the header's decoding in payment-header.ts; the request's state and every answer in
 * attempt.ts; receipts (reuse, answers owed) in receipt-answers.ts; step 7 and race losers in
 * claim-decision.ts; this file runs the steps, verifies, settles and journals.
 * The paywall knows no web framework: it takes a `PaidRequest` (a standard Request plus the routed
 * parameters) and returns `{status, headers, body}`; the HTTP door mounts it
 * (src/doors/http/routes/reputation.ts). Its SQL is in src/store/payments.ts. Amounts are base-unit
 * strings compared as bigint; no float touches a price.
 */
import { randomUUID } from 'node:crypto';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { PaidHandler } from '../paid/handler.js';
import {
  attempt,
  conflictingHeadersBody,
  inPaidRunSlot,
  json,
  NO_STORE,
  receiptExpiry,
  record,
  type Attempt,
  type Checked,
  type Gate,
  type PaidRequest,
  type PaidResponse,
  type PaywallContext,
  type Presented,
  type Settlement,
  paymentsNotConfiguredBody,
} from './attempt.js';
import { buildChallenge, canonicalResource, paymentRequirements } from './challenge.js';
import { raceLoser, refuseKnownClaim } from './claim-decision.js';
import type { ClaimRepair } from './claim-repairs.js';
import { requirementMismatch, signatureRejection, timeWindowRejection } from './exact-checks.js';
import {
  callSettle,
  callVerify,
  createHttpFacilitator,
  FacilitatorUnavailableError,
  SETTLE_UNKNOWN_REASONS,
  type FacilitatorClient,
} from './facilitator.js';
import type { JournalSettlement } from './journal.js';
import { decodePayment, paymentHeader, receiptKeyOf } from './payment-header.js';
import { matchTier, tierById, type PriceTier } from './pricing.js';
import { replayReceipt, runAndStore } from './receipt-answers.js';
import { isDatabaseUnavailable } from '../db/database.js';
import { logger } from '../log.js';
import { recordPayment } from '../metrics.js';
import {
  claimAuthorization,
  markClaimUnknown,
  recordSettlement,
  releaseClaim,
  type ClaimKey,
} from '../store/payments.js';

export { paymentsNotConfiguredBody };
export type { PaywallContext };

export interface Paywall {
  /** Answers one metered request end to end (challenge, payment, handler). */
  handle<I>(req: PaidRequest, handler: PaidHandler<I>): Promise<PaidResponse>;
}

/** Paid runs in flight, per context (every paywall of one process shares it). */
const runSlots = new WeakMap<PaywallContext, { active: number }>();

/**
 * The paywall of a context: `handle` prices the request, then runs the named steps below (module
 * functions, each given the request's `Attempt`).
 */
export function createPaywall(ctx: PaywallContext): Paywall {
  let httpFacilitator: FacilitatorClient | null = null;
  const facilitator = (): FacilitatorClient =>
    ctx.facilitator ?? (httpFacilitator ??= createHttpFacilitator(ctx.config.facilitatorUrl));
  let slots = runSlots.get(ctx);
  if (!slots) runSlots.set(ctx, (slots = { active: 0 }));
  const capacity = slots;
  const gate: Gate = { ctx, facilitator, capacity, chainReads: new Map() };

  /**
   * One metered request: the steps below, in the contract's order. Each step answers (a
   * PaidResponse) or hands what it learned to the next one.
   */
  async function handle<I>(req: PaidRequest, handler: PaidHandler<I>): Promise<PaidResponse> {
    const url = new URL(req.request.url);
    const resource = canonicalResource(req.request.method, url, req.path);
    const tier = tierOf(req.request.method, req.path, url.searchParams, handler.tier);
    const treasury = ctx.config.treasuryAddress;
    if (!treasury) {
      record(req.request, 'not_configured', 'payments_not_configured');
      return json(503, paymentsNotConfiguredBody(), NO_STORE);
    }
    const a = attempt(gate, req, handler, tier, resource, treasury);
    try {
      return await steps(a);
    } catch (err) {
      if (a.settled) {
        // The money moved: the answer says so, with its receipt; the retry of the header is served.
        if (isDatabaseUnavailable(err)) return a.settledUnserved(a.settled);
        logger('paywall').error(
          { err, tx: a.settled.transaction, outcome: 'settled_unserved' },
          'settled but the paid run failed',
        );
        recordPayment('settled_unserved', undefined, { req: { raw: a.req.request } });
        throw err;
      }
      // Nothing settled yet: nothing was charged.
      if (isDatabaseUnavailable(err)) {
        logger('paywall').warn({ err: (err as Error).message }, 'database unavailable: paid request refused');
        return a.dbUnavailable();
      }
      throw err;
    }
  }

  return { handle };
}

/**
 * Steps 2–12 of one priced request, in the contract's order: the payment header, a receipt reuse,
 * the local checks, a known claim, the capacity, then verify, validate, claim, settle and run.
 */
async function steps(a: Attempt): Promise<PaidResponse> {
  const presented = await readPayment(a);
  if (!('receiptKey' in presented)) return presented;
  const replay = await replayReceipt(a, presented);
  if (replay) return replay;
  const checked = await checkLocally(a, presented);
  if (!('claimKey' in checked)) return checked;
  const known = await refuseKnownClaim(a, checked);
  if (known) return known;
  // After the claim: an authorization that moved money is served even once its window has
  // closed; one that did not can no longer be settled.
  const auth = checked.decoded.payload.authorization;
  const window = timeWindowRejection(auth, a.now);
  if (window) return a.reject(window.error, window.reason);
  // Capacity: refused before anything is verified or settled.
  return inPaidRunSlot(a, () => verifySettleAndRun(a, checked));
}

/** Steps 2–4: the payment header → conflict (400), none (402 challenge), undecodable (402), or decoded. */
async function readPayment(a: Attempt): Promise<Presented | PaidResponse> {
  const { header, conflict } = paymentHeader(a.req.request);
  if (conflict) {
    return a.finish(
      'conflicting_headers',
      json(400, conflictingHeadersBody(), NO_STORE),
      'conflicting_payment_headers',
    );
  }
  if (header === undefined) {
    const ch = buildChallenge({
      tier: a.tier,
      resource: a.resource,
      config: a.quote,
      params: a.raw.params,
    });
    return a.finish('challenged', json(402, ch.body, ch.headers), 'payment_required');
  }
  const d = decodePayment(header);
  if (!d.ok) return a.reject('invalid_payment_header', d.reason);
  return { header, decoded: d.decoded, receiptKey: receiptKeyOf(header, a.resource) };
}

/** Step 6: requirement, resource, signature; no network (the time window is checked after step 7). */
async function checkLocally(a: Attempt, p: Presented): Promise<Checked | PaidResponse> {
  const { decoded } = p;
  const auth = decoded.payload.authorization;
  const requirement = paymentRequirements(a.tier, a.quote).find(
    (r) => r.network === decoded.accepted.network,
  );
  if (!requirement) {
    return a.reject(
      'payment_requirements_mismatch',
      `network ${JSON.stringify(decoded.accepted.network).slice(0, 80)} is not offered`,
    );
  }
  const local =
    requirementMismatch(decoded, requirement, a.resource) ?? (await signatureRejection(decoded, requirement));
  if (local) return a.reject(local.error, local.reason);
  return {
    ...p,
    requirement,
    claimKey: [requirement.network, auth.from.toLowerCase(), auth.nonce.toLowerCase()],
  };
}

/** Steps 9–12: verify, validate (a refused input consumes nothing), claim, settle, run, store. */
async function verifySettleAndRun(a: Attempt, p: Checked): Promise<PaidResponse> {
  const { decoded, requirement, claimKey, receiptKey } = p;
  const payload: PaymentPayload = {
    x402Version: decoded.x402Version,
    accepted: decoded.accepted as PaymentRequirements,
    payload: decoded.payload,
    ...(decoded.extensions ? { extensions: decoded.extensions } : {}),
  };
  const verifiedOrRefused = await verify(a, payload, requirement);
  if (verifiedOrRefused) {
    // Refused because the nonce is already being used by a claim for this resource (a race, or
    // a settlement of unknown outcome): in flight, not a dead end.
    if (verifiedOrRefused.status === 402) return (await raceLoser(a, p)) ?? verifiedOrRefused;
    return verifiedOrRefused;
  }

  const v = await a.handler.validate(a.ctx, a.raw);
  if (!v.ok) return a.refused(v.status, v.body);

  const auth = decoded.payload.authorization;
  const held: Held = { key: claimKey, token: randomUUID() };
  let claimed = false;
  // The INSERT may commit as the connection drops: this request then never settles it, and the
  // claim is released once the database answers again (not left to the settle timeout).
  await orRepairLater(a, held, 'release', async () => {
    claimed = await claimAuthorization(a.ctx.db, claimKey, {
      resource: a.resource,
      amount: requirement.amount,
      receiptKey,
      validBefore: auth.validBefore,
      token: held.token,
    });
  });
  if (!claimed) {
    return (
      (await raceLoser(a, p)) ??
      a.reject('payment_already_used', 'this authorization has already been used for a call')
    );
  }

  const settled = await settle(a, payload, requirement, held);
  if (!('transaction' in settled)) return settled;

  // The money has moved: from here on every answer says so (never `verified`, never a bare 500).
  const tx = settled.transaction;
  const payer = (settled.payer ?? auth.from).toLowerCase();
  const settlement: Settlement = { transaction: tx, network: requirement.network, payer };
  a.settled = settlement;
  const journaled = await journal(a.ctx, {
    network: claimKey[0],
    payer: claimKey[1],
    nonce: claimKey[2],
    resource: a.resource,
    amount: requirement.amount,
    receipt_key: receiptKey,
    tx,
    at: new Date().toISOString(),
  });
  let recorded = false;
  try {
    await recordSettlement(a.ctx.db, {
      claimKey,
      receiptKey,
      resource: a.resource,
      amount: requirement.amount,
      tx,
      payer,
      expires: receiptExpiry(a),
      runStartedAt: a.now,
    });
    recorded = true;
  } catch (err) {
    logger('paywall').error(
      { err: (err as Error).message, tx, journaled, outcome: 'settled_unserved' },
      journaled
        ? 'settled but could not record the settlement: kept in the journal'
        : 'settled but could not record the settlement: the chain will decide it on a retry',
    );
  }
  if (journaled) {
    // Unrecorded: this process's journal replay records it as soon as the database answers again.
    if (recorded) await a.ctx.journal!.recorded(claimKey).catch(() => undefined);
    else a.ctx.journal!.unrecorded(claimKey);
  }
  // Never 200 without the receipt row: the answer's bytes are kept with it, so a reuse of the
  // header replays them. Unrecorded, the retry is served (from the journal or the chain).
  if (!recorded) return a.settledUnserved(settlement);
  // A failure of the run is answered by handle (settled_unserved, with the receipt).
  const out = await runAndStore(a.ctx, a.handler, v.input, receiptKey, tx);
  return a.paidAnswer(out.text, out.status, settlement, 'paid');
}

/** Makes a settlement durable in the journal (when there is one); true when it is. */
async function journal(ctx: PaywallContext, s: JournalSettlement): Promise<boolean> {
  if (!ctx.journal) return false;
  try {
    await ctx.journal.settled(s);
    return true;
  } catch (err) {
    logger('paywall').error(
      { err: (err as Error).message, tx: s.tx, journal: ctx.journal.path },
      'could not write the settlement journal',
    );
    return false;
  }
}

/** Step 9: facilitator verify → null when valid; invalid: 402 with its reason; unreachable: 503. */
async function verify(
  a: Attempt,
  payload: PaymentPayload,
  requirement: PaymentRequirements,
): Promise<PaidResponse | null> {
  let verified;
  try {
    verified = await callVerify(a.facilitator(), payload, requirement);
  } catch (err) {
    if (err instanceof FacilitatorUnavailableError) return a.unavailable();
    throw err;
  }
  if (!verified.isValid) {
    return a.reject(
      safeCode(verified.invalidReason, 'payment_invalid'),
      verified.invalidMessage?.slice(0, 300) ??
        `the facilitator refused this authorization (${verified.invalidReason ?? 'no reason given'})`.slice(
          0,
          300,
        ),
    );
  }
  a.verified();
  return null;
}

/**
 * Step 12: facilitator settle of a claimed authorization → the settle response on success;
 * otherwise the claim is released (failed, or never sent) or kept as `settling-unknown`.
 */
async function settle(
  a: Attempt,
  payload: PaymentPayload,
  requirement: PaymentRequirements,
  held: Held,
): Promise<SettleResponse | PaidResponse> {
  let settled;
  try {
    settled = await callSettle(a.facilitator(), payload, requirement);
  } catch (err) {
    if (err instanceof FacilitatorUnavailableError) {
      if (err.failure === 'not_sent') await release(a, held);
      else await markUnknown(a, held);
      return a.unavailable();
    }
    await markUnknown(a, held);
    throw err;
  }
  if (settled.success) return settled;
  if (SETTLE_UNKNOWN_REASONS.has(settled.errorReason ?? '')) {
    await markUnknown(a, held, settled.transaction || null);
    return a.unavailable();
  }
  await release(a, held);
  return a.reject(
    safeCode(settled.errorReason, 'settlement_failed'),
    settled.errorMessage?.slice(0, 300) ??
      `the settlement failed (${settled.errorReason ?? 'no reason given'}); nothing was charged`.slice(
        0,
        300,
      ),
  );
}

/** A claim this request holds: its key and the token written with it. */
interface Held {
  key: ClaimKey;
  token: string;
}

/**
 * Runs a write on this request's claim; the database gone meanwhile, the claim is noted for repair
 * once it answers again (claim-repairs.ts: only this claim, by its token), then the error goes on.
 */
async function orRepairLater(a: Attempt, held: Held, repair: ClaimRepair, write: () => Promise<unknown>) {
  try {
    await write();
  } catch (err) {
    if (isDatabaseUnavailable(err)) a.ctx.claimRepairs?.add(held.key, held.token, repair);
    throw err;
  }
}

/** Drops the claim of a settle refused or never sent (nothing was charged). */
function release(a: Attempt, held: Held): Promise<void> {
  return orRepairLater(a, held, 'release', () => releaseClaim(a.ctx.db, held.key));
}

/** The claim of a settle whose outcome is unknown becomes `settling-unknown`. */
function markUnknown(a: Attempt, held: Held, tx: string | null = null): Promise<void> {
  recordPayment('settling_unknown');
  return orRepairLater(a, held, 'unknown', () => markClaimUnknown(a.ctx.db, held.key, tx));
}

/**
 * The tier of a request, by the one rule of the pricing table (`matchTier`: ?snapshot=true selects
 * wallet-snapshot), which `/pricing` publishes and the MCP and A2A doors quote. A handler mounted
 * on a path outside its own tier's pattern (tests mount stand-ins) is charged its own tier.
 */
function tierOf(method: string, path: string, query: URLSearchParams, handlerTier: string): PriceTier {
  const own = tierById(handlerTier);
  const matched = matchTier(method, path, query);
  return matched && matched.path === own.path && matched.method === own.method ? matched : own;
}

/** A facilitator reason echoed as our error code only when it looks like one. */
function safeCode(reason: string | undefined, fallback: string): string {
  return reason && /^[a-z0-9_]{1,64}$/i.test(reason) ? reason : fallback;
}
