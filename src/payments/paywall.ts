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
 *     `payment_requirements_mismatch`; the time window (`payment_expired`, `payment_not_yet_valid`)
 *     and the EIP-3009 typed-data signature (`invalid_payment_signature`).
 *  7. The authorization's claim row, if any: bound to another resource → 402
 *     `payment_resource_mismatch` (a `settling-unknown` claim too: it stays bound to its resource);
 *     being settled right now → 402 `payment_in_flight` + Retry-After, unless this process journaled
 *     its settlement (recorded now, answered `served_on_retry`) or it has been `settling` for longer
 *     than PAYMENT_SETTLE_TIMEOUT_SECONDS (then decided like a `settling-unknown` one: from the chain,
 *     spent → recorded and served, unspent → verified and settled below); already paid → its
 *     receipt when a request racing this one has just stored it, else 402 `payment_already_used`.
 *  8. Capacity: `MAX_CONCURRENT_PAID_RUNS` paid handler runs already in this process (first runs and
 *     answers owed on a retry, `inPaidRunSlot`) → 503 `paid_capacity_exhausted` + Retry-After,
 *     before the facilitator is asked (nothing consumed).
 *  9. Facilitator verify → invalid: 402 with its reason; unreachable: 503 `facilitator_unavailable`.
 * 10. handler.validate → 404/422 answered as is, WITHOUT settling: the authorization stays unused.
 * 11. Atomic claim of (network, payer, nonce) (INSERT … ON CONFLICT DO NOTHING) → taken (a race for
 *     one header, here or on another process): the winner's receipt if stored, else 402
 *     `payment_in_flight` + Retry-After (also when verify refused a nonce a claim holds).
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
 *       taken over atomically and settled; otherwise the reconciliation job (reconcile.ts) settles
 *       the claim from the chain and the retry is then served from its receipt.
 *
 * The database unreachable before settlement (any step) → 503 `database_unavailable` + Retry-After:
 * nothing verified or settled.
 *
 * `createPaywall` only builds the shared state (`Gate`); its `handle` prices the request (`tierOf`:
 * `matchTier`, the pricing table's one tier rule) and runs these steps as named module functions
 * (steps, readPayment, replayReceipt, checkLocally, refuseKnownClaim, inPaidRunSlot,
 * verifySettleAndRun, verify, settle, runAndStore), each given the request's `Attempt`; every
 * answer leaves through one place (`finish`), where the outcome of the paid request is recorded.
 * The paywall knows no web framework: it takes a `PaidRequest` (a standard Request plus the routed
 * parameters) and returns `{status, headers, body}`; the HTTP door mounts it
 * (src/doors/http/routes/reputation.ts). Its SQL is in src/store/payments.ts. Amounts are base-unit
 * strings compared as bigint; no float touches a price.
 */
import { createHash } from 'node:crypto';
import { decodePaymentSignatureHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { z } from 'zod';
import type { PaidContext, PaidHandler, RawPaidRequest } from '../paid/handler.js';
import { buildChallenge, canonicalResource, paymentRequirements, type QuoteConfig } from './challenge.js';
import { requirementMismatch, signatureRejection, timeWindowRejection } from './exact-checks.js';
import {
  callSettle,
  callVerify,
  createHttpFacilitator,
  FacilitatorUnavailableError,
  SETTLE_UNKNOWN_REASONS,
  type FacilitatorClient,
} from './facilitator.js';
import { recordJournaled, type JournalSettlement, type SettlementJournal } from './journal.js';
import { matchTier, tierById, type PriceTier } from './pricing.js';
import { spentOnChain, type AuthorizationReader } from './authorization-state.js';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  databaseUnavailableBody,
  isDatabaseUnavailable,
} from '../db/database.js';
import { logger } from '../log.js';
import { recordPayment, type PaymentOutcome } from '../metrics.js';
import {
  claimAuthorization,
  findClaim,
  findReceipt,
  leaseReceiptRun,
  markClaimUnknown,
  recordSettlement,
  releaseClaim,
  reopenStaleClaim,
  storeReceiptAnswer,
  type ClaimKey,
} from '../store/payments.js';

/** Largest accepted payment header (a real EIP-3009 payload is well under 2 KiB). */
const MAX_PAYMENT_HEADER_BYTES = 16 * 1024;
const RETRY_AFTER_SECONDS = 5;
/** Default of MAX_CONCURRENT_PAID_RUNS. */
const DEFAULT_MAX_CONCURRENT_PAID_RUNS = 16;
/** A receipt whose answer is being computed by another request is left to it for this long. */
const ANSWER_LEASE_SECONDS = 60;

const hex = (n: number) => z.string().regex(new RegExp(`^0x[0-9a-fA-F]{${n}}$`));
const address = hex(40);
const uint = z.string().regex(/^\d{1,78}$/);

const paymentPayloadSchema = z.object({
  x402Version: z.literal(2),
  accepted: z.object({
    scheme: z.string().max(64),
    network: z.string().max(64),
    asset: z.string().max(128),
    amount: uint,
    payTo: z.string().max(128),
    maxTimeoutSeconds: z.number().int().nonnegative().optional(),
    extra: z.record(z.string(), z.unknown()).optional(),
  }),
  payload: z.object({
    signature: z.string().regex(/^0x[0-9a-fA-F]{2,4096}$/),
    authorization: z.object({
      from: address,
      to: address,
      value: uint,
      validAfter: uint,
      validBefore: uint,
      nonce: hex(64),
    }),
  }),
  resource: z.unknown().optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
});
type DecodedPayment = z.infer<typeof paymentPayloadSchema>;

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
  served_on_retry: ['served_on_retry', false],
  reused: ['reused', false],
};

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
  | 'served_on_retry'
  | 'reused';

/** What the paywall needs: the paid handlers' context, plus an optional facilitator (tests inject one). */
interface PaywallContext extends PaidContext {
  facilitator?: FacilitatorClient;
  /**
   * The settlement journal (`serve`: PAYMENT_JOURNAL): every settlement is made durable there before
   * it is recorded in the database. Absent: a settlement the database cannot record is not
   * answered 200 (503, and the retry of the same header is served once it is decided).
   */
  journal?: SettlementJournal | null;
  /**
   * Reads an authorization's state on chain (`serve`: the token's `authorizationState` through the
   * network's RPC). Absent: a claim of unknown outcome is decided by the facilitator's verify
   * (valid → settled again, once; nonce used → left to the reconciliation).
   */
  readAuthorization?: AuthorizationReader;
}

/** One metered request, as the door received it (no web framework: the door builds it). */
interface PaidRequest {
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
interface PaidResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export interface Paywall {
  /** Answers one metered request end to end (challenge, payment, handler). */
  handle<I>(req: PaidRequest, handler: PaidHandler<I>): Promise<PaidResponse>;
}

/** The decoded payment of one request and the keys it is stored under. */
interface Presented {
  header: string;
  decoded: DecodedPayment;
  receiptKey: string;
}

/** A payment that passed the local checks: the requirement it pays and its claim key. */
interface Checked extends Presented {
  requirement: PaymentRequirements;
  claimKey: ClaimKey;
}

const NO_STORE = { 'Cache-Control': 'no-store' };

/** The payment metric of a final outcome, noted on the request too (the access log reads it). */
function record(request: Request, outcome: PaidOutcome, error?: string): void {
  const [metric, code] = METRIC_OF_OUTCOME[outcome];
  recordPayment(metric, code ? (error ?? outcome) : undefined, { req: { raw: request } });
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): PaidResponse {
  return { status, headers: { 'Content-Type': 'application/json', ...headers }, body: JSON.stringify(body) };
}

function sha256(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

/**
 * The payment header of a request: `X-PAYMENT` (contract) or x402 v2 `PAYMENT-SIGNATURE`; both with
 * different values is a conflict (never guess which one the client meant).
 */
function paymentHeader(request: Request): { header?: string; conflict: boolean } {
  const norm = (v: string | null) => (v === null || v.trim() === '' ? undefined : v.trim());
  const x = norm(request.headers.get('x-payment'));
  const s = norm(request.headers.get('payment-signature'));
  if (x !== undefined && s !== undefined && x !== s) return { conflict: true };
  return { header: x ?? s, conflict: false };
}

/** The decoded payload, or why it is not one (never a 500 for hostile input). */
function decodePayment(
  header: string,
): { ok: true; decoded: DecodedPayment } | { ok: false; reason: string } {
  if (header.length > MAX_PAYMENT_HEADER_BYTES)
    return { ok: false, reason: 'the payment header is too large' };
  try {
    const parsed = paymentPayloadSchema.safeParse(decodePaymentSignatureHeader(header));
    if (!parsed.success)
      return { ok: false, reason: 'the payment header is not an x402 v2 exact EIP-3009 payload' };
    return { ok: true, decoded: parsed.data };
  } catch {
    return { ok: false, reason: 'the payment header is not base64-encoded JSON' };
  }
}

function facilitatorUnavailableBody(message?: string) {
  return {
    error: 'facilitator_unavailable',
    message:
      message ??
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

function conflictingHeadersBody() {
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

/** A settlement as the answer reports it. */
interface Settlement {
  transaction: string;
  network: string;
  payer: string | null;
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

/** Paid runs in flight, per context (every paywall of one process shares it). */
const inFlight = new WeakMap<PaywallContext, { active: number }>();

/** What every step of one paywall shares: the context, its facilitator and its paid-run slots. */
interface Gate {
  ctx: PaywallContext;
  facilitator: () => FacilitatorClient;
  capacity: { active: number };
}

/**
 * The paywall of a context: `handle` prices the request, then runs the named steps below (module
 * functions, each given the request's `Attempt`).
 */
export function createPaywall(ctx: PaywallContext): Paywall {
  let httpFacilitator: FacilitatorClient | null = null;
  const facilitator = (): FacilitatorClient =>
    ctx.facilitator ?? (httpFacilitator ??= createHttpFacilitator(ctx.config.facilitatorUrl));
  let slots = inFlight.get(ctx);
  if (!slots) inFlight.set(ctx, (slots = { active: 0 }));
  const capacity = slots;
  const gate: Gate = { ctx, facilitator, capacity };

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
  // Capacity: refused before anything is verified or settled.
  return inPaidRunSlot(a, () => verifySettleAndRun(a, checked));
}

/**
 * Runs `run` in one of this process's paid-run slots (MAX_CONCURRENT_PAID_RUNS): every paid handler
 * run holds one, the first run of a payment (verify, settle, run) and an answer owed on a retry
 * (computed from its receipt) alike. A request that already holds a slot keeps it (a race loser
 * served from the winner's receipt inside verifySettleAndRun); none free → 503
 * `paid_capacity_exhausted` + Retry-After, and nothing is consumed (retry the same header). Taking
 * and giving back a slot are synchronous, so no two requests take the last one.
 */
async function inPaidRunSlot(a: Attempt, run: () => Promise<PaidResponse>): Promise<PaidResponse> {
  if (a.holdsSlot) return run();
  const max = a.ctx.config.maxConcurrentPaidRuns ?? DEFAULT_MAX_CONCURRENT_PAID_RUNS;
  if (a.capacity.active >= max) return a.busy();
  a.capacity.active += 1;
  a.holdsSlot = true;
  try {
    return await run();
  } finally {
    a.capacity.active -= 1;
    a.holdsSlot = false;
  }
}

/** PAYMENT_SETTLE_TIMEOUT_SECONDS: how long a claim may stay `settling` before a retry decides it. */
const settleTimeout = (ctx: PaywallContext) => ctx.config.paymentSettleTimeoutSeconds;

/** The per-request state and the answers every step may give (each records its outcome once). */
function attempt<I>(
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
    reject(code: string, reason: string, retry?: { nextAction: string; afterSeconds: number }): PaidResponse {
      const ch = buildChallenge({
        tier,
        resource,
        config: quote,
        params: raw.params,
        error: code,
        reason,
        ...(retry ? { retryable: true, nextAction: retry.nextAction } : {}),
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
    /** 402 `payment_in_flight`: the same authorization is being settled or decided; retry it. */
    inFlight(reason = 'this authorization is being settled by another request right now'): PaidResponse {
      return a.reject('payment_in_flight', reason, {
        nextAction:
          'Another request is settling this very authorization for this resource. Retry the identical request with the SAME X-PAYMENT after Retry-After: once it has settled, its receipt serves this resource; never re-sign meanwhile.',
        afterSeconds: RETRY_AFTER_SECONDS,
      });
    },
  };
  return a;
}
type Attempt = ReturnType<typeof attempt>;

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
  return { header, decoded: d.decoded, receiptKey: sha256(`${header}\n${a.resource}`) };
}

/** Step 5: the same header for the byte-identical resource, unexpired → the stored answer. */
async function replayReceipt(a: Attempt, p: Presented): Promise<PaidResponse | null> {
  const receipt = await findReceipt(a.ctx.db, p.receiptKey, a.now);
  if (!receipt || receipt.resource !== a.resource) return null;
  return serveReceipt(a, p.receiptKey, receipt);
}

/**
 * The answer of a settled payment from its receipt: the stored bytes (`reused`), or, when the
 * paid run never stored them (the answer is still owed: the run failed after settling, or the
 * settlement was recorded later from the journal or the chain), computed now (`served_on_retry`).
 */
async function serveReceipt(
  a: Attempt,
  receiptKey: string,
  receipt: NonNullable<Awaited<ReturnType<typeof findReceipt>>>,
): Promise<PaidResponse> {
  const settlement = { transaction: receipt.settlement_tx, network: receipt.network, payer: receipt.payer };
  a.settled = settlement;
  // Stored bytes: replayed as they are, outside the paid-run slots (no handler runs: one
  // primary-key read, as cheap as a free answer, and refusing it would keep a paid answer from
  // its buyer for nothing).
  if (receipt.body !== null)
    return a.paidAnswer(receipt.body, Number(receipt.body_status ?? 200), settlement, 'reused');
  // The answer is owed: the handler runs, in a paid-run slot like a first run (taken before the
  // lease, so a refusal leaves the lease free for the retry).
  return inPaidRunSlot(a, async () => {
    // Compute it once, under a lease, so concurrent replays never run it twice.
    const staleBefore = new Date(a.now.getTime() - ANSWER_LEASE_SECONDS * 1000);
    if (!(await leaseReceiptRun(a.ctx.db, receiptKey, a.now, staleBefore))) {
      return a.reject(
        'payment_in_flight',
        'the answer paid by this authorization is being computed by another request right now',
        {
          nextAction:
            'Retry the identical request with the SAME X-PAYMENT after Retry-After: the paid answer is being prepared and will be served from its receipt; never re-sign meanwhile.',
          afterSeconds: RETRY_AFTER_SECONDS,
        },
      );
    }
    const v = await a.handler.validate(a.ctx, a.raw);
    if (!v.ok) return a.refused(v.status, v.body);
    const out = await runAndStore(a.ctx, a.handler, v.input, receiptKey, receipt.settlement_tx);
    return a.paidAnswer(out.text, out.status, settlement, 'served_on_retry');
  });
}

/** Serves the receipt of a settlement just recorded (journal, chain) to the buyer's retry. */
async function serveOwed(a: Attempt, receiptKey: string): Promise<PaidResponse> {
  const receipt = await findReceipt(a.ctx.db, receiptKey, a.now);
  if (!receipt || receipt.resource !== a.resource) return a.inFlight();
  return serveReceipt(a, receiptKey, receipt);
}

/** Step 6: requirement, resource, time window, signature; no network. */
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
    requirementMismatch(decoded, requirement, a.resource) ??
    timeWindowRejection(auth, a.now) ??
    (await signatureRejection(decoded, requirement));
  if (local) return a.reject(local.error, local.reason);
  return {
    ...p,
    requirement,
    claimKey: [requirement.network, auth.from.toLowerCase(), auth.nonce.toLowerCase()],
  };
}

/** Step 7: an authorization already claimed → refused, unless its settle outcome is unknown. */
async function refuseKnownClaim(a: Attempt, p: Checked): Promise<PaidResponse | null> {
  const known = await findClaim(a.ctx.db, p.claimKey, settleTimeout(a.ctx));
  if (!known) return null;
  if (known.resource !== a.resource) {
    return a.reject(
      'payment_resource_mismatch',
      'this authorization was presented for a different resource; a receipt never unlocks another resource',
    );
  }
  let status = known.status;
  if (status === 'settling') {
    // Settled by this process (journaled) but never recorded: record it now and serve it.
    const journaled = await a.ctx.journal?.find(p.claimKey).catch((err: unknown) => {
      logger('paywall').error(
        { err: (err as Error).message, journal: a.ctx.journal?.path },
        'could not read the settlement journal',
      );
      return undefined;
    });
    if (journaled) {
      a.settled = { transaction: journaled.tx, network: journaled.network, payer: journaled.payer };
      await recordJournaled(a.ctx.db, journaled, receiptExpiry(a));
      await a.ctx.journal!.recorded(p.claimKey).catch(() => undefined);
      logger('paywall').info(
        { outcome: 'reconciled', tx: journaled.tx, source: 'journal' },
        'settlement recorded from the journal on a retry',
      );
      recordPayment('reconciled');
      return serveOwed(a, journaled.receipt_key);
    }
    if (!known.stale) return a.inFlight();
    // Stuck past the settle timeout: its process died or lost its database. One retry reopens
    // it and decides it below; concurrent ones answer in flight.
    if (!(await reopenStaleClaim(a.ctx.db, p.claimKey, settleTimeout(a.ctx)))) return a.inFlight();
    status = 'settling-unknown';
  }
  if (status === 'settling-unknown') return decideUnknown(a, p, known);
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

function receiptExpiry(a: Attempt): Date {
  return new Date(a.now.getTime() + a.ctx.config.receiptReuseSeconds * 1000);
}

/**
 * A claim whose settlement outcome is unknown, decided from the chain when this context can read
 * it (`spentOnChain`, the decision the reconciliation makes too): spent → the settlement is
 * recorded and the retry served (no new charge); spent with no transaction visible → in flight
 * (the reconciliation records it once the transaction shows); unspent → null (the request goes on:
 * verified, the claim taken over, settled once). Without a chain reader, or when the chain cannot
 * be read, null too: the facilitator's verify decides (see verifySettleAndRun).
 */
async function decideUnknown(
  a: Attempt,
  p: Checked,
  known: { settlement_tx: string | null; receipt_key: string | null },
): Promise<PaidResponse | null> {
  if (!a.ctx.readAuthorization) return null;
  const [network, payer, nonce] = p.claimKey;
  const spent = await spentOnChain(
    a.ctx.readAuthorization,
    { network, asset: p.requirement.asset, payer, nonce },
    known.settlement_tx,
  );
  if (spent.kind === 'unreadable') {
    logger('paywall').warn(
      { err: spent.error, network },
      'could not read the authorization state on chain; the facilitator decides',
    );
    return null;
  }
  if (spent.kind === 'unspent') {
    logger('paywall').info({ outcome: 'released', network }, 'unknown settlement found unspent on chain');
    recordPayment('released');
    return null;
  }
  if (spent.kind === 'spent_tx_unknown')
    return a.inFlight('this authorization was spent on chain; its settlement is being reconciled');
  const { tx } = spent;
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
    { outcome: 'reconciled', tx, network, source: 'chain' },
    'unknown settlement found spent on chain: recorded, the retry is served',
  );
  recordPayment('reconciled');
  return serveOwed(a, receiptKey);
}

/**
 * A request that lost the race for its authorization (another request claimed or settled it):
 * served from the receipt when the winner has stored one, else `payment_in_flight` (retry the
 * same header), never `payment_already_used`. Null when no claim for this resource exists.
 */
async function raceLoser(a: Attempt, p: Checked): Promise<PaidResponse | null> {
  const claim = await findClaim(a.ctx.db, p.claimKey, settleTimeout(a.ctx));
  if (!claim) return null;
  if (claim.resource !== a.resource) {
    return a.reject(
      'payment_resource_mismatch',
      'this authorization was presented for a different resource; a receipt never unlocks another resource',
    );
  }
  return (await replayReceipt(a, p)) ?? a.inFlight();
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
  const claimed = await claimAuthorization(a.ctx.db, claimKey, {
    resource: a.resource,
    amount: requirement.amount,
    receiptKey,
    validBefore: auth.validBefore,
  });
  if (!claimed) {
    return (
      (await raceLoser(a, p)) ??
      a.reject('payment_already_used', 'this authorization has already been used for a call')
    );
  }

  const settled = await settle(a, payload, requirement, claimKey);
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
  if (recorded && journaled) await a.ctx.journal!.recorded(claimKey).catch(() => undefined);
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
  claimKey: ClaimKey,
): Promise<SettleResponse | PaidResponse> {
  let settled;
  try {
    settled = await callSettle(a.facilitator(), payload, requirement);
  } catch (err) {
    if (err instanceof FacilitatorUnavailableError) {
      if (err.failure === 'not_sent') await releaseClaim(a.ctx.db, claimKey);
      else await markUnknown(a.ctx, claimKey);
      return a.unavailable();
    }
    await markUnknown(a.ctx, claimKey);
    throw err;
  }
  if (settled.success) return settled;
  if (SETTLE_UNKNOWN_REASONS.has(settled.errorReason ?? '')) {
    await markUnknown(a.ctx, claimKey, settled.transaction || null);
    return a.unavailable();
  }
  await releaseClaim(a.ctx.db, claimKey);
  return a.reject(
    safeCode(settled.errorReason, 'settlement_failed'),
    settled.errorMessage?.slice(0, 300) ??
      `the settlement failed (${settled.errorReason ?? 'no reason given'}); nothing was charged`.slice(
        0,
        300,
      ),
  );
}

async function markUnknown(ctx: PaywallContext, key: ClaimKey, tx: string | null = null): Promise<void> {
  recordPayment('settling_unknown');
  await markClaimUnknown(ctx.db, key, tx);
}

/**
 * Runs the handler and stores its answer's bytes on the receipt (first writer wins: a concurrent
 * writer's stored bytes are served instead, so every reuse sees one answer).
 */
async function runAndStore<I>(
  ctx: PaywallContext,

  handler: PaidHandler<I>,
  input: I,
  receiptKey: string,
  tx: string,
): Promise<{ text: string; status: number }> {
  const out = await handler.run(ctx, input, { receipt: tx });
  const text = JSON.stringify(out.body);
  try {
    const earlier = await storeReceiptAnswer(ctx.db, receiptKey, text, out.status);
    if (earlier) return earlier;
  } catch (err) {
    logger('paywall').error({ err, tx }, 'could not store the paid answer');
  }
  return { text, status: out.status };
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
