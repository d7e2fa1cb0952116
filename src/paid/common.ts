/**
 * Shared validation pieces of the paid handlers: the contract's 422/404 bodies and strict
 * query-parameter parsing. The bodies come from params.ts, shared with the HTTP door (which wraps
 * them in a Hono response; the handlers return plain values to the paywall).
 */
import type { PaidContext, RawPaidRequest, Validated } from './handler.js';
import { notAnAddressBody, unknownNetworkBody, type ValidationItem } from '../request-params.js';
import { parseWallet, type ParsedWallet } from '../identifiers.js';

export type Invalid = Extract<Validated<never>, { ok: false }>;

/** 422 `not_an_address`, the same body as every other door's. */
function notAnAddressResult(wallet: string): Invalid {
  return { ok: false, status: 422, body: notAnAddressBody(wallet) };
}

/** 422 FastAPI-style validation error (`{detail: [{loc, msg, type, input}]}`). */
export function invalidParam(loc: (string | number)[], msg: string, type: string, input?: unknown): Invalid {
  const item: ValidationItem = { loc, msg, type };
  if (input !== undefined) item.input = input;
  return { ok: false, status: 422, body: { detail: [item] } };
}

/** 404 `unknown_network`, the body of `GET /chains/{network}` for an unknown chain. */
export function unknownNetworkResult(ctx: PaidContext, network: string): Invalid {
  return { ok: false, status: 404, body: unknownNetworkBody(ctx, network) };
}

/** The wallet path parameter, parsed, or the 422 `not_an_address` result. */
export function walletParam(req: RawPaidRequest): { ok: true; wallet: ParsedWallet } | Invalid {
  const raw = req.params.wallet ?? '';
  const wallet = parseWallet(raw);
  return wallet ? { ok: true, wallet } : notAnAddressResult(raw);
}

/** 422 for any query parameter outside `allowed`. */
export function rejectUnknownQuery(req: RawPaidRequest, allowed: readonly string[]): Invalid | null {
  for (const key of Object.keys(req.query)) {
    if (!allowed.includes(key)) {
      return invalidParam(
        ['query', key],
        `Unknown query parameter; accepted: ${allowed.join(', ') || 'none'}.`,
        'extra_forbidden',
        req.query[key],
      );
    }
  }
  return null;
}

/** The single value of a query parameter: undefined when absent, a 422 when repeated. */
export function singleQuery(
  req: RawPaidRequest,
  key: string,
): { ok: true; value: string | undefined } | Invalid {
  const values = req.query[key];
  if (values === undefined || values.length === 0) return { ok: true, value: undefined };
  if (values.length > 1)
    return invalidParam(['query', key], 'Give this parameter once.', 'value_error', values);
  return { ok: true, value: values[0] };
}

/** An integer query parameter within [min, max] (decimal digits only), or its default. */
export function intQuery(
  req: RawPaidRequest,
  key: string,
  bounds: { min: number; max?: number; default: number },
): { ok: true; value: number } | Invalid {
  const v = singleQuery(req, key);
  if (!v.ok) return v;
  if (v.value === undefined) return { ok: true, value: bounds.default };
  const raw = v.value;
  if (!/^\d{1,15}$/.test(raw)) {
    return invalidParam(['query', key], 'Input should be a valid integer.', 'int_parsing', raw);
  }
  const n = Number(raw);
  if (n < bounds.min) {
    return invalidParam(
      ['query', key],
      `Input should be greater than or equal to ${bounds.min}.`,
      'greater_than_equal',
      raw,
    );
  }
  if (bounds.max !== undefined && n > bounds.max) {
    return invalidParam(
      ['query', key],
      `Input should be less than or equal to ${bounds.max}.`,
      'less_than_equal',
      raw,
    );
  }
  return { ok: true, value: n };
}

/** ISO 8601 UTC of a timestamp, null when absent or invalid. */
export function iso(d: Date | null | undefined): string | null {
  return d instanceof Date && Number.isFinite(d.getTime()) ? d.toISOString() : null;
}
