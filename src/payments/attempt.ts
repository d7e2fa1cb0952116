/**
 * One metered request inside the paywall: what it carries from step to step (`Attempt`: the
 * request, its tier and resource, the settlement once money is known to have moved, its paid-run
 * slot) and every answer a step may give, each recording the request's payment outcome once
 * (`finish`). The bodies keep the project's two error shapes: a `402` is the x402 challenge with
 * `error` set (src/payments/challenge.ts); a `503` is `{error, message, retryable,
 * retry_after_seconds}` with `Retry-After`, plus the receipt headers when the payment is known to be
 * settled. The steps themselves are in paywall.ts, receipt-answers.ts and claim-decision.ts.
 */
import { encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { PaidContext, PaidHandler, RawPaidRequest } from '../paid/handler.js';
import { buildChallenge, type QuoteConfig } from './challenge.js';
import type { FacilitatorClient } from './facilitator.js';
import type { SettlementJournal } from './journal.js';
import type { PriceTier } from './pricing.js';
import type { AuthorizationReader, SpentOnChain } from './authorization-state.js';
import type { ClaimRepairs } from './claim-repairs.js';
import type { DecodedPayment } from './payment-header.js';
import { DATABASE_RETRY_AFTER_SECONDS, databaseUnavailableBody } from '../db/database.js';
import { logger } from '../log.js';
import { recordPayment, type PaymentOutcome } from '../metrics.js';
import type { ClaimKey } from '../store/payments.js';

/** `Retry-After` of the paywall's retryable answers (the contract's 5 s). */
export const RETRY_AFTER_SECONDS = 5;
/** Default of MAX_CONCURRENT_PAID_RUNS. */
const DEFAULT_MAX_CONCURRENT_PAID_RUNS = 16;

/** What the paywall needs: the paid handlers' context, plus an optional facilitator (tests inject one). */
export interface PaywallContext extends PaidContext {
  facilitator?: FacilitatorClient;
  /**
   * The settlement journal (`serve`: PAYMENT_JOURNAL): every settlement is made durable there before
   * it is recorded in the database. Absent: a settlement the database cannot record is not
   * answered 200 (503, and the retry of the same header is served once it is decided).
   */
  journal?: SettlementJournal | null;
  /**
   * Reads an authorization's state on chain (`serve`: the token's `authorizationState` through the
   * network's RPC). Absent: a claim being settled is in flight until the settle timeout, and one of
   * unknown outcome is decided by the facilitator's verify (valid → settled again, once; nonce used
   * → left to the reconciliation).
   */
  readAuthorization?: AuthorizationReader;
  /**
   * Claims a request had to leave behind when it lost its database (claim-repairs.ts; `serve`
   * applies them as soon as the database answers again). Absent: such a claim waits for the settle
   * timeout.
   */
  claimRepairs?: ClaimRepairs;
}

/** One metered request, as the door received it (no web framework: the door builds it). */
export interface PaidRequest {
  /** The request (method, URL, headers); its payment outcome is noted on it for the access log. */
  request: Request;
  /**
   * The path the router routed (without `/v1`): the resource bought and the tier's path. The URL's
   * path, except for an in-process call routed by a path holding a dot segment, which its URL lost
   * (src/doors/in-process.ts).
   */
  path: string;
  /** Path parameters as routed, not yet validated. */
  params: Record<string, string>;
  /** Query parameters as received; repeated keys keep every value. */
  query: Record<string, string[]>;
}

/** The answer to one metered request: the door sends these bytes as they are. */
export interface PaidResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The decoded payment of one request and the keys it is stored under. */
export interface Presented {
  header: string;
  decoded: DecodedPayment;
  receiptKey: string;
}

/** A payment that passed the local checks: the requirement it pays and its claim key. */
export interface Checked extends Presented {
  requirement: PaymentRequirements;
  claimKey: ClaimKey;
}

/** A settlement as the answer reports it. */
export interface Settlement {
  transaction: string;
  network: string;
  payer: string | null;
}

/** How one metered request ended (one value per answer, recorded in the payment metrics). */
type PaidOutcome =
  | 'not_configured'
  | 'conflicting_headers'
  | 'challenged'
  | 'rejected'
  | 'busy'
  | 'unavailable'
  | 'invalid_input'
  | 'db_unavailable'
  | 'paid'
  | 'settled_unserved'
  | 'spent_pending'
  | 'served_on_retry'
  | 'reused';

/** The metric (and whether its `code` label is set) of each final outcome; `verified` and
 * `settling_unknown` are recorded where they happen. */
const METRIC_OF_OUTCOME: Record<PaidOutcome, [PaymentOutcome, boolean]> = {
  not_configured: ['refused', true],
  conflicting_headers: ['refused', true],
  challenged: ['challenged', false],
  rejected: ['refused', true],
  busy: ['refused', true],
  unavailable: ['facilitator_error', false],
  invalid_input: ['refused', true],
  db_unavailable: ['database_unavailable', false],
  paid: ['settled', false],
  settled_unserved: ['settled_unserved', false],
  spent_pending: ['spent_pending', false],
  served_on_retry: ['served_on_retry', false],
  reused: ['reused', false],
};

export const NO_STORE = { 'Cache-Control': 'no-store' };

/** The payment metric of a final outcome, noted on the request too (the access log reads it). */
export function record(request: Request, outcome: PaidOutcome, error?: string): void {
  const [metric, code] = METRIC_OF_OUTCOME[outcome];
  recordPayment(metric, code ? (error ?? outcome) : undefined, { req: { raw: request } });
}

export function json(status: number, body: unknown, headers: Record<string, string> = {}): PaidResponse {
  return { status, headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

function facilitatorUnavailableBody() {
  return {
    error: 'facilitator_unavailable',
    message:
      'The payment facilitator could not be reached. Your authorization was NOT used: retry the identical request with the SAME X-PAYMENT after Retry-After; never re-sign.',
    retryable: true,
    retry_after_seconds: RETRY_AFTER_SECONDS,
  };
}

/** `settled`: the payment was settled already and its answer is owed (served on a retry). */
function paidCapacityBody(settled: boolean) {
  return {
    error: 'paid_capacity_exhausted',
    message: settled
      ? 'Your payment was settled (X-Payment-Receipt), but too many paid requests are being answered right now to prepare its answer. Retry the identical request with the SAME X-PAYMENT after Retry-After: it is answered then, with no new charge; never re-sign.'
      : 'Too many paid requests are being answered right now. Nothing was verified, settled or charged: retry the identical request with the SAME X-PAYMENT after Retry-After; never re-sign.',
    retryable: true,
    retry_after_seconds: RETRY_AFTER_SECONDS,
  };
}

export function conflictingHeadersBody() {
  return {
    error: 'conflicting_payment_headers',
    message:
      'Both X-PAYMENT and PAYMENT-SIGNATURE were sent, with different values: send the payment in one of them (or the same value in both). Nothing was verified or charged.',
    retryable: false,
  };
}

export function paymentsNotConfiguredBody() {
  return {
    error: 'payments_not_configured',
    message:
      'Metered routes are closed: the operator has not set TREASURY_ADDRESS, so no payment can be quoted or accepted. Nothing was charged. The free routes keep answering.',
    retryable: false,
  };
}

/**
 * What the chain is known to say about an authorization being settled by another request, as
 * `payment_in_flight` reports it: read just now and not spent; or not known (no chain reader, or
 * the chain could not be read).
 */
export type InFlightKnowledge = 'unspent' | 'unknown';

/** The sentences of `402 payment_in_flight`, by what is known of the chain. */
const IN_FLIGHT_MESSAGE: Record<InFlightKnowledge, string> = {
  unspent:
    'Payment in flight (payment_in_flight): another request is settling this very authorization for this resource right now, and it is not spent on chain yet: nothing has been charged so far.',
  unknown:
    'Payment in flight (payment_in_flight): another request is settling this very authorization for this resource right now; whether it is spent on chain could not be read just now.',
};

/** Why a payment is answered `503 payment_spent_pending` (see `spentPending`). */
export type SpentPendingReason = 'recording' | 'answer';

/** The body of `503 payment_spent_pending`: the authorization is spent, its answer not ready yet. */
function spentPendingBody(why: SpentPendingReason) {
  return {
    error: 'payment_spent_pending',
    message:
      why === 'recording'
        ? `Your authorization is spent on chain (the money moved) and its settlement is being recorded. Retry the identical request with the SAME X-PAYMENT in ${RETRY_AFTER_SECONDS} s (Retry-After): it is answered then with its receipt, never charged again; never re-sign.`
        : `Your payment was settled (X-Payment-Receipt) and its answer is being prepared by another request right now. Retry the identical request with the SAME X-PAYMENT in ${RETRY_AFTER_SECONDS} s (Retry-After): it is answered then from its receipt, never charged again; never re-sign.`,
    retryable: true,
    retry_after_seconds: RETRY_AFTER_SECONDS,
  };
}

/** The receipt and x402 settle-response headers of a settled payment. */
function settlementHeaders(s: Settlement): Record<string, string> {
  const settlement = paymentResponseHeader(s);
  return {
    'X-Payment-Receipt': s.transaction,
    'PAYMENT-RESPONSE': settlement,
    'X-PAYMENT-RESPONSE': settlement,
    'Access-Control-Expose-Headers':
      'PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, X-Payment-Receipt, X-Payment-Reused',
  };
}

/** The x402 settle response of a settled payment, as the base64 `PAYMENT-RESPONSE` header value. */
function paymentResponseHeader(s: Settlement): string {
  const response: SettleResponse = {
    success: true,
    transaction: s.transaction,
    network: s.network as SettleResponse['network'],
    ...(s.payer ? { payer: s.payer } : {}),
  };
  return encodePaymentResponseHeader(response);
}

/** What every step of one paywall shares: the context, its facilitator, its paid-run slots and
 * its chain reads in progress. */
export interface Gate {
  ctx: PaywallContext;
  facilitator: () => FacilitatorClient;
  capacity: { active: number };
  /** Chain reads of one authorization, shared by concurrent requests (claim-decision.ts). */
  chainReads: Map<string, { at: number; result: Promise<SpentOnChain> }>;
}

/** PAYMENT_SETTLE_TIMEOUT_SECONDS: how long a claim may stay `settling` before a retry decides it. */
export const settleTimeout = (ctx: PaywallContext) => ctx.config.paymentSettleTimeoutSeconds;

/** When a receipt written now expires: RECEIPT_REUSE_SECONDS from this request's clock. */
export function receiptExpiry(a: Attempt): Date {
  return new Date(a.now.getTime() + a.ctx.config.receiptReuseSeconds * 1000);
}

/**
 * The paid-run slots a first run (verify, settle, run) may take: all but a quarter of
 * MAX_CONCURRENT_PAID_RUNS (rounded down), which only answers owed to settled payments may use, so a
 * buyer who has paid is answered before a new payment is taken (after an outage, the retries of
 * settled payments are not refused behind a queue of new settlements).
 */
export function firstRunSlots(max: number): number {
  return max - Math.floor(max / 4);
}

/**
 * Runs `run` in one of this process's paid-run slots (MAX_CONCURRENT_PAID_RUNS): every paid handler
 * run holds one, the first run of a payment (verify, settle, run) and an answer owed on a retry
 * (computed from its receipt) alike; a first run only while fewer than `firstRunSlots` are taken.
 * A request that already holds a slot keeps it (a race loser served from the winner's receipt
 * inside verifySettleAndRun); none free → 503 `paid_capacity_exhausted` + Retry-After, and nothing
 * is consumed (retry the same header). Taking and giving back a slot are synchronous, so no two
 * requests take the last one.
 */
export async function inPaidRunSlot(a: Attempt, run: () => Promise<PaidResponse>): Promise<PaidResponse> {
  if (a.holdsSlot) return run();
  const max = a.ctx.config.maxConcurrentPaidRuns ?? DEFAULT_MAX_CONCURRENT_PAID_RUNS;
  // An answer owed to a settled payment may use every slot; a first run leaves it the reserve.
  if (a.capacity.active >= (a.settled ? max : firstRunSlots(max))) return a.busy();
  a.capacity.active += 1;
  a.holdsSlot = true;
  try {
    return await run();
  } finally {
    a.capacity.active -= 1;
    a.holdsSlot = false;
  }
}

/** The per-request state and the answers every step may give (each records its outcome once). */
export function attempt<I>(
  gate: Gate,
  req: PaidRequest,
  handler: PaidHandler<I>,
  tier: PriceTier,
  resource: string,
  treasury: string,
) {
  const { ctx } = gate;
  const quote: QuoteConfig = {
    treasuryAddress: treasury,
    facilitatorUrl: ctx.config.facilitatorUrl,
    paymentAssetOverrides: ctx.config.paymentAssetOverrides,
  };
  const raw: RawPaidRequest = { params: req.params, query: req.query, tier: tier.id };
  const a = {
    ...gate,
    req,
    raw,
    handler,
    tier,
    resource,
    quote,
    now: ctx.now(),
    /**
     * The settlement of this authorization once it is known to have moved money (settled now, or
     * found in a receipt, the journal or on chain): a failure after that point answers
     * `settled_unserved` with its receipt, never "nothing was charged".
     */
    settled: null as Settlement | null,
    /** Whether this request holds one of the process's paid-run slots (inPaidRunSlot). */
    holdsSlot: false,
    /** Every answer leaves through here: the outcome is recorded once, with the answer. */
    finish(outcome: PaidOutcome, res: PaidResponse, error?: string): PaidResponse {
      record(req.request, outcome, error);
      return res;
    },
    verified(): void {
      recordPayment('verified', undefined, { req: { raw: req.request } });
    },
    /** 402: a fresh challenge carrying why this payment was refused. */
    reject(
      code: string,
      reason: string,
      retry?: { nextAction: string; afterSeconds: number; message?: string },
    ): PaidResponse {
      const ch = buildChallenge({
        tier,
        resource,
        config: quote,
        params: raw.params,
        error: code,
        reason,
        ...(retry ? { retryable: true, nextAction: retry.nextAction } : {}),
        ...(retry?.message ? { message: retry.message } : {}),
      });
      const headers = retry ? { ...ch.headers, 'Retry-After': String(retry.afterSeconds) } : ch.headers;
      return a.finish('rejected', json(402, ch.body, headers), code);
    },
    /**
     * 503 `paid_capacity_exhausted`: every paid-run slot is taken. Before settlement nothing was
     * verified or settled; for a settled payment whose answer is owed, the answer names its receipt
     * (the retry of the same header is served, never charged again).
     */
    busy(): PaidResponse {
      const s = a.settled;
      return a.finish(
        'busy',
        json(503, paidCapacityBody(s !== null), {
          'Retry-After': String(RETRY_AFTER_SECONDS),
          ...(s ? settlementHeaders(s) : {}),
          ...NO_STORE,
        }),
        'paid_capacity_exhausted',
      );
    },
    /** 503 `facilitator_unavailable`: nothing was consumed, retry the same header. */
    unavailable(): PaidResponse {
      return a.finish(
        'unavailable',
        json(503, facilitatorUnavailableBody(), {
          'Retry-After': String(RETRY_AFTER_SECONDS),
          ...NO_STORE,
        }),
        'facilitator_unavailable',
      );
    },
    /** The handler's 404/422, answered as is (nothing settled). */
    refused(status: 404 | 422, body: unknown): PaidResponse {
      return a.finish('invalid_input', json(status, body));
    },
    /** A paid answer: the exact bytes, with the receipt and the x402 settlement headers. */
    paidAnswer(
      text: string,
      status: number,
      s: Settlement,
      outcome: 'paid' | 'reused' | 'served_on_retry',
    ): PaidResponse {
      return a.finish(outcome, {
        status,
        body: text,
        headers: {
          'Content-Type': 'application/json',
          ...settlementHeaders(s),
          'X-Payment-Reused': outcome === 'reused' ? 'true' : 'false',
          ...NO_STORE,
        },
      });
    },
    /** 503 `database_unavailable` before anything was verified or settled. */
    dbUnavailable(): PaidResponse {
      return a.finish(
        'db_unavailable',
        json(503, databaseUnavailableBody(), {
          'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS),
          ...NO_STORE,
        }),
      );
    },
    /**
     * 503: settled (the money moved) but the answer could not be produced now. The retry of the
     * same header is served (from the receipt, the journal or the chain), never charged again.
     */
    settledUnserved(s: Settlement): PaidResponse {
      logger('paywall').warn(
        { outcome: 'settled_unserved', tx: s.transaction, network: s.network },
        'settled but not served: the retry of the same header will be',
      );
      return a.finish(
        'settled_unserved',
        json(
          503,
          databaseUnavailableBody(
            'Your payment was settled (X-Payment-Receipt), but the answer could not be prepared: the database is unreachable. Retry the identical request with the SAME X-PAYMENT after Retry-After: it is answered then, with no new charge; never re-sign.',
          ),
          {
            'Retry-After': String(DATABASE_RETRY_AFTER_SECONDS),
            ...settlementHeaders(s),
            ...NO_STORE,
          },
        ),
      );
    },
    /**
     * 402 `payment_in_flight`: another request is settling this authorization for this resource,
     * and it is not known to be spent (read on chain just now: unspent; or not readable). Nothing
     * has been charged so far, as far as the chain shows; retry the same header.
     */
    inFlight(known: InFlightKnowledge): PaidResponse {
      return a.reject('payment_in_flight', 'another request is settling this authorization', {
        nextAction:
          'Retry the identical request with the SAME X-PAYMENT after Retry-After: once the other request has settled it, its receipt serves this resource. Never re-sign meanwhile: a second authorization would be a second payment.',
        afterSeconds: RETRY_AFTER_SECONDS,
        message: IN_FLIGHT_MESSAGE[known],
      });
    },
    /**
     * 503 `payment_spent_pending`: the authorization is spent on chain (the money moved) but this
     * request cannot answer it yet: its settlement is being recorded (`recording`: spent, its
     * transaction not visible yet, or recorded by the process that settled it), or its answer is
     * being prepared by another request (`answer`). Names the receipt when it is known. The retry of
     * the same header is served, never charged again.
     */
    spentPending(why: SpentPendingReason): PaidResponse {
      const s = a.settled;
      return a.finish(
        'spent_pending',
        json(503, spentPendingBody(why), {
          'Retry-After': String(RETRY_AFTER_SECONDS),
          ...(s ? settlementHeaders(s) : {}),
          ...NO_STORE,
        }),
      );
    },
  };
  return a;
}
export type Attempt = ReturnType<typeof attempt>;
