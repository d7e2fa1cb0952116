/** The JSON error bodies of the contract, built in one place. */
import type { Context } from 'hono';
import { notAnAddressBody, type ValidationItem } from '../../paid/params.js';

export const API_VERSION = '2.0.0';

export function validationError(c: Context, items: ValidationItem[], extra: Record<string, unknown> = {}) {
  return c.json({ detail: items, ...extra }, 422);
}

export function notAnAddress(c: Context, wallet: string) {
  return c.json(notAnAddressBody(wallet), 422);
}

export function notFound(c: Context, detail = 'Not Found') {
  return c.json({ detail }, 404);
}
