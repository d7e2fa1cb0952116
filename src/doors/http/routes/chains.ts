/**
 * `GET /chains` (every configured chain side by side) and `GET /chains/{network}` (one chain in
 * detail). Reads the aggregates recomputed after every index pass; no SQL here (src/read/chains.ts).
 */
import { createRoute, z } from '@hono/zod-openapi';
import { readerOf } from '../../../db/database.js';
import { resolveNetwork } from '../../../request-params.js';
import { readChainActivity, readChainStats } from '../../../read/chains.js';
import { readChainRanking } from '../../../read/leaderboard.js';
import { readFacets } from '../../../read/stats.js';
import { ORDERING_POLICY, POLICY_VERSION } from '../../../scoring/index.js';
import type { App, AppContext } from '../context.js';
import { unknownNetwork } from '../errors.js';
import { CACHE_AGGREGATE } from '../free-cache.js';
import { ChainDetailSchema, ChainStatSchema } from '../schemas/aggregates.js';
import { NETWORK_DOC, UnknownNetworkSchema, ValidationErrorSchema, json } from '../schemas/common.js';
import { ChainQuerySchema } from '../schemas/params.js';

const chainsRoute = createRoute({
  method: 'get',
  path: '/chains',
  summary: 'Every configured chain side by side (free)',
  description:
    'One row per configured chain, in configuration order. A chain with nothing indexed shows 0, never a missing row. ' +
    "`stale_hours` grows when a chain's scanner is dead.",
  tags: ['free'],
  responses: { 200: json(z.array(ChainStatSchema), 'Every chain') },
});

const chainRoute = createRoute({
  method: 'get',
  path: '/chains/{network}',
  summary: 'One chain in full: stats, top wallets, facets and daily activity (free)',
  description:
    "Top wallets are scored with this chain's ratings only and ordered by shrunk_score (toward this chain's prior), " +
    'distinct_raters, wallet. The activity series buckets by on-chain block date (UTC).',
  tags: ['free'],
  request: {
    params: z.object({ network: z.string().openapi({ description: NETWORK_DOC, example: 'base' }) }),
    query: ChainQuerySchema,
  },
  responses: {
    200: json(ChainDetailSchema, 'The chain'),
    404: json(
      UnknownNetworkSchema,
      '`unknown_network`: that chain is not in the index; `known_networks` lists those that are.',
    ),
    422: json(ValidationErrorSchema, '`days` or `limit` is not an integer in range'),
  },
});

export function registerChainsRoutes(app: App, ctx: AppContext): void {
  app.openapi(chainsRoute, async function listChains(c) {
    const rows = await readChainStats(readerOf(ctx.db), ctx.config.chains, ctx.now());
    c.header('Cache-Control', CACHE_AGGREGATE);
    return c.json(rows, 200);
  });

  app.openapi(chainRoute, async function getChain(c) {
    const { network: raw } = c.req.valid('param');
    const { days, limit } = c.req.valid('query');
    const network = resolveNetwork(ctx, raw);
    if (network === null) return unknownNetwork(c, ctx, raw, 404);
    const chain = ctx.config.chains.find((ch) => ch.network === network);
    const now = ctx.now();
    const [[stats], ranking, facets, activity] = await Promise.all([
      readChainStats(readerOf(ctx.db), chain ? [chain] : [], now),
      readChainRanking(readerOf(ctx.db), network, limit),
      readFacets(readerOf(ctx.db), network),
      readChainActivity(readerOf(ctx.db), network, days, now),
    ]);
    if (!stats) return unknownNetwork(c, ctx, raw, 404);
    c.header('Cache-Control', CACHE_AGGREGATE);
    return c.json(
      {
        network,
        days,
        stats,
        top: ranking.rows,
        facets,
        activity,
        policy_version: POLICY_VERSION,
        ordering_policy: ORDERING_POLICY,
        shrinkage: { k: ranking.k, prior: ranking.prior },
        refreshed_at: ranking.refreshed_at,
      },
      200,
    );
  });
}
