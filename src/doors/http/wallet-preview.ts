/**
 * The free preview of one wallet, shared by `/wallets/{wallet}/chains`, `/search/{q}` and the badge:
 * one aggregate read (src/read/wallets.ts) scored by one function, so the number a badge shows is
 * the number the preview shows.
 */
import type { AppContext } from './context.js';
import type { WalletChainRow } from '../../read/wallets.js';
import { scoreFromAggregates } from '../../scoring/index.js';

/** Free per-subject answers change once per index pass; a short shared cache is honest. */
export const CACHE_PREVIEW = 'public, max-age=60';

/** Config order of the networks (the order of `/health`), unknown ones last by name. */
export function networkOrder(ctx: AppContext): (a: string, b: string) => number {
  const pos = new Map(ctx.config.chains.map((c, i) => [c.network, i]));
  return (a, b) => {
    const pa = pos.get(a) ?? Number.MAX_SAFE_INTEGER;
    const pb = pos.get(b) ?? Number.MAX_SAFE_INTEGER;
    return pa !== pb ? pa - pb : a < b ? -1 : a > b ? 1 : 0;
  };
}

/** Per-chain scores through the scoring module (`equal-weight-per-chain@2`). */
export function scoredChains(rows: readonly WalletChainRow[]) {
  const score = scoreFromAggregates(
    rows.map((r) => ({
      network: r.network,
      sum: r.eligible_sum,
      count: r.total_reviews,
      distinct_raters: r.distinct_raters,
    })),
  );
  const byNet = new Map(score.per_chain.map((c) => [c.network, c.final_score]));
  return { global: score.final_score, chainScore: (n: string) => byNet.get(n) ?? null };
}
