/** Response schemas of the lookups of a named subject: /search/{q}, /wallets/{wallet}/chains, /wallets/{wallet}/exists. */
import { z } from '@hono/zod-openapi';
import { CaveatSchema } from './common.js';

const WalletChainSchema = z
  .object({
    network: z
      .string()
      .openapi({ description: 'Chain slug (vocabulary: `chains[].network` of `GET /health`).' }),
    agent_count: z
      .number()
      .int()
      .openapi({ description: 'ERC-8004 identities this wallet currently owns on this chain.' }),
    agent_ids: z.array(z.string()).openapi({
      description:
        'Those identity ids (strings, never numbers), to feed `GET /reputation/agent/{network}/{agent_id}`.',
    }),
    final_score: z.number().nullable().openapi({
      description:
        "Score on this chain (0-100, six decimals) from this chain's eligible ratings only; **null** when nobody rated it (null is not zero; a real 0 is served as 0).",
    }),
    total_reviews: z.number().int().openapi({
      description: 'Eligible ratings on this chain (not revoked, value in 0..100, not written by the owner).',
    }),
    distinct_raters: z
      .number()
      .int()
      .openapi({ description: 'Distinct wallets behind those eligible ratings.' }),
  })
  .openapi('WalletChain');

export const WalletChainsSchema = z
  .object({
    wallet: z
      .string()
      .openapi({ description: 'The wallet asked about, normalized: EVM lower-cased, Solana verbatim.' }),
    chains: z.array(WalletChainSchema).openapi({
      description:
        'One row per chain where the wallet holds at least one identity, rated or not. Empty means "holds no identity on any chain we index": an answer, not an error.',
    }),
    chains_with_identity: z.number().int(),
    chains_with_reputation: z.number().int().openapi({
      description:
        "Chains where the wallet's identities received at least one rating (of any class). The gap against `chains_with_identity` is registered-but-unrated.",
    }),
    identity_count: z.number().int().openapi({ description: 'Identities owned across every chain.' }),
    total_reviews: z.number().int().openapi({ description: 'Eligible ratings across every chain.' }),
    distinct_raters: z.number().int().openapi({
      description:
        'Distinct eligible raters across the whole wallet, deduplicated between chains: do not sum the rows.',
    }),
    global_score: z.number().nullable().openapi({
      description:
        '`equal-weight-per-chain@2`: the mean of the non-null per-chain scores (one chain, one vote), six decimals; null when no chain has a score (including no identity anywhere).',
    }),
    caveats: z.array(CaveatSchema).openapi({
      description:
        'The SUBSET of caveats computable from public aggregates (today only `burn-address`). Empty does not mean verified clean.',
    }),
    caveats_not_computed: z.array(z.string()).openapi({
      description:
        'Caveat codes the paid `GET /reputation/wallet/{wallet}` evaluates and this free answer does not (sorted). Treat them as unverified, not as passed.',
    }),
    policy_version: z.string(),
    source: z.string().openapi({
      description: 'Where the numbers come from: the aggregate recomputed after each index pass.',
    }),
    refreshed_at: z.string().nullable().openapi({
      description:
        'When that aggregate was last recomputed (hourly); null when never. The paid lookup reads the live rows and may lead it slightly.',
    }),
  })
  .openapi('WalletChains');

const ExistsFreeSchema = z
  .object({
    endpoint: z.string().openapi({
      description: 'The free route to call next, in template form (`{wallet}` not interpolated).',
    }),
    gives: z.string(),
  })
  .openapi('ExistsFree');

const ExistsPaidSchema = z
  .object({
    endpoint: z
      .string()
      .openapi({ description: 'The paid route, in template form (`{wallet}` not interpolated).' }),
    price_usd: z.string().openapi({
      description:
        "USD as a string, from the same table the paywall charges from. The authority for one call is its own 402's `accepts[]`.",
    }),
    pricing_version: z.string(),
    tier: z.string(),
    preview: z
      .object({
        distinct_raters: z
          .number()
          .int()
          .openapi({ description: 'Distinct eligible raters, deduplicated across chains.' }),
        last_rating_at: z.string().nullable().openapi({
          description:
            'On-chain time of the newest rating received (any class); null when not dated, never a stand-in date.',
        }),
      })
      .openapi('ExistsPreview'),
    how: z.string(),
  })
  .openapi('ExistsPaid');

export const WalletExistsSchema = z
  .object({
    wallet: z
      .string()
      .openapi({ description: 'The wallet asked about, normalized: EVM lower-cased, Solana verbatim.' }),
    has_identity: z
      .boolean()
      .openapi({ description: 'Holds at least one ERC-8004 identity on a chain we index.' }),
    identity_count: z.number().int(),
    chains_with_identity: z.number().int(),
    has_reputation: z.boolean().openapi({
      description:
        'Its identities received at least one rating somewhere. `false` with `has_identity: true` is registered-but-unrated.',
    }),
    chains_with_reputation: z.number().int(),
    total_reviews: z.number().int().openapi({ description: 'Eligible ratings across every chain.' }),
    source: z.string(),
    refreshed_at: z.string().nullable(),
    next: z
      .object({
        free: ExistsFreeSchema.optional().openapi({
          description: 'Present only when the wallet holds an identity.',
        }),
        paid: ExistsPaidSchema.optional().openapi({
          description:
            'Present only when there are ratings to decompose. Absent (not null) means there is nothing to buy.',
        }),
      })
      .openapi('ExistsNext'),
  })
  .openapi('WalletExists');

export const WalletRaterEvidenceSchema = z
  .object({
    wallet: z
      .string()
      .openapi({ description: 'The wallet asked about, normalized: EVM lower-cased, Solana verbatim.' }),
    distinct_raters: z.number().int().openapi({
      description:
        'Distinct eligible raters of its agents (the free aggregate, as in /wallets/{wallet}/chains).',
    }),
    raters_with_verified_payment: z.number().int().openapi({
      description:
        "Of its raters, those with at least one rating whose feedback document's proofOfPayment was verified on chain (a transfer from the rater to the agent's owner or agentWallet, any token).",
    }),
    rater_weight_policy: z.string().openapi({
      description:
        'The weighting these facts feed (in the paid profile); the free preview shows no weight and no weighted score.',
    }),
    computed_at: z.string().nullable().openapi({
      description: 'When the rater evidence was last computed in the background; null: never yet.',
    }),
    refreshed_at: z
      .string()
      .nullable()
      .openapi({ description: 'When the free aggregates were last refreshed.' }),
    source: z.string(),
  })
  .openapi('WalletRaterEvidence');

const INTERPRETATIONS = ['evm_wallet', 'solana_wallet', 'evm_agent_id', 'solana_asset'] as const;

export type Interpretation = (typeof INTERPRETATIONS)[number];

export const SearchMatchSchema = z
  .object({
    interpreted_as: z
      .enum(INTERPRETATIONS)
      .openapi({ description: 'The reading under which the index found this row.' }),
    network: z.string(),
    wallet: z.string().nullable().openapi({
      description:
        "The owning wallet on that chain (agent readings: the agent's current owner, null while unknown).",
    }),
    agent_count: z.number().int(),
    agent_ids: z.array(z.string()),
    declared_type: z.string().nullable().openapi({
      description:
        'Self-declared type (never a verification). Wallet rows: set only when every agent of the row declares the same type.',
    }),
    final_score: z
      .number()
      .nullable()
      .openapi({ description: 'Score of this row (six decimals); null when unrated, never 0 for no data.' }),
    total_reviews: z.number().int(),
    distinct_raters: z.number().int(),
    detail_route: z.string().openapi({
      description:
        'The paid route that decomposes this row, method and interpolated path, e.g. `GET /reputation/agent/base/7`.',
    }),
    source: z
      .string()
      .openapi({ description: 'Where this row was read: the hourly aggregate or the live rows.' }),
  })
  .openapi('SearchMatch');

export const SearchResultSchema = z
  .object({
    query: z.string().openapi({ description: 'Exactly what you sent.' }),
    normalized_query: z.string().openapi({
      description:
        'What was looked up: EVM addresses lower-cased with `0x`, agent ids in canonical decimal, base58 byte for byte.',
    }),
    interpretations: z.array(z.enum(INTERPRETATIONS)).openapi({
      description: 'What the SHAPE of the query allows. More than one entry is the ambiguity signal.',
    }),
    matches: z.array(SearchMatchSchema).openapi({
      description:
        'What the index found: one row per chain and reading, never a single answer. Empty with non-empty `interpretations` means well-formed and unknown.',
    }),
    match_count: z.number().int(),
    policy_version: z.string(),
    source: z.string().openapi({ description: 'The sources read for this answer, comma-separated.' }),
    refreshed_at: z.string().nullable().openapi({
      description:
        'Refresh time of the aggregates this answer was read from; null before the first index pass.',
    }),
  })
  .openapi('SearchResult');

export const ACCEPTED_SHAPES = [
  'EVM address: 0x followed by 40 hexadecimal characters, any case (40 hex without 0x is accepted too)',
  'Solana base58 key (a wallet or an agent asset): 32 to 44 characters of the base58 alphabet, case-sensitive, sent verbatim',
  'EVM agent id: a decimal counter, digits only (up to 78 digits), looked up on every EVM chain',
];

export const UnrecognizedQuerySchema = z
  .object({
    detail: z.object({
      error: z.literal('unrecognized_query'),
      query: z.string().openapi({ description: 'The path segment as you sent it, empty string included.' }),
      accepted_shapes: z.array(z.string()).openapi({ description: 'The shapes this route takes, in prose.' }),
      message: z.string(),
    }),
  })
  .openapi('UnrecognizedQuery');
