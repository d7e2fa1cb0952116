/** Response schemas of the free aggregate routes: /chains, /feed, /leaderboard, /stats/*, /categories. */
import { z } from '@hono/zod-openapi';
import { ISSUER_SOURCE } from '../../../read/stats.js';
import { UnknownNetworkSchema, ValidationErrorSchema } from './common.js';

export const PAGED_ROUTE = '/leaderboard/page';

export const FeedQueryErrorSchema = z.union([ValidationErrorSchema, UnknownNetworkSchema]);

export const ChainStatSchema = z
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

export const FacetStatSchema = z
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

export const ChainDetailSchema = z
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

export const FeedEventSchema = z
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

export const LeaderboardSchema = z
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

export const LeaderboardParamsErrorSchema = z
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

export const TypeBreakdownSchema = z
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

const DocumentCoverageSchema = z
  .object({
    documents: z.number().int(),
    fetched: z.number().int(),
    matching: z.number().int(),
    verified_payments: z.number().int(),
  })
  .openapi('DocumentCoverage');

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

export const IssuerStatsSchema = z
  .object({
    issuer_source: z.literal(ISSUER_SOURCE),
    issuer_org_rule: z.string(),
    advisory: z.literal(true).openapi({ description: "Descriptive: an issuer's volume moves no score." }),
    issuers: z.array(IssuerStatSchema),
    no_host: IssuerReachSchema.openapi('IssuerNoHost', {
      description: 'Ratings whose feedbackURI names no http(s) host (empty, ipfs:, data:, …).',
    }),
    document_coverage: z
      .object({
        by_host: z.record(z.string(), DocumentCoverageSchema),
        no_host: DocumentCoverageSchema,
      })
      .openapi({ description: 'Feedback-document coverage per issuer host. Advisory: moves no score.' }),
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

export const CategoryCatalogSchema = z
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

const counts = (keys: readonly string[]) =>
  z.object(Object.fromEntries(keys.map((k) => [k, z.number().int()])));

export const DocumentStatsSchema = z
  .object({
    advisory: z.literal(true).openapi({ description: 'Evidence coverage: moves no score.' }),
    ratings: z.number().int().openapi({ description: 'Ratings indexed.' }),
    ratings_with_uri: z
      .number()
      .int()
      .openapi({ description: 'Ratings naming a feedbackURI: each has one document job.' }),
    by_state: counts(['queued', 'leased', 'retry', 'succeeded', 'failed']).openapi({
      description: 'Document jobs by fetch state.',
    }),
    by_integrity: counts([
      'match',
      'mismatch',
      'no_commitment',
      'unreachable',
      'not_json',
      'changed',
    ]).openapi({
      description: 'Documents by integrity against the on-chain feedbackHash.',
    }),
    by_payment: counts(['verified', 'not_found', 'mismatch', 'unsupported_chain']).openapi({
      description: 'Documents naming a proofOfPayment, by the check of that payment on chain.',
    }),
    responses: z.number().int().openapi({ description: 'ResponseAppended events indexed.' }),
    by_responder_class: counts(['owner', 'operator', 'third_party']),
    by_issuer: z
      .array(
        z.object({
          issuer_host: z
            .string()
            .openapi({ description: 'Lower-cased feedbackURI host, or `no_host`. Untrusted text.' }),
          documents: z.number().int(),
          fetched: z.number().int(),
          matching: z.number().int(),
          verified_payments: z.number().int(),
        }),
      )
      .openapi({ description: 'Coverage per feedbackURI host, the 50 largest.' }),
    fetcher_enabled: z
      .boolean()
      .openapi({ description: 'False when this service runs with FEEDBACK_FETCH=0.' }),
  })
  .openapi('DocumentStats');
