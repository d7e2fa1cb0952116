/**
 * The metered routes' handlers, callable in process by every door (HTTP behind the paywall, MCP,
 * A2A pointers). Each is split in two so the paywall can refuse bad input BEFORE it settles a
 * payment: `validate` turns the raw request into a typed input or the contract's 422/404 body;
 * `run` answers it. The paywall order is: challenge (no payment) → decode → verify → validate →
 * claim + settle → run → receipt.
 */
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';

/** What a paid handler may use (the HTTP door's AppContext is one). */
export interface PaidContext {
  config: Config;
  db: Database;
  /** Injectable clock (tests). */
  now: () => Date;
}

export interface RawPaidRequest {
  /** Path parameters as received (not yet validated). */
  params: Record<string, string>;
  /** Query parameters as received; repeated keys keep every value. */
  query: Record<string, string[]>;
  /**
   * The pricing tier the paywall picked for this request (`matchTier`): a route with conditional
   * tiers answers with the handler of that tier (src/paid/index.ts `routeHandler`).
   */
  tier?: string;
}

export type Validated<I> = { ok: true; input: I } | { ok: false; status: 404 | 422; body: unknown };

export interface PaidResult {
  status: 200 | 404;
  body: unknown;
}

export interface PaidHandler<I> {
  /** The pricing tier id (src/payments/pricing.ts) this handler answers. */
  tier: string;
  validate(ctx: PaidContext, req: RawPaidRequest): Validated<I> | Promise<Validated<I>>;
  /** `payment` carries the settlement receipt (tx hash) when the call was paid, for snapshot rows. */
  run(ctx: PaidContext, input: I, payment: { receipt: string | null }): Promise<PaidResult>;
}
