/**
 * What an MCP tool answers: an object discriminated by `status`, built from the answer of the
 * canonical HTTP route the tool called IN PROCESS (the same Hono app, through `app.request`).
 * Nothing here queries or scores; this module maps an HTTP answer onto a tool result.
 *
 * Status mapping (the contract names the statuses; the mapping is ours, documented):
 *  - 200 → `ok` (`data` is the route's JSON body, untouched);
 *  - 402 → `payment_required` (`challenge` is the 402 body, untouched, plus `recipient_check`
 *    comparing every `accepts[].payTo` and `recipient` with the pinned treasury of the
 *    configuration: `DO_NOT_PAY` when the treasury is unset, when no payee is found or when any
 *    payee differs). A 402 answered to a request that carried `payment` is a rejection of that
 *    authorization: same status, `payment_rejected: true`; except one whose body says
 *    `retryable: true` (`payment_in_flight`): `payment_rejected: false`, retry the same payment
 *    after `retry_after_seconds`;
 *  - 404 → `not_found` (body in `data`);
 *  - 422 and every other 4xx → `error` (body in `data`, `http_status` says which);
 *  - 429, 503 and every other 5xx, a thrown error, a body that is not JSON → `unreachable`, except
 *    an answer whose body says `retryable: false` (e.g. 503 `payments_not_configured`): that is
 *    `error`, never "retry later";
 *  - `nothing_to_buy` is never produced here: the tools decide it from the free preview
 *    (see src/doors/mcp/tools.ts).
 * Every result carries `tool_caveats` (tool-made caveats, `{code, text}`, the shape of the API's
 * caveats but with their own codes, never one of the eight frozen API codes).
 */
import { sameAddress } from '../../scoring/address.js';
import { isObject, requestInProcess, type InProcessApp } from '../in-process.js';

type ToolStatus = 'ok' | 'payment_required' | 'nothing_to_buy' | 'not_found' | 'unreachable' | 'error';

export interface ToolCaveat {
  code: string;
  text: string;
}

/** Codes of the caveats the MCP door itself makes (the API's eight codes are never used here). */
export const TOOL_CAVEAT = {
  /** A list was cut by the tool's own size argument (`max_ratings`, `limit`). */
  truncated: 'truncated',
  /** The free leaderboard page was cut at `limit`. */
  trimmedTail: 'trimmed-tail',
  /** `payment` was given but the answer came from a free route: nothing was charged. */
  paymentNotUsed: 'payment-not-used',
  /** A history series with ratings that have no on-chain date (the last point may sit below final_score). */
  undatedReviews: 'undated-reviews',
  /** Part of a composite answer could not be read. */
  partial: 'partial-answer',
} as const;

/** The answer of one in-process HTTP call. `http_status` null: the call itself threw. */
export interface RouteAnswer {
  route: string;
  http_status: number | null;
  body: unknown;
  headers: Record<string, string>;
  /** Set when the call threw or the body was not JSON. */
  failure?: string;
  /** Whether an X-PAYMENT header was sent. */
  paid: boolean;
}

/** How a tool reaches a route: GET `path` in process, optionally with an X-PAYMENT header. */
export type RouteCaller = (path: string, opts?: { payment?: string }) => Promise<RouteAnswer>;

/** Headers of a paid answer worth relaying (the receipt), lower-cased. */
const RELAYED_HEADERS = ['x-payment-receipt', 'x-payment-reused', 'retry-after', 'x-pricing-version'];

/**
 * GET `path` through the same app, in process. `payment` becomes the `X-PAYMENT` header, so the
 * call goes through the same paywall as any HTTP client.
 * `client`: the rate-limit key of the client whose POST reached the door; every call made here
 * spends one token from that client's own bucket (the budget of the route called), exactly as if
 * the client had called the route itself. Undefined (tests only): not rate limited.
 */
export function inProcessCaller(app: InProcessApp, client?: string): RouteCaller {
  return async (path, opts = {}) => {
    const paid = typeof opts.payment === 'string' && opts.payment.length > 0;
    const route = `GET ${path}`;
    const headers: Record<string, string> = { accept: 'application/json' };
    if (paid) headers['x-payment'] = headerSafePayment(opts.payment!);
    let res: Response;
    try {
      res = await requestInProcess(app, path, { method: 'GET', headers }, client);
    } catch (e) {
      return {
        route,
        http_status: null,
        body: null,
        headers: {},
        paid,
        failure: e instanceof Error ? e.message : String(e),
      };
    }
    const relayed: Record<string, string> = {};
    for (const h of RELAYED_HEADERS) {
      const v = res.headers.get(h);
      if (v !== null) relayed[h] = v;
    }
    const text = await res.text().catch(() => null);
    if (text === null) {
      return {
        route,
        http_status: res.status,
        body: null,
        headers: relayed,
        paid,
        failure: 'the body could not be read',
      };
    }
    try {
      return {
        route,
        http_status: res.status,
        body: text.length ? (JSON.parse(text) as unknown) : null,
        headers: relayed,
        paid,
      };
    } catch {
      return {
        route,
        http_status: res.status,
        body: text,
        headers: relayed,
        paid,
        failure: 'the body is not JSON',
      };
    }
  };
}

/**
 * A `payment` argument as an HTTP header value. A character that no header can carry (above
 * U+00FF, or a control character) cannot be part of base64 either: it is replaced by `?`, which is
 * not base64 either, so the paywall answers the same `402 invalid_payment_header` an HTTP client
 * sending that payload would get (and the tool never leaks a transport error).
 */
function headerSafePayment(p: string): string {
  return p.replace(/[^\x20-\x7e]/g, '?');
}

// ------------------------------------------------------------------ recipient check

interface RecipientCheck {
  verdict: 'OK_TO_PAY' | 'DO_NOT_PAY';
  /** The pinned treasury of this deployment (null: not configured, never pay). */
  expected: string | null;
  /** Every distinct payee the challenge names (`accepts[].payTo`, then `recipient`/`recipients`). */
  found: string[];
  reason: string;
}

/**
 * Compares every payee of a 402 body with the pinned treasury. OK_TO_PAY only when a treasury is
 * configured, at least one `accepts[]` entry exists and EVERY named payee equals it.
 */
export function recipientCheck(challenge: unknown, treasury: string | null): RecipientCheck {
  const found: string[] = [];
  const add = (v: unknown) => {
    if (typeof v === 'string' && !found.some((f) => f === v)) found.push(v);
  };
  const accepts =
    isObject(challenge) && Array.isArray(challenge.accepts) ? (challenge.accepts as unknown[]) : [];
  let acceptsWithoutPayee = 0;
  for (const a of accepts) {
    if (isObject(a) && typeof a.payTo === 'string') add(a.payTo);
    else acceptsWithoutPayee++;
  }
  if (isObject(challenge)) {
    add(challenge.recipient);
    if (Array.isArray(challenge.recipients)) for (const r of challenge.recipients) add(r);
  }
  const no = (reason: string): RecipientCheck => ({
    verdict: 'DO_NOT_PAY',
    expected: treasury,
    found,
    reason,
  });
  if (treasury === null)
    return no(
      'No treasury address is pinned in this deployment (TREASURY_ADDRESS unset): nothing can be checked, do not sign.',
    );
  if (accepts.length === 0) return no('The challenge offers no accepts[] entry to check: do not sign.');
  if (acceptsWithoutPayee > 0) return no('An accepts[] entry names no payTo: do not sign.');
  const strangers = found.filter((f) => !sameAddress(f, treasury));
  if (strangers.length > 0) {
    return no(
      `The challenge pays ${strangers.join(', ')}, not the pinned treasury ${treasury}: do not sign.`,
    );
  }
  return {
    verdict: 'OK_TO_PAY',
    expected: treasury,
    found,
    reason: 'Every payTo of accepts[] (and the recipient) equals the pinned treasury.',
  };
}

// ------------------------------------------------------------------ results

export interface ToolResult {
  status: ToolStatus;
  /** The canonical route behind the answer (`GET /path?query`); null when none was called. */
  route: string | null;
  /** HTTP status of that route's answer; null when none (thrown, or decided before calling). */
  http_status: number | null;
  tool_caveats: ToolCaveat[];
  [key: string]: unknown;
}

const MESSAGES: Record<ToolStatus, string> = {
  ok: 'The route answered.',
  payment_required:
    'This call is metered. The challenge is a price quote: check recipient_check.verdict (DO_NOT_PAY means do not sign), sign one accepts[] entry, then call the tool again with the same arguments and `payment` set to the base64 x402 payload.',
  nothing_to_buy: 'There is nothing to decompose for this subject: no payment is asked and none was used.',
  not_found: 'The route names no such resource.',
  unreachable:
    'The route could not answer now; nothing was charged by the tool. Retry later (with the same payment, if one was sent).',
  error: 'The route refused the request as sent (see data).',
};

export function result(
  status: ToolStatus,
  fields: Partial<ToolResult> & Record<string, unknown> = {},
): ToolResult {
  return {
    status,
    route: null,
    http_status: null,
    message: MESSAGES[status],
    ...fields,
    tool_caveats: fields.tool_caveats ?? [],
  };
}

/**
 * The tool result of one route answer (see the module comment for the mapping). `onOk` lets a
 * tool reshape the body of a 200 (its own view, tool-made caveats); by default `data` is the body.
 */
export function fromAnswer(
  a: RouteAnswer,
  treasury: string | null,
  onOk?: (body: unknown, a: RouteAnswer) => Partial<ToolResult> & Record<string, unknown>,
): ToolResult {
  const base = { route: a.route, http_status: a.http_status };
  const s = a.http_status;
  if (s === null || a.failure !== undefined) {
    return result('unreachable', { ...base, data: a.body, detail: a.failure ?? 'the call failed' });
  }
  if (s === 200) {
    const payment =
      a.paid || a.headers['x-payment-receipt'] !== undefined
        ? {
            receipt: a.headers['x-payment-receipt'] ?? null,
            reused:
              a.headers['x-payment-reused'] === undefined ? null : a.headers['x-payment-reused'] === 'true',
          }
        : undefined;
    const extra = onOk ? onOk(a.body, a) : { data: a.body };
    return result('ok', { ...base, ...(payment ? { payment } : {}), ...extra });
  }
  if (s === 402) {
    // A 402 that says it is retryable after a payment (`payment_in_flight`: another request is
    // settling this very authorization) is no rejection: the same payment is tried again.
    const inFlight = a.paid && isObject(a.body) && a.body.retryable === true;
    return result('payment_required', {
      ...base,
      challenge: a.body,
      recipient_check: recipientCheck(a.body, treasury),
      ...(inFlight
        ? {
            payment_rejected: false,
            message:
              'This payment is being settled by another request right now (see challenge.error and challenge.message). Call again with the SAME payment after retry_after_seconds; do not sign a new one.',
            ...(a.headers['retry-after'] ? { retry_after_seconds: Number(a.headers['retry-after']) } : {}),
          }
        : a.paid
          ? {
              payment_rejected: true,
              message:
                'The payment sent was not accepted (spent, or signed for another amount or resource); retrying it fails the same way. Call again without payment and sign the fresh challenge.',
            }
          : {}),
    });
  }
  if (s === 404) return result('not_found', { ...base, data: a.body });
  if ((s === 429 || s >= 500) && isObject(a.body) && a.body.retryable === false) {
    // A refusal that says it will not change by retrying (503 payments_not_configured).
    return result('error', {
      ...base,
      data: a.body,
      message: 'The route refused the request and says retrying will not help (see data.error).',
    });
  }
  if (s === 429 || s >= 500) {
    return result('unreachable', {
      ...base,
      data: a.body,
      ...(a.headers['retry-after'] ? { retry_after_seconds: Number(a.headers['retry-after']) } : {}),
    });
  }
  if (s >= 400) {
    return result('error', {
      ...base,
      data: a.body,
      ...(a.paid && s !== 422
        ? {
            message:
              'Refused after X-PAYMENT: usually a spent credential or one signed for another resource. Call again without payment and sign the fresh challenge.',
          }
        : {}),
    });
  }
  // 2xx other than 200, 3xx: not something these GET routes answer; report it as it is.
  return result('error', { ...base, data: a.body, detail: `unexpected HTTP status ${s}` });
}
