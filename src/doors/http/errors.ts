/** The JSON error bodies of the contract, built in one place. */
import type { Context } from 'hono';

export const API_VERSION = '2.0.0';

/** FastAPI-style validation item, the shape of the reference schema's HTTPValidationError. */
export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
}

export function validationError(c: Context, items: ValidationItem[], extra: Record<string, unknown> = {}) {
  return c.json({ detail: items, ...extra }, 422);
}

/** The 422 body for a string that is neither an EVM address nor a Solana key (badge shape too). */
export function notAnAddressBody(wallet: string) {
  return {
    detail: {
      error: 'not_an_address' as const,
      wallet,
      message: 'Not a wallet: expected an EVM address (0x + 40 hex, any case) or a Solana base58 key (32-44 chars).',
    },
  };
}

export function notAnAddress(c: Context, wallet: string) {
  return c.json(notAnAddressBody(wallet), 422);
}

export function notFound(c: Context, detail = 'Not Found') {
  return c.json({ detail }, 404);
}
