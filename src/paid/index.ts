/**
 * The metered handlers, keyed by pricing tier id (src/payments/pricing.ts). The paywall mounts
 * them: challenge → decode → verify → `validate` → claim + settle → `run` → receipt.
 * `wallet-lookup` and `wallet-snapshot` are the same route, split by `?snapshot=true`.
 */
import type { PaidHandler } from './handler.js';
import { agentDetailHandler } from './agent-detail.js';
import { leaderboardPageHandler } from './leaderboard-page.js';
import { raterProfileHandler } from './rater-profile.js';
import { walletHistoryHandler } from './wallet-history.js';
import { walletLookupHandler, walletSnapshotHandler } from './wallet-profile.js';

/**
 * `GET /reputation/wallet/{wallet}` is one route priced by its query: the paywall charges the
 * wallet-snapshot tier when the first `snapshot` value is exactly `true` (pricing.ts `when_query`),
 * and this handler answers with the handler of that same tier, so price and answer never disagree.
 */
export const walletProfileRouteHandler: PaidHandler<{ handler: PaidHandler<unknown>; input: unknown }> = {
  tier: 'wallet-lookup',
  async validate(ctx, req) {
    const handler = (
      req.query.snapshot?.[0] === 'true' ? walletSnapshotHandler : walletLookupHandler
    ) as PaidHandler<unknown>;
    const v = await handler.validate(ctx, req);
    return v.ok ? { ok: true, input: { handler, input: v.input } } : v;
  },
  run(ctx, { handler, input }, payment) {
    return handler.run(ctx, input, payment);
  },
};

export const paidHandlers: Readonly<Record<string, PaidHandler<unknown>>> = Object.freeze({
  'wallet-lookup': walletLookupHandler as PaidHandler<unknown>,
  'wallet-snapshot': walletSnapshotHandler as PaidHandler<unknown>,
  'wallet-history': walletHistoryHandler as PaidHandler<unknown>,
  'agent-detail': agentDetailHandler as PaidHandler<unknown>,
  'rater-profile': raterProfileHandler as PaidHandler<unknown>,
  'leaderboard-deep': leaderboardPageHandler as PaidHandler<unknown>,
});

export {
  agentDetailHandler,
  leaderboardPageHandler,
  raterProfileHandler,
  walletHistoryHandler,
  walletLookupHandler,
  walletSnapshotHandler,
};
