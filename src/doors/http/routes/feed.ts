/** `GET /feed`: the newest ratings, read through the time index (src/read/feed.ts). */
import { createRoute, z } from '@hono/zod-openapi';
import { readerOf } from '../../../db/database.js';
import { resolveNetwork } from '../../../request-params.js';
import { readFeed } from '../../../read/feed.js';
import type { App, AppContext } from '../context.js';
import { unknownNetwork } from '../errors.js';
import { FeedEventSchema, FeedQueryErrorSchema } from '../schemas/aggregates.js';
import { json } from '../schemas/common.js';
import { FeedQuerySchema } from '../schemas/params.js';

/** The feed moves with every pass too, but it is the pulse: keep it short. */
const CACHE_FEED = 'public, max-age=30';

const feedRoute = createRoute({
  method: 'get',
  path: '/feed',
  summary: "The newest ratings, by the chain's own clock (free)",
  description:
    'Newest first by on-chain block time (descending), then network (ascending), then block number and log index (descending). Ratings not dated yet ' +
    'are not on the clock and are left out. `facet` is raw tag1: untrusted text.',
  tags: ['free'],
  request: {
    query: FeedQuerySchema,
  },
  responses: {
    200: json(z.array(FeedEventSchema), 'Newest ratings first'),
    422: json(FeedQueryErrorSchema, '`limit` out of range, or `unknown_network` with `known_networks`'),
  },
});

export function registerFeedRoute(app: App, ctx: AppContext): void {
  app.openapi(feedRoute, async function getFeed(c) {
    const { network: raw, limit } = c.req.valid('query');
    let network: string | null = null;
    if (raw !== undefined) {
      network = resolveNetwork(ctx, raw);
      if (network === null) return unknownNetwork(c, ctx, raw, 422);
    }
    const rows = await readFeed(readerOf(ctx.db), { network, limit });
    c.header('Cache-Control', CACHE_FEED);
    return c.json(rows, 200);
  });
}
