/**
 * The handlers of the metered routes, by tier id. The routes themselves (paths, tiers, prices,
 * OpenAPI operations) are declared once, without handlers, in src/metered-routes.ts; this
 * module only maps each tier to the handler that answers it, and fails at load time when a tier
 * has no handler or a handler answers a tier that is not declared.
 *
 * The tier of a request is picked by `matchTier` (src/payments/pricing.ts) in the paywall, which
 * hands its id to the route's handler (`RawPaidRequest.tier`): `routeHandler` dispatches on it, so
 * `?snapshot=true` reaches the snapshot handler by the very rule that priced it. The paywall runs
 * the handler: challenge → decode → verify → `validate` → claim + settle → `run` → receipt.
 */
import { METERED_ROUTES, type MeteredRoute } from '../metered-routes.js';
import type { PaidHandler } from './handler.js';
import { agentDetailHandler } from './agent-detail.js';
import { leaderboardPageHandler } from './leaderboard-page.js';
import { raterProfileHandler } from './rater-profile.js';
import { walletHistoryHandler } from './wallet-history.js';
import { walletLookupHandler, walletSnapshotHandler } from './wallet-profile.js';

const h = <I>(handler: PaidHandler<I>) => handler as PaidHandler<unknown>;

/** The handler of each metered tier, by tier id. */
export const paidHandlers: Readonly<Record<string, PaidHandler<unknown>>> = Object.freeze(
  Object.fromEntries(
    [
      h(walletLookupHandler),
      h(walletSnapshotHandler),
      h(walletHistoryHandler),
      h(agentDetailHandler),
      h(raterProfileHandler),
      h(leaderboardPageHandler),
    ].map((handler) => [handler.tier, handler]),
  ),
);

{
  const declared = METERED_ROUTES.flatMap((r) => r.tiers.map((t) => t.id));
  const missing = declared.filter((id) => !paidHandlers[id]);
  const undeclared = Object.keys(paidHandlers).filter((id) => !declared.includes(id));
  if (missing.length || undeclared.length)
    throw new Error(
      `metered tiers without a handler: [${missing}]; handlers without a tier: [${undeclared}]`,
    );
}

/**
 * The handler mounted on a metered route: the handler of its one tier, or, for a route with
 * conditional tiers, a dispatcher to the handler of the tier the paywall picked for the request
 * (`req.tier`; absent, as in a direct call, the route's first, unconditional tier).
 */
export function routeHandler(route: MeteredRoute): PaidHandler<unknown> {
  const [first, ...others] = route.tiers;
  if (!first) throw new Error(`metered route ${route.path} has no tier`);
  const own = new Set(route.tiers.map((t) => t.id));
  const byTier = (id: string | undefined) => paidHandlers[id !== undefined && own.has(id) ? id : first.id]!;
  if (others.length === 0) return byTier(first.id);
  const dispatcher: PaidHandler<{ handler: PaidHandler<unknown>; input: unknown }> = {
    tier: first.id,
    async validate(ctx, req) {
      const handler = byTier(req.tier);
      const v = await handler.validate(ctx, req);
      return v.ok ? { ok: true, input: { handler, input: v.input } } : v;
    },
    run(ctx, { handler, input }, payment) {
      return handler.run(ctx, input, payment);
    },
  };
  return h(dispatcher);
}
