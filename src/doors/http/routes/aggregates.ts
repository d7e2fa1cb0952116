/**
 * Free aggregate routes: /chains, /chains/{network}, /feed, /leaderboard, /stats/facets,
 * /stats/types, /stats/issuers and /categories. Each one reads the aggregate tables recomputed
 * after every index pass (src/read/aggregates.ts), except /feed, which reads the newest ratings
 * through the time index. No SQL here: the queries live in src/read/*.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { readerOf } from '../../../db/database.js';
import type { App, AppContext } from '../context.js';
import { readRefreshMeta } from '../../../read/aggregates.js';
import { readCategories } from '../../../read/categories.js';
import { CHAIN_DAYS, CHAIN_TOP_LIMIT, readChainActivity, readChainStats } from '../../../read/chains.js';
import { FEED_LIMIT, readFeed } from '../../../read/feed.js';
import { LEADERBOARD_FREE_ROWS, readChainRanking, readLeaderboard } from '../../../read/leaderboard.js';
import {
  ISSUER_SOURCE,
  readFacets,
  readIssuers,
  readTypeBreakdown,
  UNKNOWN_TYPE,
} from '../../../read/stats.js';
import { ORDERING_POLICY, POLICY_VERSION } from '../../../scoring/index.js';

/** Aggregates change once per index pass (hourly): one cached answer serves everybody. */
const CACHE_AGGREGATE = 'public, max-age=60';
/** The feed moves with every pass too, but it is the pulse: keep it short. */
const CACHE_FEED = 'public, max-age=30';

const PAGED_ROUTE = '/leaderboard/page';

// ------------------------------------------------------------------ parameters

/** A query integer in [min, max]: digits only ("1.5", "1e2", "" and "abc" are 422). */
function intQuery(bounds: { default: number; min: number; max: number }, description: string) {
  return z
    .preprocess(
      (v) => (typeof v === 'string' && /^\d{1,9}$/.test(v) ? Number(v) : v),
      z
        .number({ error: 'Input should be a valid integer' })
        .int('Input should be a valid integer')
        .min(bounds.min, `Input should be greater than or equal to ${bounds.min}`)
        .max(bounds.max, `Input should be less than or equal to ${bounds.max}`),
    )
    .default(bounds.default)
    .openapi({
      description: `${description} Integer ${bounds.min}..${bounds.max}, default ${bounds.default}.`,
    });
}

const NETWORK_DOC =
  'Chain slug, case-insensitive. The vocabulary is `chains[].network` of `GET /chains` (or `GET /health`).';

// ------------------------------------------------------------------ schemas

export const UnknownNetworkSchema = z
  .object({
    detail: z.object({
      error: z.literal('unknown_network'),
      network: z.string().openapi({ description: 'The slug as you sent it.' }),
      known_networks: z.array(z.string()).openapi({ description: 'Every network this index holds.' }),
      message: z.string(),
    }),
  })
  .openapi('UnknownNetwork');

export const ValidationErrorSchema = z
  .object({
    detail: z.array(
      z.object({ loc: z.array(z.union([z.string(), z.number()])), msg: z.string(), type: z.string() }),
    ),
  })
  .openapi('HTTPValidationError');

const FeedQueryErrorSchema = z.union([ValidationErrorSchema, UnknownNetworkSchema]);

const ChainStatSchema = z
  .object({
    network: z
      .string()
      .openapi({ description: 'Chain slug: the vocabulary of every `{network}` parameter.' }),
    kind: z.string().openapi({ description: '`evm` or `solana`.' }),
    chain_id: z.number().int().nullable().openapi({ description: 'EVM chain id; null on solana.' }),
    enabled: z.boolean().openapi({ description: 'False: listed but not scanned (configuration).' }),
    agents: z.number().int().openapi({ description: 'Agent identities indexed on this chain.' }),
    owners: z.number().int().openapi({ description: 'Distinct current owners behind those identities.' }),
    ratings: z
      .number()
      .int()
      .openapi({ description: 'Individual ratings indexed on this chain, of every class.' }),
    distinct_raters: z.number().int().openapi({ description: 'Distinct wallets that wrote those ratings.' }),
    rated_agents: z.number().int().openapi({ description: 'Identities with at least one rating.' }),
    scored_wallets: z.number().int().openapi({ description: 'Owners with a score on this chain.' }),
    eligible_ratings: z.number().int().openapi({
      description: 'Ratings that enter a score: not revoked, value in 0..100, rater is not the owner.',
    }),
    revoked: z
      .number()
      .int()
      .openapi({ description: 'Revoked ratings, among the ratings of identities with a known owner.' }),
    self_rated: z.number().int().openapi({
      description: "Live in-domain ratings written by the identity's current owner (excluded from scores).",
    }),
    out_of_domain: z.number().int().openapi({
      description: 'Live ratings whose value falls outside 0..100 (stored, served, excluded from scores).',
    }),
    orphan_ratings: z
      .number()
      .int()
      .openapi({ description: 'Ratings of an identity with no known owner yet (not classified above).' }),
    facets: z.number().int().openapi({ description: 'Distinct raw `tag1` values seen on this chain.' }),
    avg_value: z.number().nullable().openapi({
      description:
        'Mean of the eligible values, six decimals; null when nothing is eligible. Read with distinct_raters.',
    }),
    ratings_per_agent: z
      .number()
      .nullable()
      .openapi({ description: 'ratings / agents; null with no agents.' }),
    first_rating_day: z
      .string()
      .nullable()
      .openapi({ description: 'UTC date of the oldest dated rating (on-chain time).' }),
    last_rating_day: z
      .string()
      .nullable()
      .openapi({ description: 'UTC date of the newest dated rating (on-chain time).' }),
    last_scanned_block: z
      .number()
      .int()
      .nullable()
      .openapi({ description: 'How far the scan reached; null before the first sync.' }),
    head_at_last_sync: z.number().int().nullable(),
    blocks_behind: z.number().int().nullable().openapi({
      description: 'head_at_last_sync - last_scanned_block. Freezes when the scanner dies: read stale_hours.',
    }),
    backfill_complete: z.boolean(),
    last_sync_at: z
      .string()
      .nullable()
      .openapi({ description: 'When the last successful sync finished; null if never.' }),
    stale_hours: z.number().nullable().openapi({
      description:
        'Hours since the last successful sync, against the clock: grows when the scanner is dead. Null if never synced.',
    }),
  })
  .openapi('ChainStat');

const ChainRowSchema = z
  .object({
    rank: z
      .number()
      .int()
      .openapi({ description: "Position in this chain's ranking (by shrunk_score), 1-based." }),
    wallet: z.string(),
    final_score: z.number().nullable().openapi({
      description: "Mean of this chain's eligible ratings only (not the global score), six decimals.",
    }),
    shrunk_score: z.number().nullable().openapi({
      description: "round6((n·final_score + k·prior)/(n + k)) with this chain's prior: what orders the list.",
    }),
    distinct_raters: z.number().int().openapi({ description: 'n: distinct eligible raters on this chain.' }),
    total_reviews: z.number().int().openapi({ description: 'Eligible ratings on this chain.' }),
    agent_count: z.number().int(),
    agent_ids: z.array(z.string()),
    declared_types: z.array(z.string()).openapi({
      description: 'Types its identities declare (self-declared, never verified); [] when none declares one.',
    }),
  })
  .openapi('ChainRow');

const FacetStatSchema = z
  .object({
    count: z.number().int().openapi({ description: 'Ratings with this tag1 (volume), of every class.' }),
    eligible: z.number().int().openapi({ description: 'Of those, eligible ratings (the N of avg_score).' }),
    avg_score: z.number().nullable().openapi({
      description: 'Mean of the eligible values, six decimals; null (never 0) when none is eligible.',
    }),
    distinct_agents: z.number().int(),
    distinct_raters: z.number().int(),
  })
  .openapi('FacetStat');

const ChainFacetSchema = z
  .object({ facet: z.string().openapi({ description: 'Raw tag1 (untrusted text; "" = none declared).' }) })
  .extend(FacetStatSchema.shape)
  .openapi('ChainFacet');

const ChainDaySchema = z
  .object({
    day: z.string().openapi({ description: 'UTC date, by on-chain block time.' }),
    ratings: z.number().int(),
    raters: z.number().int().openapi({ description: 'Distinct raters that day.' }),
  })
  .openapi('ChainDay');

const ShrinkageSchema = z
  .object({
    k: z.number(),
    prior: z
      .number()
      .nullable()
      .openapi({ description: 'The prior of this ranking, six decimals; null with nothing scored.' }),
  })
  .openapi('Shrinkage');

const ChainDetailSchema = z
  .object({
    network: z.string(),
    days: z.number().int(),
    stats: ChainStatSchema,
    top: z.array(ChainRowSchema),
    facets: z.array(ChainFacetSchema).openapi({ description: 'Every facet of this chain, by volume.' }),
    activity: z
      .array(ChainDaySchema)
      .openapi({ description: 'The last `days` UTC days, oldest first, zeros filled.' }),
    policy_version: z.string(),
    ordering_policy: z.string(),
    shrinkage: ShrinkageSchema,
    refreshed_at: z.string().nullable(),
  })
  .openapi('ChainDetail');

const FeedEventSchema = z
  .object({
    network: z.string(),
    agent_id: z
      .string()
      .openapi({ description: 'Always a string (a counter on EVM chains, base58 on solana).' }),
    subject_wallet: z
      .string()
      .nullable()
      .openapi({ description: 'Current owner of the rated identity; null when unknown.' }),
    rater: z.string(),
    facet: z
      .string()
      .openapi({ description: 'Raw tag1 (untrusted free text, escape before rendering; "" = none).' }),
    value: z
      .number()
      .openapi({ description: 'value_raw / 10^value_decimals, as written on chain: evidence, not a score.' }),
    value_exact: z.string().openapi({ description: 'The same value as an exact decimal string.' }),
    value_raw: z.string(),
    value_decimals: z.number().int(),
    tx_hash: z.string(),
    block_time: z
      .string()
      .openapi({ description: 'On-chain block time (ISO 8601, UTC), never indexing time.' }),
    block_number: z.number().int(),
    log_index: z.number().int(),
    revoked: z.boolean(),
    revoked_tx: z.string().nullable().openapi({ description: 'The transaction that revoked it.' }),
  })
  .openapi('FeedEvent');

const LeaderboardRowSchema = z
  .object({
    rank: z.number().int().openapi({ description: '1-based position, from shrunk_score.' }),
    wallet: z.string(),
    final_score: z
      .number()
      .nullable()
      .openapi({ description: 'Global score (mean of per-chain scores), six decimals.' }),
    shrunk_score: z.number().nullable().openapi({
      description:
        'round6((n·final_score + k·prior)/(n + k)), n = distinct_raters: what decides the position.',
    }),
    distinct_raters: z
      .number()
      .int()
      .openapi({ description: 'Distinct eligible raters over the whole wallet (n).' }),
    total_reviews: z.number().int().openapi({ description: 'Eligible ratings behind final_score.' }),
    chain_count: z.number().int().openapi({ description: 'Chains contributing a score.' }),
    networks: z.array(z.string()).openapi({ description: 'Which chains contribute a score.' }),
    declared_types: z.array(z.string()).openapi({
      description: 'Types its identities declare (self-declared, never verified); [] when none declares one.',
    }),
  })
  .openapi('LeaderboardRow');

const LeaderboardSchema = z
  .object({
    policy_version: z.string(),
    ordering_policy: z.string(),
    order: z.string(),
    shrinkage: ShrinkageSchema,
    refreshed_at: z.string().nullable(),
    limit: z.number().int(),
    paged_route: z.string().openapi({ description: 'Paging and the type filter live there (metered).' }),
    rows: z.array(LeaderboardRowSchema),
  })
  .openapi('Leaderboard');

const LeaderboardParamsErrorSchema = z
  .object({
    detail: z.object({
      error: z.literal('leaderboard_takes_no_params'),
      params: z.array(z.string()).openapi({ description: 'The query parameters you sent, sorted.' }),
      paged_route: z.literal(PAGED_ROUTE),
      message: z.string(),
    }),
  })
  .openapi('LeaderboardTakesNoParams');

const TypeStatsSchema = z
  .object({
    agent_count: z.number().int(),
    rated_agent_count: z
      .number()
      .int()
      .openapi({ description: 'Of those, agents with at least one eligible rating.' }),
    total_reviews: z
      .number()
      .int()
      .openapi({ description: 'Eligible ratings received by agents of this type.' }),
    avg_score: z
      .number()
      .nullable()
      .openapi({ description: 'Mean of those eligible ratings; null when none.' }),
  })
  .openapi('TypeStats');

const TypeBreakdownSchema = z
  .object({
    classification_source: z.literal('self_declared'),
    declared_type_verified: z.literal(false),
    note: z.string(),
    total_agents: z.number().int(),
    declared_agents: z.number().int(),
    unknown_agents: z.number().int(),
    unknown_share: z
      .number()
      .nullable()
      .openapi({ description: 'unknown_agents / total_agents, six decimals.' }),
    types: z.record(z.string(), TypeStatsSchema).openapi({
      description:
        'Keyed by declared type (verbatim, untrusted text), by agent_count desc; `unknown` = declares none, always present.',
    }),
    refreshed_at: z.string().nullable(),
  })
  .openapi('TypeBreakdown');

const IssuerReachSchema = z.object({
  count: z.number().int(),
  distinct_agents: z.number().int(),
  distinct_raters: z.number().int(),
});

const IssuerStatSchema = z
  .object({
    issuer_host: z
      .string()
      .openapi({ description: 'Lower-cased host of feedbackURI: a fact of the URI, never a judgement.' }),
    issuer_org: z
      .string()
      .openapi({ description: 'Registrable-domain approximation of the host (see issuer_org_rule).' }),
  })
  .extend(IssuerReachSchema.shape)
  .openapi('IssuerStat');

const IssuerStatsSchema = z
  .object({
    issuer_source: z.literal(ISSUER_SOURCE),
    issuer_org_rule: z.string(),
    advisory: z.literal(true).openapi({ description: "Descriptive: an issuer's volume moves no score." }),
    issuers: z.array(IssuerStatSchema),
    no_host: IssuerReachSchema.openapi('IssuerNoHost', {
      description: 'Ratings whose feedbackURI names no http(s) host (empty, ipfs:, data:, …).',
    }),
    policy_version: z.string(),
    source: z.string(),
    refreshed_at: z.string().nullable(),
  })
  .openapi('IssuerStats');

const CategorySchema = z
  .object({
    category: z
      .string()
      .openapi({ description: 'A declared type, verbatim (self-declared, never verified; untrusted text).' }),
    agent_count: z.number().int(),
    rated_agent_count: z.number().int(),
    total_reviews: z.number().int().openapi({ description: 'Eligible ratings received by those agents.' }),
  })
  .openapi('Category');

const CategoryCatalogSchema = z
  .object({
    categories_source: z.literal('declared_type'),
    declared_type_verified: z.literal(false),
    ordering: z.literal('alphabetical'),
    note: z.string(),
    categories: z.array(CategorySchema),
    coverage: z
      .object({
        categorized_agents: z.number().int(),
        total_agents: z.number().int(),
        share: z.number().nullable(),
      })
      .openapi('CategoryCoverage'),
    refreshed_at: z.string().nullable(),
  })
  .openapi('CategoryCatalog');

// ------------------------------------------------------------------ routes

const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { 'application/json': { schema } },
});

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
    query: z.object({
      days: intQuery(CHAIN_DAYS, 'Days of activity history, ending today (UTC).'),
      limit: intQuery(CHAIN_TOP_LIMIT, 'Top wallets to return.'),
    }),
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

const feedRoute = createRoute({
  method: 'get',
  path: '/feed',
  summary: "The newest ratings, by the chain's own clock (free)",
  description:
    'Newest first by on-chain block time (descending), then network (ascending), then block number and log index (descending). Ratings not dated yet ' +
    'are not on the clock and are left out. `facet` is raw tag1: untrusted text.',
  tags: ['free'],
  request: {
    query: z.object({
      network: z
        .string()
        .optional()
        .openapi({ description: `${NETWORK_DOC} Omit it for the global feed.` }),
      limit: intQuery(FEED_LIMIT, 'How many ratings to return.'),
    }),
  },
  responses: {
    200: json(z.array(FeedEventSchema), 'Newest ratings first'),
    422: json(FeedQueryErrorSchema, '`limit` out of range, or `unknown_network` with `known_networks`'),
  },
});

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

const facetsRoute = createRoute({
  method: 'get',
  path: '/stats/facets',
  summary: 'Every facet (raw tag1) with volume, mean and reach (free)',
  description:
    'An object keyed by raw tag1 ("" is its own facet), in volume order. Keys are untrusted free text: escape them ' +
    'before rendering. Facets are separate judgements and are never averaged together.',
  tags: ['free'],
  request: {
    query: z.object({
      network: z
        .string()
        .optional()
        .openapi({ description: `${NETWORK_DOC} Omit it for the whole index.` }),
    }),
  },
  responses: {
    200: json(z.record(z.string(), FacetStatSchema), 'Facets by volume'),
    422: json(FeedQueryErrorSchema, '`unknown_network` with `known_networks`'),
  },
});

const typesRoute = createRoute({
  method: 'get',
  path: '/stats/types',
  summary: 'Declared-type coverage (free)',
  description:
    '`declared_type` is what an agent says about itself in its own metadata: self-declared, never a verification. ' +
    '`unknown` counts the agents that declare none (an empty or literal "unknown" declaration included).',
  tags: ['free'],
  responses: { 200: json(TypeBreakdownSchema, 'Coverage by declared type') },
});

const issuersRoute = createRoute({
  method: 'get',
  path: '/stats/issuers',
  summary: 'Ratings grouped by the host of their feedbackURI (free, advisory)',
  tags: ['free'],
  responses: { 200: json(IssuerStatsSchema, 'Issuers by volume') },
});

const categoriesRoute = createRoute({
  method: 'get',
  path: '/categories',
  summary: 'Categories: the types agents of the index declare, with counts (free)',
  description:
    'Our own small shape. A category is a declared type present in the index, verbatim; alphabetical, never by volume ' +
    'or reputation. Nothing is curated or invented, and declarations are never verified.',
  tags: ['free'],
  responses: { 200: json(CategoryCatalogSchema, 'The catalog') },
});

// ------------------------------------------------------------------ helpers

function resolveNetwork(ctx: AppContext, raw: string): string | null {
  const slug = raw.toLowerCase();
  return ctx.config.chains.some((c) => c.network === slug) ? slug : null;
}

function unknownNetwork<S extends 404 | 422>(c: Context, ctx: AppContext, network: string, status: S) {
  return c.json(
    {
      detail: {
        error: 'unknown_network' as const,
        network,
        known_networks: ctx.config.chains.map((ch) => ch.network),
        message: 'Not a chain this index holds. known_networks lists the valid slugs (GET /chains).',
      },
    },
    status,
  );
}

/** JSON object from ordered entries, keeping that order on the wire (integer-like keys too). */
function orderedObjectJson(entries: readonly [string, unknown][]): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
}

// ------------------------------------------------------------------ handlers

export function registerAggregateRoutes(app: App, ctx: AppContext): void {
  app.openapi(chainsRoute, async (c) => {
    const rows = await readChainStats(readerOf(ctx.db), ctx.config.chains, ctx.now());
    c.header('Cache-Control', CACHE_AGGREGATE);
    return c.json(rows, 200);
  });

  app.openapi(chainRoute, async (c) => {
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

  app.openapi(feedRoute, async (c) => {
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

  app.openapi(leaderboardRoute, async (c) => {
    // No parameters at all: any query parameter is a 422 pointing at the paged route, checked
    // before any work (this route never answers 402).
    const params = [...new Set(new URL(c.req.url).searchParams.keys())].sort();
    if (params.length > 0) {
      return c.json(
        {
          detail: {
            error: 'leaderboard_takes_no_params' as const,
            params,
            paged_route: PAGED_ROUTE,
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

  app.openapi(facetsRoute, async (c) => {
    const { network: raw } = c.req.valid('query');
    let network = '*';
    if (raw !== undefined) {
      const n = resolveNetwork(ctx, raw);
      if (n === null) return unknownNetwork(c, ctx, raw, 422);
      network = n;
    }
    const facets = await readFacets(readerOf(ctx.db), network);
    const body = orderedObjectJson(facets.map(({ facet, ...stat }) => [facet, stat]));
    // Built by hand so the volume order survives on the wire (JSON.stringify would move
    // integer-like keys first); values are still JSON.stringify'd.
    return c.body(body, 200, {
      'Content-Type': 'application/json; charset=UTF-8',
      'Cache-Control': CACHE_AGGREGATE,
    }) as never;
  });

  app.openapi(typesRoute, async (c) => {
    const [t, meta] = await Promise.all([readTypeBreakdown(readerOf(ctx.db)), readRefreshMeta(readerOf(ctx.db))]);
    const head = {
      classification_source: 'self_declared',
      declared_type_verified: false,
      note:
        'declared_type is what each agent says about itself in its own on-chain metadata: self-declared, never ' +
        `verified by this index. "${UNKNOWN_TYPE}" means the agent did not say.`,
      total_agents: t.total_agents,
      declared_agents: t.declared_agents,
      unknown_agents: t.unknown_agents,
      unknown_share: t.unknown_share,
    };
    const types = orderedObjectJson(t.types.map(({ type, ...stat }) => [type, stat]));
    const body = `${JSON.stringify(head).slice(0, -1)},"types":${types},"refreshed_at":${JSON.stringify(meta.refreshed_at)}}`;
    return c.body(body, 200, {
      'Content-Type': 'application/json; charset=UTF-8',
      'Cache-Control': CACHE_AGGREGATE,
    }) as never;
  });

  app.openapi(issuersRoute, async (c) => {
    const [i, meta] = await Promise.all([readIssuers(readerOf(ctx.db)), readRefreshMeta(readerOf(ctx.db))]);
    c.header('Cache-Control', CACHE_AGGREGATE);
    return c.json(
      {
        issuer_source: ISSUER_SOURCE,
        issuer_org_rule:
          'Approximate registrable domain of issuer_host, without the Public Suffix List: the last two labels ' +
          '(feedback.example.com -> example.com), or the last three under a generic second level of a two-letter ' +
          'country code (api.shop.co.uk -> shop.co.uk); IP literals and single-label hosts are their own org. ' +
          'An attribution by name only, never a verification.',
        advisory: true as const,
        issuers: i.issuers,
        no_host: i.no_host,
        policy_version: POLICY_VERSION,
        source: 'agg_issuer',
        refreshed_at: meta.refreshed_at,
      },
      200,
    );
  });

  app.openapi(categoriesRoute, async (c) => {
    const [cat, meta] = await Promise.all([readCategories(readerOf(ctx.db)), readRefreshMeta(readerOf(ctx.db))]);
    c.header('Cache-Control', CACHE_AGGREGATE);
    return c.json(
      {
        categories_source: 'declared_type' as const,
        declared_type_verified: false as const,
        ordering: 'alphabetical' as const,
        note:
          'Each category is a type that indexed agents declare about themselves, verbatim, listed when at least one ' +
          'agent declares it. Self-declared, never verified; no score per category.',
        categories: cat.categories,
        coverage: cat.coverage,
        refreshed_at: meta.refreshed_at,
      },
      200,
    );
  });
}
