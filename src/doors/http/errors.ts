/** The JSON error bodies of the contract, built in one place. */
import type { Context } from 'hono';
import type { AppContext } from './context.js';
import { notAnAddressBody, unknownNetworkBody, type ValidationItem } from '../../request-params.js';

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

/** `unknown_network` with `known_networks`: 404 on a path parameter, 422 on a query parameter. */
export function unknownNetwork<S extends 404 | 422>(c: Context, ctx: AppContext, network: string, status: S) {
  return c.json(unknownNetworkBody(ctx, network), status);
}
