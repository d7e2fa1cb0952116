/**
 * `GET /leaderboard`: the free first page of the ranking (src/read/leaderboard.ts). Deeper pages,
 * wider pages and the type filter are the metered `/leaderboard/page` (src/paid/leaderboard-page.ts).
 */
import { createRoute } from '@hono/zod-openapi';
import { readerOf } from '../../../db/database.js';
import { readLeaderboard } from '../../../read/leaderboard.js';
import { LEADERBOARD_FREE_ROWS } from '../../../request-params.js';
import { ORDERING_POLICY, POLICY_VERSION } from '../../../scoring/index.js';
import type { App, AppContext } from '../context.js';
import { CACHE_AGGREGATE } from '../free-cache.js';
import { LeaderboardParamsErrorSchema, LeaderboardSchema, PAGED_ROUTE } from '../schemas/aggregates.js';
import { json } from '../schemas/common.js';

const leaderboardRoute = createRoute({
  method: 'get',
  path: '/leaderboard',
  summary: 'Top wallets ranked by evidence: the free first page, no parameters',
  description:
    `The first ${LEADERBOARD_FREE_ROWS} scored wallets ordered by shrunk_score desc, distinct_raters desc, wallet asc. ` +
    'final_score, shrunk_score, distinct_raters, k and the prior travel together so the order can be recomputed. ' +
    `Any query parameter answers 422 pointing at \`${PAGED_ROUTE}\` (never 402).`,
  tags: ['free'],
  responses: {
    200: json(LeaderboardSchema, 'The first page'),
    422: json(
      LeaderboardParamsErrorSchema,
      '`leaderboard_takes_no_params`: paging lives at /leaderboard/page',
    ),
  },
});

export function registerLeaderboardRoute(app: App, ctx: AppContext): void {
  app.openapi(leaderboardRoute, async function getLeaderboard(c) {
    // No parameters at all: any query parameter is a 422 pointing at the paged route, checked
    // before any work (this route never answers 402).
    const params = [...new Set(new URL(c.req.url).searchParams.keys())].sort();
    if (params.length > 0) {
      return c.json(
        {
          detail: {
            error: 'leaderboard_takes_no_params' as const,
            params,
            paged_route: PAGED_ROUTE as typeof PAGED_ROUTE,
            message: `GET /leaderboard takes no query parameters. Paging and the type filter live at GET ${PAGED_ROUTE}.`,
          },
        },
        422,
      );
    }
    const ranking = await readLeaderboard(readerOf(ctx.db), { offset: 0, limit: LEADERBOARD_FREE_ROWS });
    c.header('Cache-Control', CACHE_AGGREGATE);
    return c.json(
      {
        policy_version: POLICY_VERSION,
        ordering_policy: ORDERING_POLICY,
        order: 'shrunk_score desc, distinct_raters desc, wallet asc',
        shrinkage: { k: ranking.k, prior: ranking.prior },
        refreshed_at: ranking.refreshed_at,
        limit: LEADERBOARD_FREE_ROWS,
        paged_route: PAGED_ROUTE,
        rows: ranking.rows,
      },
      200,
    );
  });
}
