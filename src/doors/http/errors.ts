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

export function notAnAddress(c: Context, wallet: string) {
  return c.json(
    {
      detail: {
        error: 'not_an_address',
        wallet,
        message: 'Not a wallet: expected an EVM address (0x + 40 hex, any case) or a Solana base58 key (32-44 chars).',
      },
    },
    422,
  );
}

export function notFound(c: Context, detail = 'Not Found') {
  return c.json({ detail }, 404);
}
