/**
 * The fixture of test/paid-handlers.test.ts and its suites (test/paid-handlers/*.ts): what the
 * file's one demo copy gives them (the database, the handlers' context, the stored rows), a call
 * through a metered handler (validate, then run) and the expectations recomputed from the stored
 * rows by plain arithmetic.
 */
import { expect } from 'vitest';
import type { Demo } from '../../src/demo/run-demo.js';
import type { AppContext } from '../../src/doors/http/context.js';
import type { PaidHandler, RawPaidRequest } from '../../src/paid/handler.js';
import { paidHandlers } from '../../src/paid/index.js';
import {
  classifyRating,
  DecimalSum,
  normalizeAddress,
  parseDecimal,
  round6,
} from '../../src/scoring/index.js';
import type { StoredAgent, StoredRating } from './agg-expect.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

export const NOW = new Date('2026-11-01T12:00:00Z');
export const UNKNOWN_WALLET = '0x1234567890abcdef1234567890abcdef12345678';

export interface PaidDemo {
  demo: Demo;
  ctx: AppContext;
  stored: { ratings: StoredRating[]; agents: StoredAgent[] };
}

export function mean(values: readonly string[]): number | null {
  const acc = new DecimalSum();
  for (const v of values) acc.add(parseDecimal(v)!);
  return round6(acc.mean());
}

/** The calls and expectations over the fixture (read when called: the file's beforeAll sets it). */
export function paidDemoTools(fixture: () => PaidDemo) {
  const call = async (
    tier: string,
    params: Record<string, string>,
    query: Record<string, string | string[]> = {},
    receipt: string | null = null,
  ): Promise<{ status: number; body: any }> => {
    const { ctx } = fixture();
    const h = paidHandlers[tier] as PaidHandler<unknown>;
    expect(h.tier).toBe(tier);
    const req: RawPaidRequest = {
      params,
      query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, Array.isArray(v) ? v : [v]])),
    };
    const v = await h.validate(ctx, req);
    if (!v.ok) return { status: v.status, body: v.body };
    const r = await h.run(ctx, v.input, { receipt });
    return { status: r.status, body: JSON.parse(JSON.stringify(r.body)) };
  };

  /** Ratings received by the wallet's current agents. */
  const received = (wallet: string) =>
    fixture().stored.ratings.filter((r) => r.owner !== null && r.owner === normalizeAddress(wallet));
  const eligibleOf = (wallet: string) =>
    received(wallet).filter((r) => classifyRating(r, r.owner!) === 'eligible');

  /** equal-weight-per-chain@2 by plain arithmetic over the stored rows. */
  const expectedScore = (wallet: string) => {
    const elig = eligibleOf(wallet);
    const networks = [...new Set(elig.map((r) => r.network))].sort();
    const perChain = Object.fromEntries(
      networks.map((n) => [n, mean(elig.filter((r) => r.network === n).map((r) => r.value))]),
    );
    const scores = Object.values(perChain) as number[];
    const final = scores.length ? round6(scores.reduce((a, b) => a + b, 0) / scores.length) : null;
    return { perChain, final, total: elig.length, raters: new Set(elig.map((r) => r.rater)).size };
  };

  return { call, received, eligibleOf, expectedScore };
}
