/**
 * The facilitator seam of the paywall. The interface is x402's own `FacilitatorClient`
 * (verify / settle / getSupported); the production implementation is @x402/core's
 * `HTTPFacilitatorClient` on `X402_FACILITATOR_URL`; tests inject any object with the same shape
 * (a local x402 facilitator behind HTTP, or a stub).
 *
 * What this module adds is the classification of failures, which the paywall needs to keep its
 * promise "a 503 consumes nothing":
 *  - `not_sent`: the request certainly never reached the facilitator (connection refused, DNS
 *    failure, ...). Nothing can have been settled.
 *  - `unknown`: the request may have reached it (timeout, connection reset, 5xx, unreadable
 *    answer). For `verify` that is harmless (verify keeps no state); for `settle` the outcome is
 *    unknown, not failed: the authorization may have been spent on chain.
 */
import { HTTPFacilitatorClient, type FacilitatorClient } from '@x402/core/http';
import { FacilitatorTimeoutError, SettleError, VerifyError } from '@x402/core/types';
import type { SettleResponse, VerifyResponse } from '@x402/core/types';

export type { FacilitatorClient };

/** Per-request deadline of the production client (verify and settle each). */
const FACILITATOR_TIMEOUT_MS = 30_000;

export function createHttpFacilitator(
  url: string,
  timeoutMs: number = FACILITATOR_TIMEOUT_MS,
): FacilitatorClient {
  return new HTTPFacilitatorClient({ url, timeoutMs });
}

type FacilitatorFailure = 'not_sent' | 'unknown';

/** Thrown by {@link callVerify}/{@link callSettle} when the facilitator could not give an answer. */
export class FacilitatorUnavailableError extends Error {
  override name = 'FacilitatorUnavailableError';
  constructor(
    readonly operation: 'verify' | 'settle',
    readonly failure: FacilitatorFailure,
    message: string,
  ) {
    super(message);
  }
}

/** Error codes (node/undici) that mean the connection was never established. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_INVALID_URL',
]);

function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  let cur: unknown = err;
  for (let depth = 0; depth < 8 && cur !== null && typeof cur === 'object'; depth++) {
    const o = cur as { code?: unknown; errors?: unknown; cause?: unknown };
    if (typeof o.code === 'string') codes.push(o.code);
    // AggregateError (happy eyeballs: every address refused).
    if (Array.isArray(o.errors)) for (const e of o.errors) codes.push(...errorCodes(e));
    cur = o.cause;
  }
  return codes;
}

/** How sure we are that a failed facilitator call never reached it. */
function classifyFacilitatorError(err: unknown): FacilitatorFailure {
  if (err instanceof FacilitatorTimeoutError) return 'unknown';
  const codes = errorCodes(err);
  if (codes.length > 0 && codes.every((c) => NOT_SENT_CODES.has(c))) return 'not_sent';
  return 'unknown';
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Verify through the facilitator. A facilitator's explicit refusal (a `VerifyError`, i.e. a non-2xx
 * answer carrying `isValid`) is returned as an invalid result; anything else that prevents an
 * answer becomes a {@link FacilitatorUnavailableError}.
 */
export async function callVerify(
  facilitator: FacilitatorClient,
  ...args: Parameters<FacilitatorClient['verify']>
): Promise<VerifyResponse> {
  try {
    return await facilitator.verify(...args);
  } catch (err) {
    if (err instanceof VerifyError && err.statusCode < 500) {
      return {
        isValid: false,
        invalidReason: err.invalidReason ?? 'invalid_payment',
        invalidMessage: err.invalidMessage,
        payer: err.payer,
      };
    }
    throw new FacilitatorUnavailableError('verify', classifyFacilitatorError(err), describe(err));
  }
}

/**
 * Settle through the facilitator. An explicit `{success:false}` (including a non-2xx `SettleError`)
 * is returned as is; the caller decides whether it is final (`settlement_pending` is not).
 */
export async function callSettle(
  facilitator: FacilitatorClient,
  ...args: Parameters<FacilitatorClient['settle']>
): Promise<SettleResponse> {
  try {
    return await facilitator.settle(...args);
  } catch (err) {
    if (err instanceof SettleError && err.statusCode < 500) {
      return {
        success: false,
        errorReason: err.errorReason ?? 'settlement_failed',
        errorMessage: err.errorMessage,
        payer: err.payer,
        transaction: err.transaction,
        network: err.network,
      };
    }
    throw new FacilitatorUnavailableError('settle', classifyFacilitatorError(err), describe(err));
  }
}

/** Facilitator error reasons after which the authorization may have been spent on chain. */
export const SETTLE_UNKNOWN_REASONS: ReadonlySet<string> = new Set(['settlement_pending']);
