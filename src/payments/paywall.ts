/**
 * The x402 paywall in front of every metered route. Order (the contract's "Paid request lifecycle"):
 *
 *  1. TREASURY_ADDRESS unset → 503 `payments_not_configured` (nothing can be quoted without payTo).
 *  2. No `X-PAYMENT` (nor v2 `PAYMENT-SIGNATURE`) → 402 challenge, BEFORE any validation or query.
 *  3. Header too large / not base64 / not JSON / wrong shape → 402 `invalid_payment_header`.
 *  4. Receipt reuse: sha256(header + "\n" + canonical resource), unexpired → run without charge,
 *     `X-Payment-Reused: true`.
 *  5. The authorization's claim row, if any: already paid a different resource →
 *     402 `payment_resource_mismatch`; already paid → 402 `payment_already_used`; being settled
 *     right now → 402 `payment_in_flight`.
 *  6. Requirement match: network offered, scheme `exact`, asset, payTo == treasury, amount == the
 *     tier's amount (in `accepted` and in the signed authorization) → else 402
 *     `payment_requirements_mismatch`.
 *  7. Facilitator verify → invalid: 402 with its reason; unreachable: 503 `facilitator_unavailable`.
 *  8. handler.validate → 404/422 answered as is, WITHOUT settling: the authorization stays unused.
 *  9. Atomic claim of (network, payer, nonce) (INSERT … ON CONFLICT DO NOTHING) → taken: 402
 *     `payment_already_used`.
 * 10. Facilitator settle:
 *     - success → claim `settled`, receipt row stored (expires now + RECEIPT_REUSE_SECONDS), then
 *       handler.run; `X-Payment-Receipt: <tx>`, `X-Payment-Reused: false`.
 *     - explicit failure → claim released, 402 with the facilitator's reason.
 *     - not reached (connection refused) → claim released, 503 `facilitator_unavailable`.
 *     - unknown (timeout, 5xx, `settlement_pending`) → claim kept as `settling-unknown`, 503
 *       `facilitator_unavailable`. A retry with the same header re-verifies: if the authorization
 *       is still unused on chain the facilitator says valid, the claim is taken over atomically
 *       and settled; if it was spent, verify refuses and the claim stays for reconciliation.
 *
 * The receipt is stored right after settlement and before the query runs, so a client whose paid
 * request failed afterwards can replay the same header for the same resource free.
 * Amounts are base-unit strings compared as bigint; no float touches a price.
 */
import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { z } from 'zod';
import type { App, AppContext, AppEnv } from '../doors/http/context.js';
import type { PaidHandler, RawPaidRequest } from '../doors/http/paid-handlers.js';
import { buildChallenge, canonicalResource, paymentRequirements, type QuoteConfig } from './challenge.js';
import {
  callSettle,
  callVerify,
  createHttpFacilitator,
  FacilitatorUnavailableError,
  SETTLE_UNKNOWN_REASONS,
  type FacilitatorClient,
} from './facilitator.js';
import { PRICE_TIERS, tierById, type PriceTier } from './pricing.js';

/** Largest accepted payment header (a real EIP-3009 payload is well under 2 KiB). */
export const MAX_PAYMENT_HEADER_BYTES = 16 * 1024;
export const RETRY_AFTER_SECONDS = 5;

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

export interface Paywall {
  /** Answers one metered request end to end (challenge, payment, handler). */
  handle<I>(c: Context<AppEnv>, handler: PaidHandler<I>): Promise<Response>;
}

function sha256(s: string): string {
  return createHash('sha256').update(s, 'utf8').digest('hex');
}

/** The payment header of a request: `X-PAYMENT` (contract), else x402 v2 `PAYMENT-SIGNATURE`. */
function paymentHeader(c: Context): string | undefined {
  return c.req.header('x-payment') ?? c.req.header('payment-signature');
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

export function paymentsNotConfiguredBody() {
  return {
    error: 'payments_not_configured',
    message:
      'Metered routes are closed: the operator has not set TREASURY_ADDRESS, so no payment can be quoted or accepted. Nothing was charged. The free routes keep answering.',
    retryable: false,
  };
}

export function createPaywall(ctx: AppContext): Paywall {
  let httpFacilitator: FacilitatorClient | null = null;
  const facilitator = (): FacilitatorClient =>
    ctx.facilitator ?? (httpFacilitator ??= createHttpFacilitator(ctx.config.facilitatorUrl));

  async function handle<I>(c: Context<AppEnv>, handler: PaidHandler<I>): Promise<Response> {
    const treasury = ctx.config.treasuryAddress;
    if (!treasury) return c.json(paymentsNotConfiguredBody(), 503);

    const url = new URL(c.req.url);
    const resource = canonicalResource(c.req.method, url);
    const raw = rawRequest(c);
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) if (!(k in query)) query[k] = v;
    // The tier: the handler's own, or its conditional sibling selected by the query
    // (?snapshot=true turns wallet-lookup into wallet-snapshot).
    const tier = selectTier(handler.tier, query);
    const quote: QuoteConfig = {
      treasuryAddress: treasury,
      facilitatorUrl: ctx.config.facilitatorUrl,
      paymentAssetOverrides: ctx.config.paymentAssetOverrides,
    };
    const reject = (error: string, reason: string, retry?: { nextAction: string; afterSeconds: number }): Response => {
      const ch = buildChallenge({
        tier,
        resource,
        config: quote,
        params: raw.params,
        error,
        reason,
        ...(retry ? { retryable: true, nextAction: retry.nextAction } : {}),
      });
      return c.json(ch.body, 402, retry ? { ...ch.headers, 'Retry-After': String(retry.afterSeconds) } : ch.headers);
    };
    const unavailable = (): Response =>
      c.json(facilitatorUnavailableBody(), 503, { 'Retry-After': String(RETRY_AFTER_SECONDS), 'Cache-Control': 'no-store' });

    const header = paymentHeader(c);
    if (header === undefined || header.trim() === '') {
      const ch = buildChallenge({ tier, resource, config: quote, params: raw.params });
      return c.json(ch.body, 402, ch.headers);
    }

    // ---- decode (never a 500 for hostile input)
    if (header.length > MAX_PAYMENT_HEADER_BYTES) return reject('invalid_payment_header', 'the payment header is too large');
    let decoded: DecodedPayment;
    try {
      const parsed = paymentPayloadSchema.safeParse(decodePaymentSignatureHeader(header.trim()));
      if (!parsed.success) {
        return reject('invalid_payment_header', 'the payment header is not an x402 v2 exact EIP-3009 payload');
      }
      decoded = parsed.data;
    } catch {
      return reject('invalid_payment_header', 'the payment header is not base64-encoded JSON');
    }

    const now = ctx.now();
    const receiptKey = sha256(`${header.trim()}\n${resource}`);

    // ---- receipt reuse: the same header for the byte-identical resource, unexpired
    const receipts = await ctx.db.query<{ resource: string; settlement_tx: string }>(
      'SELECT resource, settlement_tx FROM payment_receipts WHERE receipt_key = $1 AND expires_at > $2',
      [receiptKey, now],
    );
    const receipt = receipts[0];
    if (receipt && receipt.resource === resource) {
      const v = await handler.validate(ctx, raw);
      if (!v.ok) return c.json(v.body as object, v.status);
      const out = await handler.run(ctx, v.input, { receipt: receipt.settlement_tx });
      return c.json(out.body as object, out.status, {
        'X-Payment-Receipt': receipt.settlement_tx,
        'X-Payment-Reused': 'true',
        'Cache-Control': 'no-store',
      });
    }

    // ---- requirement match
    const auth = decoded.payload.authorization;
    const requirement = paymentRequirements(tier, quote).find((r) => r.network === decoded.accepted.network);
    if (!requirement) {
      return reject('payment_requirements_mismatch', `network ${JSON.stringify(decoded.accepted.network).slice(0, 80)} is not offered`);
    }
    const mismatch = requirementMismatch(decoded, requirement);
    if (mismatch) return reject('payment_requirements_mismatch', mismatch);

    const claimKey = [requirement.network, auth.from.toLowerCase(), auth.nonce.toLowerCase()] as const;

    // ---- an authorization we already know
    const claims = await ctx.db.query<{ status: string; resource: string }>(
      'SELECT status, resource FROM payment_claims WHERE network = $1 AND payer = $2 AND nonce = $3',
      [...claimKey],
    );
    const known = claims[0];
    if (known && known.status !== 'settling-unknown') {
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
      return reject('payment_already_used', 'this authorization has already paid one call and its receipt is no longer reusable');
    }

    // ---- verify (stateless at the facilitator)
    const payload: PaymentPayload = {
      x402Version: decoded.x402Version,
      accepted: decoded.accepted as PaymentRequirements,
      payload: decoded.payload,
      ...(decoded.extensions ? { extensions: decoded.extensions } : {}),
    };
    let verified;
    try {
      verified = await callVerify(facilitator(), payload, requirement);
    } catch (err) {
      if (err instanceof FacilitatorUnavailableError) return unavailable();
      throw err;
    }
    if (!verified.isValid) {
      return reject(safeCode(verified.invalidReason, 'payment_invalid'), verified.invalidMessage?.slice(0, 300) ?? 'the facilitator refused this authorization');
    }

    // ---- validate BEFORE settling: a refused input consumes nothing
    const v = await handler.validate(ctx, raw);
    if (!v.ok) return c.json(v.body as object, v.status);

    // ---- claim atomically, then settle
    const claimed = await claim(ctx, claimKey, resource, requirement.amount);
    if (!claimed) return reject('payment_already_used', 'this authorization has already been used for a call');

    let settled;
    try {
      settled = await callSettle(facilitator(), payload, requirement);
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
      return reject(safeCode(settled.errorReason, 'settlement_failed'), settled.errorMessage?.slice(0, 300) ?? 'the settlement failed; nothing was charged');
    }

    const tx = settled.transaction;
    const expires = new Date(now.getTime() + ctx.config.receiptReuseSeconds * 1000);
    try {
      await ctx.db.transaction(async (q) => {
        await q.query(
          "UPDATE payment_claims SET status = 'settled', settlement_tx = $4, updated_at = now() WHERE network = $1 AND payer = $2 AND nonce = $3",
          [...claimKey, tx],
        );
        await q.query(
          `INSERT INTO payment_receipts (receipt_key, resource, network, payer, nonce, amount, settlement_tx, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (receipt_key) DO NOTHING`,
          [receiptKey, resource, ...claimKey, requirement.amount, tx, expires],
        );
      });
    } catch (err) {
      // Paid on chain: the answer is owed even when the bookkeeping failed.
      console.error(`[paywall] settled ${tx} but could not record it: ${(err as Error).message}`);
    }

    const out = await handler.run(ctx, v.input, { receipt: tx });
    return c.json(out.body as object, out.status, {
      'X-Payment-Receipt': tx,
      'X-Payment-Reused': 'false',
      'Cache-Control': 'no-store',
    });
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

function requirementMismatch(p: DecodedPayment, r: PaymentRequirements): string | null {
  const a = p.accepted;
  const auth = p.payload.authorization;
  const eq = (x: string, y: string) => x.toLowerCase() === y.toLowerCase();
  if (a.scheme !== r.scheme) return `scheme must be ${r.scheme}`;
  if (!eq(a.asset, r.asset)) return `asset must be ${r.asset} on ${r.network}`;
  if (!eq(a.payTo, r.payTo) || !eq(auth.to, r.payTo)) return `payTo must be the treasury ${r.payTo}`;
  if (BigInt(a.amount) !== BigInt(r.amount) || BigInt(auth.value) !== BigInt(r.amount)) {
    return `amount must be exactly ${r.amount} base units`;
  }
  return null;
}

/** A facilitator reason echoed as our error code only when it looks like one. */
function safeCode(reason: string | undefined, fallback: string): string {
  return reason && /^[a-z0-9_]{1,64}$/i.test(reason) ? reason : fallback;
}

type ClaimKey = readonly [string, string, string];

async function claim(ctx: AppContext, key: ClaimKey, resource: string, amount: string): Promise<boolean> {
  const inserted = await ctx.db.query(
    `INSERT INTO payment_claims (network, payer, nonce, resource, amount, status)
     VALUES ($1, $2, $3, $4, $5, 'settling') ON CONFLICT (network, payer, nonce) DO NOTHING RETURNING nonce`,
    [...key, resource, amount],
  );
  if (inserted.length > 0) return true;
  // A claim left by a settle of unknown outcome: the facilitator has just verified the
  // authorization as unused, so take it over (atomically: one retry wins).
  const taken = await ctx.db.query(
    `UPDATE payment_claims SET status = 'settling', resource = $4, updated_at = now()
     WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling-unknown' RETURNING nonce`,
    [...key, resource],
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
  await ctx.db.query(
    `UPDATE payment_claims SET status = 'settling-unknown', settlement_tx = COALESCE($4, settlement_tx), updated_at = now()
     WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling'`,
    [...key, tx],
  );
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
