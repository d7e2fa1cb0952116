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
 *     is written, `X-Payment-Reused: true`. (A receipt whose paid run never stored its answer,
 *     because that run failed after settling, runs the handler once under a lease and stores it.)
 *  6. Local checks, no network (src/payments/exact-checks.ts): the payload's `resource` and every
 *     field of `accepted` must match this request's requirement for that network, the signed
 *     authorization must pay exactly the amount to the treasury → else 402
 *     `payment_requirements_mismatch`; the time window (`payment_expired`, `payment_not_yet_valid`)
 *     and the EIP-3009 typed-data signature (`invalid_payment_signature`).
 *  7. The authorization's claim row, if any: bound to another resource → 402
 *     `payment_resource_mismatch` (a `settling-unknown` claim too: it stays bound to its resource);
 *     being settled right now → 402 `payment_in_flight`; already paid → 402 `payment_already_used`.
 *  8. Capacity: more than `MAX_CONCURRENT_PAID_RUNS` paid runs in this process → 503
 *     `paid_capacity_exhausted` + Retry-After, before the facilitator is asked (nothing consumed).
 *  9. Facilitator verify → invalid: 402 with its reason; unreachable: 503 `facilitator_unavailable`.
 * 10. handler.validate → 404/422 answered as is, WITHOUT settling: the authorization stays unused.
 * 11. Atomic claim of (network, payer, nonce) (INSERT … ON CONFLICT DO NOTHING) → taken: 402
 *     `payment_already_used`.
 * 12. Facilitator settle:
 *     - success → claim `settled`, receipt row stored (expires now + RECEIPT_REUSE_SECONDS), then
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
 * Every answer leaves through one place (`finish`), where the outcome of the paid request is known
 * (the `onOutcome` option). Amounts are base-unit strings compared as bigint; no float touches a price.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { decodePaymentSignatureHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { z } from 'zod';
import type { App, AppContext, AppEnv } from '../doors/http/context.js';
import type { PaidHandler, RawPaidRequest } from '../doors/http/paid-handlers.js';
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
import { PRICE_TIERS, tierById, type PriceTier } from './pricing.js';
import { logger } from '../log.js';
import { recordPayment, type PaymentOutcome } from '../metrics.js';

/** Largest accepted payment header (a real EIP-3009 payload is well under 2 KiB). */
export const MAX_PAYMENT_HEADER_BYTES = 16 * 1024;
export const RETRY_AFTER_SECONDS = 5;
/** Default of MAX_CONCURRENT_PAID_RUNS. */
export const DEFAULT_MAX_CONCURRENT_PAID_RUNS = 16;
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
  paid: ['settled', false],
  reused: ['reused', false],
};

/** How one metered request ended (one value per answer; see `PaywallOptions.onOutcome`). */
export type PaidOutcome =
  | 'not_configured'
  | 'conflicting_headers'
  | 'challenged'
  | 'rejected'
  | 'busy'
  | 'unavailable'
  | 'invalid_input'
  | 'paid'
  | 'reused';

export interface PaidOutcomeEvent {
  outcome: PaidOutcome;
  /** Pricing tier id. */
  tier: string;
  /** Canonical resource (`GET /path?query`). */
  resource: string;
  /** HTTP status answered. */
  status: number;
  /** The `error` code of a rejection or refusal (402/400/503). */
  error?: string;
}

export interface PaywallOptions {
  /** Called once per metered request with its final outcome (metrics, logs). Must not throw. */
  onOutcome?: (event: PaidOutcomeEvent) => void;
}

export interface Paywall {
  /** Answers one metered request end to end (challenge, payment, handler). */
  handle<I>(c: Context<AppEnv>, handler: PaidHandler<I>): Promise<Response>;
}

function sha256(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

/**
 * The payment header of a request: `X-PAYMENT` (contract) or x402 v2 `PAYMENT-SIGNATURE`; both with
 * different values is a conflict (never guess which one the client meant).
 */
function paymentHeader(c: Context): { header?: string; conflict: boolean } {
  const norm = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());
  const x = norm(c.req.header('x-payment'));
  const s = norm(c.req.header('payment-signature'));
  if (x !== undefined && s !== undefined && x !== s) return { conflict: true };
  return { header: x ?? s, conflict: false };
}

function rawRequest(c: Context): RawPaidRequest {
  return { params: { ...c.req.param() } as Record<string, string>, query: c.req.queries() ?? {} };
}

export function facilitatorUnavailableBody(message?: string) {
  return {
    error: 'facilitator_unavailable',
    message:
      message ??
      'The payment facilitator could not be reached. Your authorization was NOT used: retry the identical request with the SAME X-PAYMENT after Retry-After; never re-sign.',
    retryable: true,
    retry_after_seconds: RETRY_AFTER_SECONDS,
  };
}

export function paidCapacityBody() {
  return {
    error: 'paid_capacity_exhausted',
    message:
      'Too many paid requests are being answered right now. Nothing was verified, settled or charged: retry the identical request with the SAME X-PAYMENT after Retry-After; never re-sign.',
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

/** The x402 settle response of a settled payment, as the base64 `PAYMENT-RESPONSE` header value. */
export function paymentResponseHeader(s: { transaction: string; network: string; payer: string | null }): string {
  const response: SettleResponse = {
    success: true,
    transaction: s.transaction,
    network: s.network as SettleResponse['network'],
    ...(s.payer ? { payer: s.payer } : {}),
  };
  return encodePaymentResponseHeader(response);
}

/** Paid runs in flight, per application context (every paywall of one process shares it). */
const inFlight = new WeakMap<AppContext, { active: number }>();

interface ReceiptRow {
  resource: string;
  settlement_tx: string;
  network: string;
  payer: string;
  body: string | null;
  body_status: number | null;
}

export function createPaywall(ctx: AppContext, options: PaywallOptions = {}): Paywall {
  let httpFacilitator: FacilitatorClient | null = null;
  const facilitator = (): FacilitatorClient =>
    ctx.facilitator ?? (httpFacilitator ??= createHttpFacilitator(ctx.config.facilitatorUrl));
  let slots = inFlight.get(ctx);
  if (!slots) inFlight.set(ctx, (slots = { active: 0 }));
  const capacity = slots;

  async function handle<I>(c: Context<AppEnv>, handler: PaidHandler<I>): Promise<Response> {
    const url = new URL(c.req.url);
    const resource = canonicalResource(c.req.method, url);
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) if (!(k in query)) query[k] = v;
    // The tier: the handler's own, or its conditional sibling selected by the query
    // (?snapshot=true turns wallet-lookup into wallet-snapshot).
    const tier = selectTier(handler.tier, query);
    let outcome: PaidOutcome = 'rejected';
    let error: string | undefined;
    const res = await answer(c, handler, tier, resource, (o, e) => {
      outcome = o;
      error = e;
      const [metric, code] = METRIC_OF_OUTCOME[o];
      recordPayment(metric, code ? (e ?? o) : undefined, c);
    });
    if (options.onOutcome) {
      try {
        options.onOutcome({ outcome, tier: tier.id, resource, status: res.status, ...(error ? { error } : {}) });
      } catch {
        // an observer never breaks an answer
      }
    }
    return res;
  }

  async function answer<I>(
    c: Context<AppEnv>,
    handler: PaidHandler<I>,
    tier: PriceTier,
    resource: string,
    finish: (outcome: PaidOutcome, error?: string) => void,
  ): Promise<Response> {
    const treasury = ctx.config.treasuryAddress;
    if (!treasury) {
      finish('not_configured', 'payments_not_configured');
      return c.json(paymentsNotConfiguredBody(), 503, { 'Cache-Control': 'no-store' });
    }
    const raw = rawRequest(c);
    const quote: QuoteConfig = {
      treasuryAddress: treasury,
      facilitatorUrl: ctx.config.facilitatorUrl,
      paymentAssetOverrides: ctx.config.paymentAssetOverrides,
    };
    const reject = (code: string, reason: string, retry?: { nextAction: string; afterSeconds: number }): Response => {
      finish('rejected', code);
      const ch = buildChallenge({
        tier,
        resource,
        config: quote,
        params: raw.params,
        error: code,
        reason,
        ...(retry ? { retryable: true, nextAction: retry.nextAction } : {}),
      });
      return c.json(ch.body, 402, retry ? { ...ch.headers, 'Retry-After': String(retry.afterSeconds) } : ch.headers);
    };
    const unavailable = (): Response => {
      finish('unavailable', 'facilitator_unavailable');
      return c.json(facilitatorUnavailableBody(), 503, { 'Retry-After': String(RETRY_AFTER_SECONDS), 'Cache-Control': 'no-store' });
    };
    const refused = (status: 404 | 422, body: unknown): Response => {
      finish('invalid_input');
      return c.json(body as object, status);
    };
    /** A paid answer: the exact bytes, with the receipt and the x402 settlement headers. */
    const paidAnswer = (
      text: string,
      status: number,
      s: { transaction: string; network: string; payer: string | null },
      reused: boolean,
    ): Response => {
      finish(reused ? 'reused' : 'paid');
      const settlement = paymentResponseHeader(s);
      return c.body(text, status as 200, {
        'Content-Type': 'application/json',
        'X-Payment-Receipt': s.transaction,
        'X-Payment-Reused': reused ? 'true' : 'false',
        'PAYMENT-RESPONSE': settlement,
        'X-PAYMENT-RESPONSE': settlement,
        'Access-Control-Expose-Headers': 'PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, X-Payment-Receipt, X-Payment-Reused',
        'Cache-Control': 'no-store',
      });
    };

    const { header, conflict } = paymentHeader(c);
    if (conflict) {
      finish('conflicting_headers', 'conflicting_payment_headers');
      return c.json(conflictingHeadersBody(), 400, { 'Cache-Control': 'no-store' });
    }
    if (header === undefined) {
      finish('challenged', 'payment_required');
      const ch = buildChallenge({ tier, resource, config: quote, params: raw.params });
      return c.json(ch.body, 402, ch.headers);
    }

    // ---- decode (never a 500 for hostile input)
    if (header.length > MAX_PAYMENT_HEADER_BYTES) return reject('invalid_payment_header', 'the payment header is too large');
    let decoded: DecodedPayment;
    try {
      const parsed = paymentPayloadSchema.safeParse(decodePaymentSignatureHeader(header));
      if (!parsed.success) {
        return reject('invalid_payment_header', 'the payment header is not an x402 v2 exact EIP-3009 payload');
      }
      decoded = parsed.data;
    } catch {
      return reject('invalid_payment_header', 'the payment header is not base64-encoded JSON');
    }

    const now = ctx.now();
    const receiptKey = sha256(`${header}\n${resource}`);

    // ---- receipt reuse: the same header for the byte-identical resource, unexpired
    const receipts = await ctx.db.query<ReceiptRow & Record<string, unknown>>(
      `SELECT resource, settlement_tx, network, payer, body, body_status
         FROM payment_receipts WHERE receipt_key = $1 AND expires_at > $2`,
      [receiptKey, now],
    );
    const receipt = receipts[0];
    if (receipt && receipt.resource === resource) {
      const settlement = { transaction: receipt.settlement_tx, network: receipt.network, payer: receipt.payer };
      if (receipt.body !== null) return paidAnswer(receipt.body, Number(receipt.body_status ?? 200), settlement, true);
      // Paid, but its answer was never stored (the paid run failed after settling): compute it
      // once, under a lease, so concurrent replays never run it twice.
      const leased = await ctx.db.query(
        `UPDATE payment_receipts SET run_started_at = $2
          WHERE receipt_key = $1 AND body IS NULL AND (run_started_at IS NULL OR run_started_at < $3) RETURNING receipt_key`,
        [receiptKey, now, new Date(now.getTime() - ANSWER_LEASE_SECONDS * 1000)],
      );
      if (leased.length === 0) {
        return reject('payment_in_flight', 'the answer paid by this authorization is being computed by another request right now', {
          nextAction:
            'Retry the identical request with the SAME X-PAYMENT after Retry-After: the paid answer is being prepared and will be served from its receipt; never re-sign meanwhile.',
          afterSeconds: RETRY_AFTER_SECONDS,
        });
      }
      const v = await handler.validate(ctx, raw);
      if (!v.ok) return refused(v.status, v.body);
      const out = await runAndStore(handler, v.input, receiptKey, receipt.settlement_tx);
      return paidAnswer(out.text, out.status, settlement, true);
    }

    // ---- local checks: requirement, resource, time window, signature (no network)
    const auth = decoded.payload.authorization;
    const requirement = paymentRequirements(tier, quote).find((r) => r.network === decoded.accepted.network);
    if (!requirement) {
      return reject('payment_requirements_mismatch', `network ${JSON.stringify(decoded.accepted.network).slice(0, 80)} is not offered`);
    }
    const local =
      requirementMismatch(decoded, requirement, resource) ??
      timeWindowRejection(auth, now) ??
      (await signatureRejection(decoded, requirement));
    if (local) return reject(local.error, local.reason);

    const claimKey = [requirement.network, auth.from.toLowerCase(), auth.nonce.toLowerCase()] as const;

    // ---- an authorization we already know
    const claims = await ctx.db.query<{ status: string; resource: string }>(
      'SELECT status, resource FROM payment_claims WHERE network = $1 AND payer = $2 AND nonce = $3',
      [...claimKey],
    );
    const known = claims[0];
    if (known) {
      if (known.resource !== resource) {
        return reject('payment_resource_mismatch', 'this authorization was presented for a different resource; a receipt never unlocks another resource');
      }
      if (known.status === 'settling') {
        return reject('payment_in_flight', 'this authorization is being settled by another request right now', {
          nextAction:
            'Another request is settling this very authorization for this resource. Retry the identical request with the SAME X-PAYMENT after Retry-After: once it has settled, its receipt serves this resource; never re-sign meanwhile.',
          afterSeconds: RETRY_AFTER_SECONDS,
        });
      }
      if (known.status !== 'settling-unknown') {
        return reject('payment_already_used', 'this authorization has already paid one call and its receipt is no longer reusable');
      }
    }

    // ---- capacity: refuse before anything is verified or settled
    const max = ctx.config.maxConcurrentPaidRuns ?? DEFAULT_MAX_CONCURRENT_PAID_RUNS;
    if (capacity.active >= max) {
      finish('busy', 'paid_capacity_exhausted');
      return c.json(paidCapacityBody(), 503, { 'Retry-After': String(RETRY_AFTER_SECONDS), 'Cache-Control': 'no-store' });
    }
    capacity.active += 1;
    try {
      return await settleAndRun();
    } finally {
      capacity.active -= 1;
    }

    async function settleAndRun(): Promise<Response> {
      // ---- verify (stateless at the facilitator)
      const payload: PaymentPayload = {
        x402Version: decoded.x402Version,
        accepted: decoded.accepted as PaymentRequirements,
        payload: decoded.payload,
        ...(decoded.extensions ? { extensions: decoded.extensions } : {}),
      };
      const req = requirement!;
      let verified;
      try {
        verified = await callVerify(facilitator(), payload, req);
      } catch (err) {
        if (err instanceof FacilitatorUnavailableError) return unavailable();
        throw err;
      }
      if (!verified.isValid) {
        return reject(
          safeCode(verified.invalidReason, 'payment_invalid'),
          verified.invalidMessage?.slice(0, 300) ?? `the facilitator refused this authorization (${verified.invalidReason ?? 'no reason given'})`.slice(0, 300),
        );
      }

      recordPayment('verified', undefined, c);

      // ---- validate BEFORE settling: a refused input consumes nothing
      const v = await handler.validate(ctx, raw);
      if (!v.ok) return refused(v.status, v.body);

      // ---- claim atomically, then settle
      const claimed = await claim(ctx, claimKey, resource, req.amount, receiptKey, auth.validBefore);
      if (!claimed) return reject('payment_already_used', 'this authorization has already been used for a call');

      let settled;
      try {
        settled = await callSettle(facilitator(), payload, req);
      } catch (err) {
        if (err instanceof FacilitatorUnavailableError) {
          if (err.failure === 'not_sent') await releaseClaim(ctx, claimKey);
          else await markUnknown(ctx, claimKey);
          return unavailable();
        }
        await markUnknown(ctx, claimKey);
        throw err;
      }
      if (!settled.success) {
        if (SETTLE_UNKNOWN_REASONS.has(settled.errorReason ?? '')) {
          await markUnknown(ctx, claimKey, settled.transaction || null);
          return unavailable();
        }
        await releaseClaim(ctx, claimKey);
        return reject(
          safeCode(settled.errorReason, 'settlement_failed'),
          settled.errorMessage?.slice(0, 300) ?? `the settlement failed (${settled.errorReason ?? 'no reason given'}); nothing was charged`.slice(0, 300),
        );
      }

      const tx = settled.transaction;
      const payer = (settled.payer ?? auth.from).toLowerCase();
      try {
        await recordSettlement(ctx, {
          claimKey,
          receiptKey,
          resource,
          amount: req.amount,
          tx,
          payer,
          expires: new Date(now.getTime() + ctx.config.receiptReuseSeconds * 1000),
          runStartedAt: now,
        });
      } catch (err) {
        // Paid on chain: the answer is owed even when the bookkeeping failed.
        logger('paywall').error({ err, tx }, 'settled but could not record the settlement');
      }
      const out = await runAndStore(handler, v.input, receiptKey, tx);
      return paidAnswer(out.text, out.status, { transaction: tx, network: req.network, payer }, false);
    }
  }

  /**
   * Runs the handler and stores its answer's bytes on the receipt (first writer wins: a concurrent
   * writer's stored bytes are served instead, so every reuse sees one answer).
   */
  async function runAndStore<I>(
    handler: PaidHandler<I>,
    input: I,
    receiptKey: string,
    tx: string,
  ): Promise<{ text: string; status: number }> {
    const out = await handler.run(ctx, input, { receipt: tx });
    const text = JSON.stringify(out.body);
    try {
      const stored = await ctx.db.query(
        'UPDATE payment_receipts SET body = $2, body_status = $3 WHERE receipt_key = $1 AND body IS NULL RETURNING receipt_key',
        [receiptKey, text, out.status],
      );
      if (stored.length === 0) {
        const [r] = await ctx.db.query<{ body: string | null; body_status: number | null }>(
          'SELECT body, body_status FROM payment_receipts WHERE receipt_key = $1',
          [receiptKey],
        );
        if (r?.body != null) return { text: r.body, status: Number(r.body_status ?? 200) };
      }
    } catch (err) {
      logger('paywall').error({ err, tx }, 'could not store the paid answer');
    }
    return { text, status: out.status };
  }

  return { handle };
}

/** The handler's tier, or the conditional sibling on the same path selected by the query. */
function selectTier(tierId: string, query: Readonly<Record<string, string>>): PriceTier {
  const base = tierById(tierId);
  if (!base.conditional) return base;
  const siblings = [base, ...conditionalSiblings(base)];
  for (const t of siblings) {
    if (t.when_query && Object.entries(t.when_query).every(([k, val]) => query[k] === val)) return t;
  }
  return siblings.find((t) => !t.when_query) ?? base;
}

/** Tiers sharing the path pattern and method of `base` (e.g. wallet-lookup / wallet-snapshot). */
function conditionalSiblings(base: PriceTier): PriceTier[] {
  return PRICE_TIERS.filter((t) => t.path === base.path && t.method === base.method && t.id !== base.id);
}

/** A facilitator reason echoed as our error code only when it looks like one. */
function safeCode(reason: string | undefined, fallback: string): string {
  return reason && /^[a-z0-9_]{1,64}$/i.test(reason) ? reason : fallback;
}

export type ClaimKey = readonly [string, string, string];

async function claim(
  ctx: AppContext,
  key: ClaimKey,
  resource: string,
  amount: string,
  receiptKey: string,
  validBefore: string,
): Promise<boolean> {
  const inserted = await ctx.db.query(
    `INSERT INTO payment_claims (network, payer, nonce, resource, amount, status, receipt_key, valid_before)
     VALUES ($1, $2, $3, $4, $5, 'settling', $6, $7) ON CONFLICT (network, payer, nonce) DO NOTHING RETURNING nonce`,
    [...key, resource, amount, receiptKey, validBefore],
  );
  if (inserted.length > 0) return true;
  // A claim left by a settle of unknown outcome FOR THIS RESOURCE: the facilitator has just
  // verified the authorization as unused, so take it over (atomically: one retry wins).
  const taken = await ctx.db.query(
    `UPDATE payment_claims SET status = 'settling', receipt_key = $5, valid_before = $6, updated_at = now()
     WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling-unknown' AND resource = $4 RETURNING nonce`,
    [...key, resource, receiptKey, validBefore],
  );
  return taken.length > 0;
}

async function releaseClaim(ctx: AppContext, key: ClaimKey): Promise<void> {
  await ctx.db.query(
    "DELETE FROM payment_claims WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling'",
    [...key],
  );
}

async function markUnknown(ctx: AppContext, key: ClaimKey, tx: string | null = null): Promise<void> {
  recordPayment('settling_unknown');
  await ctx.db.query(
    `UPDATE payment_claims SET status = 'settling-unknown', settlement_tx = COALESCE($4, settlement_tx), updated_at = now()
     WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling'`,
    [...key, tx],
  );
}

/**
 * A settled authorization: the claim becomes `settled` and its receipt row is written (answer
 * bytes still empty), in one transaction. Also used by the reconciliation job.
 */
export async function recordSettlement(
  ctx: Pick<AppContext, 'db'>,
  s: {
    claimKey: ClaimKey;
    receiptKey: string;
    resource: string;
    amount: string;
    tx: string;
    payer: string;
    expires: Date;
    runStartedAt: Date | null;
  },
): Promise<void> {
  await ctx.db.transaction(async (q) => {
    await q.query(
      "UPDATE payment_claims SET status = 'settled', settlement_tx = $4, updated_at = now() WHERE network = $1 AND payer = $2 AND nonce = $3",
      [...s.claimKey, s.tx],
    );
    await q.query(
      `INSERT INTO payment_receipts (receipt_key, resource, network, payer, nonce, amount, settlement_tx, expires_at, run_started_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (receipt_key) DO NOTHING`,
      [s.receiptKey, s.resource, s.claimKey[0], s.payer, s.claimKey[2], s.amount, s.tx, s.expires, s.runStartedAt],
    );
  });
}

// ------------------------------------------------------------------------------------------ mount

export interface PaidRouteOptions<I> {
  /** HTTP method (metered routes are GET; HEAD follows GET in Hono). */
  method?: 'GET';
  /** OpenAPI-style path, e.g. `/reputation/wallet/{wallet}` (also served under /v1). */
  path: string;
  handler: PaidHandler<I>;
  /**
   * Optional OpenAPI operation (summary, description, tags, responses, …) registered for the
   * document only: the paywall, not zod, sees the request first, so no request schema is enforced.
   */
  openapi?: Record<string, unknown>;
}

/** Mounts a PaidHandler behind the paywall on `app`. */
export function registerPaidRoute<I>(app: App, ctx: AppContext, opts: PaidRouteOptions<I>, paywall: Paywall = createPaywall(ctx)): void {
  const honoPath = opts.path.replace(/\{([^}]+)\}/g, ':$1');
  if (opts.openapi) {
    app.openAPIRegistry.registerPath({
      responses: {},
      ...opts.openapi,
      method: 'get',
      path: opts.path,
    } as Parameters<App['openAPIRegistry']['registerPath']>[0]);
  }
  app.get(honoPath, (c) => paywall.handle(c, opts.handler));
}
