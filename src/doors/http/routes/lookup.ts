/**
 * The free per-subject routes: `GET /search/{q}`, `GET /wallets/{wallet}/chains` and
 * `GET|HEAD /wallets/{wallet}/exists`. They serve the number and the location of a named subject,
 * never its decomposition (that is the paid `/reputation/*`). No SQL here: queries live in
 * src/read/wallets.ts and src/read/search.ts; scores come from src/scoring.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { readerOf } from '../../../db/database.js';
import type { App, AppContext } from '../context.js';
import { notAnAddress } from '../errors.js';
import { isAgentCounter, isBase58Key, normaliseAgentId, parseWallet } from '../../../identifiers.js';
import { PRICING_VERSION, tierById } from '../../../payments/pricing.js';
import {
  readWalletAggregate,
  readWalletTotals,
  WALLET_CHAINS_SOURCE,
  WALLET_SOURCE,
  type WalletChainRow,
} from '../../../read/wallets.js';
import { AGENT_LOOKUP_SOURCE, findAgentsById } from '../../../read/search.js';
import { readRefreshMeta } from '../../../read/aggregates.js';
import {
  caveatsNotComputedInPreview,
  meanFromAggregate,
  POLICY_VERSION,
  previewCaveats,
  scoreFromAggregates,
} from '../../../scoring/index.js';

/** Free per-subject answers change once per index pass; a short shared cache is honest. */
const CACHE_PREVIEW = 'public, max-age=60';

/** Longest accepted shape is an EVM agent id (uint256: 78 digits); anything longer is refused unread. */
export const MAX_QUERY_LENGTH = 78;
/** Longest accepted wallet shape is `0x` + 40 hex (42); a Solana key is at most 44. */
const MAX_WALLET_LENGTH = 44;

// ------------------------------------------------------------------ schemas

export const CaveatSchema = z
  .object({
    code: z.string().openapi({
      description:
        'One of the eight frozen codes (`no-score`, `concentration-degraded`, `single-rater`, `few-raters`, `top-client-share`, `campaign-per-rater`, `self-rated`, `burn-address`). Branch on this, never on `text`.',
    }),
    text: z.string().openapi({ description: 'Human sentence (Spanish today); may be reworded or translated.' }),
  })
  .openapi('Caveat');

export const NotAnAddressSchema = z
  .object({
    detail: z.object({
      error: z.string().openapi({ description: 'Always `not_an_address` here.', example: 'not_an_address' }),
      wallet: z.string().openapi({ description: 'The path segment as you sent it.' }),
      message: z.string(),
    }),
  })
  .openapi('NotAnAddress');

const walletParam = z.string().openapi({
  param: { name: 'wallet', in: 'path' },
  description:
    'EVM address (`0x` + 40 hex, any case; 40 hex without `0x` is accepted too) or a Solana base58 key (32-44 chars, case-SENSITIVE: send it verbatim). Anything else answers 422 `not_an_address`.',
  examples: ['0x000000000000000000000000000000000000dEaD', '1nc1nerator11111111111111111111111111111111'],
});

const WalletChainSchema = z
  .object({
    network: z.string().openapi({ description: 'Chain slug (vocabulary: `chains[].network` of `GET /health`).' }),
    agent_count: z.number().int().openapi({ description: 'ERC-8004 identities this wallet currently owns on this chain.' }),
    agent_ids: z.array(z.string()).openapi({
      description: 'Those identity ids (strings, never numbers), to feed `GET /reputation/agent/{network}/{agent_id}`.',
    }),
    final_score: z.number().nullable().openapi({
      description:
        "Score on this chain (0-100, six decimals) from this chain's eligible ratings only; **null** when nobody rated it (null is not zero; a real 0 is served as 0).",
    }),
    total_reviews: z.number().int().openapi({
      description: 'Eligible ratings on this chain (not revoked, value in 0..100, not written by the owner).',
    }),
    distinct_raters: z.number().int().openapi({ description: 'Distinct wallets behind those eligible ratings.' }),
  })
  .openapi('WalletChain');

const WalletChainsSchema = z
  .object({
    wallet: z.string().openapi({ description: 'The wallet asked about, normalised: EVM lower-cased, Solana verbatim.' }),
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
      description: 'Distinct eligible raters across the whole wallet, deduplicated between chains: do not sum the rows.',
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
    source: z.string().openapi({ description: 'Where the numbers come from: the aggregate recomputed after each index pass.' }),
    refreshed_at: z.string().nullable().openapi({
      description:
        'When that aggregate was last recomputed (hourly); null when never. The paid lookup reads the live rows and may lead it slightly.',
    }),
  })
  .openapi('WalletChains');

const ExistsFreeSchema = z
  .object({
    endpoint: z.string().openapi({ description: 'The free route to call next, in template form (`{wallet}` not interpolated).' }),
    gives: z.string(),
  })
  .openapi('ExistsFree');

const ExistsPaidSchema = z
  .object({
    endpoint: z.string().openapi({ description: 'The paid route, in template form (`{wallet}` not interpolated).' }),
    price_usd: z.string().openapi({
      description: "USD as a string, from the same table the paywall charges from. The authority for one call is its own 402's `accepts[]`.",
    }),
    pricing_version: z.string(),
    tier: z.string(),
    preview: z
      .object({
        distinct_raters: z.number().int().openapi({ description: 'Distinct eligible raters, deduplicated across chains.' }),
        last_rating_at: z.string().nullable().openapi({
          description: 'On-chain time of the newest rating received (any class); null when not dated, never a stand-in date.',
        }),
      })
      .openapi('ExistsPreview'),
    how: z.string(),
  })
  .openapi('ExistsPaid');

const WalletExistsSchema = z
  .object({
    wallet: z.string().openapi({ description: 'The wallet asked about, normalised: EVM lower-cased, Solana verbatim.' }),
    has_identity: z.boolean().openapi({ description: 'Holds at least one ERC-8004 identity on a chain we index.' }),
    identity_count: z.number().int(),
    chains_with_identity: z.number().int(),
    has_reputation: z.boolean().openapi({
      description: 'Its identities received at least one rating somewhere. `false` with `has_identity: true` is registered-but-unrated.',
    }),
    chains_with_reputation: z.number().int(),
    total_reviews: z.number().int().openapi({ description: 'Eligible ratings across every chain.' }),
    source: z.string(),
    refreshed_at: z.string().nullable(),
    next: z
      .object({
        free: ExistsFreeSchema.optional().openapi({ description: 'Present only when the wallet holds an identity.' }),
        paid: ExistsPaidSchema.optional().openapi({
          description: 'Present only when there are ratings to decompose. Absent (not null) means there is nothing to buy.',
        }),
      })
      .openapi('ExistsNext'),
  })
  .openapi('WalletExists');

const INTERPRETATIONS = ['evm_wallet', 'solana_wallet', 'evm_agent_id', 'solana_asset'] as const;
type Interpretation = (typeof INTERPRETATIONS)[number];

const SearchMatchSchema = z
  .object({
    interpreted_as: z.enum(INTERPRETATIONS).openapi({ description: 'The reading under which the index found this row.' }),
    network: z.string(),
    wallet: z.string().nullable().openapi({
      description: "The owning wallet on that chain (agent readings: the agent's current owner, null while unknown).",
    }),
    agent_count: z.number().int(),
    agent_ids: z.array(z.string()),
    declared_type: z.string().nullable().openapi({
      description: 'Self-declared type (never a verification). Wallet rows: set only when every agent of the row declares the same type.',
    }),
    final_score: z.number().nullable().openapi({ description: 'Score of this row (six decimals); null when unrated, never 0 for no data.' }),
    total_reviews: z.number().int(),
    distinct_raters: z.number().int(),
    detail_route: z.string().openapi({
      description: 'The paid route that decomposes this row, method and interpolated path, e.g. `GET /reputation/agent/base/7`.',
    }),
    source: z.string().openapi({ description: 'Where this row was read: the hourly aggregate or the live rows.' }),
  })
  .openapi('SearchMatch');

const SearchResultSchema = z
  .object({
    query: z.string().openapi({ description: 'Exactly what you sent.' }),
    normalized_query: z.string().openapi({
      description: 'What was looked up: EVM addresses lower-cased with `0x`, agent ids in canonical decimal, base58 byte for byte.',
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
      description: 'Refresh time of the aggregates this answer was read from; null before the first index pass.',
    }),
  })
  .openapi('SearchResult');

const ACCEPTED_SHAPES = [
  'EVM address: 0x followed by 40 hexadecimal characters, any case (40 hex without 0x is accepted too)',
  'Solana base58 key (a wallet or an agent asset): 32 to 44 characters of the base58 alphabet, case-sensitive, sent verbatim',
  'EVM agent id: a decimal counter, digits only (up to 78 digits), looked up on every EVM chain',
];

const UnrecognizedQuerySchema = z
  .object({
    detail: z.object({
      error: z.literal('unrecognized_query'),
      query: z.string().openapi({ description: 'The path segment as you sent it, empty string included.' }),
      accepted_shapes: z.array(z.string()).openapi({ description: 'The shapes this route takes, in prose.' }),
      message: z.string(),
    }),
  })
  .openapi('UnrecognizedQuery');

// ------------------------------------------------------------------ routes

const searchRoute = createRoute({
  method: 'get',
  path: '/search/{q}',
  operationId: 'search',
  tags: ['free'],
  summary: 'Paste a wallet, an agent id or a Solana asset: where it exists, one row per chain (free)',
  description:
    'Exact match only: no prefix, wildcard, listing, paging or name search. `interpretations` is what the shape allows ' +
    '(an EVM address → `evm_wallet`; digits → `evm_agent_id` on every EVM chain; a base58 key → `solana_wallet` and ' +
    '`solana_asset`); each row of `matches` says under which reading it was found and carries the paid route that ' +
    'decomposes it in `detail_route`. The same numeric id is a different agent, with a different owner, on each chain. ' +
    'A well-formed query the index has never seen is `200` with `matches: []`; a query with none of the accepted shapes is `422`.',
  request: {
    params: z.object({
      q: z.string().openapi({
        param: { name: 'q', in: 'path' },
        description: 'An EVM address, a Solana base58 key or an EVM agent id (digits), as one path segment.',
        examples: ['7', '0x000000000000000000000000000000000000dEaD', '1nc1nerator11111111111111111111111111111111'],
      }),
    }),
  },
  responses: {
    200: { description: 'What the query was read as, and what the index found', content: { 'application/json': { schema: SearchResultSchema } } },
    422: {
      description: '`unrecognized_query`: none of the accepted shapes; `accepted_shapes` lists them. The only error of this route.',
      content: { 'application/json': { schema: UnrecognizedQuerySchema } },
    },
  },
});

const chainsRoute = createRoute({
  method: 'get',
  path: '/wallets/{wallet}/chains',
  operationId: 'getWalletChains',
  tags: ['free'],
  summary: "Every identity a wallet holds and its score per chain: the free preview of the paid wallet profile",
  description:
    'Per chain where the wallet holds an identity: its agent ids, the score from that chain\'s ratings only (null when ' +
    'unrated), eligible ratings and distinct raters; then the wallet-wide figures and the global score (mean of the ' +
    'per-chain scores). A wallet with no identity anywhere is `200` with `chains: []` and `global_score: null`, not ' +
    '404. Read from the aggregate recomputed after each index pass (`source`, `refreshed_at`). EVM input in any case ' +
    'gives a byte-identical answer; Solana keys are case-sensitive.',
  request: { params: z.object({ wallet: walletParam }) },
  responses: {
    200: { description: 'The per-chain preview', content: { 'application/json': { schema: WalletChainsSchema } } },
    422: {
      description: '`not_an_address`: the segment is neither an EVM address nor a Solana base58 key.',
      content: { 'application/json': { schema: NotAnAddressSchema } },
    },
  },
});

const existsRoute = createRoute({
  method: 'get',
  path: '/wallets/{wallet}/exists',
  operationId: 'getWalletExists',
  tags: ['free'],
  summary: 'Is there anything on this wallet worth paying for? Booleans and counts (free; also HEAD)',
  description:
    'Sized for sweeping many wallets before spending anything: booleans and counts from the aggregate, no scores and no ' +
    'ids. `next.free` appears only when the wallet holds an identity; `next.paid` (price, tier and a preview of one count ' +
    'and one date) only when its identities have ratings to decompose. Absent means nothing to buy. `HEAD` answers the ' +
    'same status and `Content-Length` without a body. This route has its own rate budget: `RateLimit-Policy: 10;w=1;burst=20`.',
  request: { params: z.object({ wallet: walletParam }) },
  responses: {
    200: { description: 'Booleans, counts and where to go next', content: { 'application/json': { schema: WalletExistsSchema } } },
    422: {
      description: '`not_an_address`: same rule as `GET /wallets/{wallet}/chains`.',
      content: { 'application/json': { schema: NotAnAddressSchema } },
    },
  },
});

// ------------------------------------------------------------------ helpers

/** Config order of the networks (the order of `/health`), unknown ones last by name. */
function networkOrder(ctx: AppContext): (a: string, b: string) => number {
  const pos = new Map(ctx.config.chains.map((c, i) => [c.network, i]));
  return (a, b) => {
    const pa = pos.get(a) ?? Number.MAX_SAFE_INTEGER;
    const pb = pos.get(b) ?? Number.MAX_SAFE_INTEGER;
    return pa !== pb ? pa - pb : a < b ? -1 : a > b ? 1 : 0;
  };
}

/** A wallet route's path segment: bounded, then parsed (EVM lower-cased, Solana verbatim). */
function walletFrom(raw: string): string | null {
  if (raw.length > MAX_WALLET_LENGTH) return null;
  return parseWallet(raw)?.address ?? null;
}

/** Per-chain scores through the scoring module (`equal-weight-per-chain@2`). */
function scoredChains(rows: readonly WalletChainRow[]) {
  const score = scoreFromAggregates(
    rows.map((r) => ({ network: r.network, sum: r.eligible_sum, count: r.total_reviews, distinct_raters: r.distinct_raters })),
  );
  const byNet = new Map(score.per_chain.map((c) => [c.network, c.final_score]));
  return { global: score.final_score, chainScore: (n: string) => byNet.get(n) ?? null };
}

function singleType(types: readonly (string | null)[]): string | null {
  const set = new Set(types);
  if (set.size !== 1) return null;
  const [only] = [...set];
  return only ?? null;
}

/** JSON with an explicit Content-Length, so HEAD answers the same length without a body. */
function withLength<T>(c: Context, body: T): T {
  c.header('Content-Length', String(Buffer.byteLength(JSON.stringify(body), 'utf8')));
  return body;
}

// ------------------------------------------------------------------ handlers

export function registerLookupRoutes(app: App, ctx: AppContext): void {
  const order = networkOrder(ctx);
  const evmNetworks = ctx.config.chains.filter((c) => c.kind === 'evm').map((c) => c.network);
  const solanaNetworks = ctx.config.chains.filter((c) => c.kind === 'solana').map((c) => c.network);

  const unrecognized = (c: Context, query: string) =>
    c.json(
      {
        detail: {
          error: 'unrecognized_query' as const,
          query,
          accepted_shapes: ACCEPTED_SHAPES,
          message:
            'Nothing to look up: the query has none of the accepted shapes. A well-formed query the index has never seen answers 200 with matches: [].',
        },
      },
      422,
    );

  app.openapi(searchRoute, async (c) => {
    const q = c.req.valid('param').q;
    // Bound before any other work: the longest accepted shape is 78 characters.
    if (q.length > MAX_QUERY_LENGTH) return unrecognized(c, q);
    const wallet = parseWallet(q);
    const agentId = isAgentCounter(q) ? normaliseAgentId(evmNetworks[0] ?? 'base', q) : null;
    const base58 = isBase58Key(q);
    const interpretations: Interpretation[] = [];
    if (wallet?.kind === 'evm') interpretations.push('evm_wallet');
    if (base58) interpretations.push('solana_wallet');
    if (agentId !== null) interpretations.push('evm_agent_id');
    if (base58) interpretations.push('solana_asset');
    if (interpretations.length === 0) return unrecognized(c, q);

    type Match = z.infer<typeof SearchMatchSchema>;
    const matches: Match[] = [];
    const sources = new Set<string>();
    let refreshedAt: string | null = null;

    const walletReading = async (address: string, as: Interpretation) => {
      const agg = await readWalletAggregate(readerOf(ctx.db), address);
      sources.add(WALLET_CHAINS_SOURCE);
      refreshedAt = agg.refreshed_at;
      const scores = scoredChains(agg.chains);
      for (const r of [...agg.chains].sort((a, b) => order(a.network, b.network))) {
        matches.push({
          interpreted_as: as,
          network: r.network,
          wallet: address,
          agent_count: r.agent_count,
          agent_ids: r.agent_ids,
          declared_type: singleType(r.declared_types),
          final_score: scores.chainScore(r.network),
          total_reviews: r.total_reviews,
          distinct_raters: r.distinct_raters,
          detail_route: `GET /reputation/wallet/${address}`,
          source: WALLET_CHAINS_SOURCE,
        });
      }
    };
    const agentReading = async (id: string, networks: readonly string[], as: Interpretation) => {
      const rows = await findAgentsById(readerOf(ctx.db), id, networks);
      sources.add(AGENT_LOOKUP_SOURCE);
      refreshedAt ??= (await readRefreshMeta(readerOf(ctx.db))).refreshed_at;
      for (const r of rows.sort((a, b) => order(a.network, b.network))) {
        matches.push({
          interpreted_as: as,
          network: r.network,
          wallet: r.owner,
          agent_count: 1,
          agent_ids: [r.agent_id],
          declared_type: r.declared_type,
          final_score: meanFromAggregate(r.eligible_sum, r.total_reviews),
          total_reviews: r.total_reviews,
          distinct_raters: r.distinct_raters,
          detail_route: `GET /reputation/agent/${r.network}/${r.agent_id}`,
          source: AGENT_LOOKUP_SOURCE,
        });
      }
    };

    // Readings run in the order of `interpretations`, so matches are grouped by reading.
    for (const as of interpretations) {
      if (as === 'evm_wallet') await walletReading(wallet!.address, as);
      else if (as === 'solana_wallet') await walletReading(q, as);
      else if (as === 'evm_agent_id') await agentReading(agentId!, evmNetworks, as);
      else await agentReading(q, solanaNetworks, as);
    }

    const normalized = wallet?.kind === 'evm' ? wallet.address : agentId !== null && !base58 ? agentId : q;
    c.header('Cache-Control', CACHE_PREVIEW);
    return c.json(
      {
        query: q,
        normalized_query: normalized,
        interpretations,
        matches,
        match_count: matches.length,
        policy_version: POLICY_VERSION,
        source: [...sources].join(', '),
        refreshed_at: refreshedAt,
      },
      200,
    );
  });

  // The route takes exactly one path segment: an empty or multi-segment query is the same 422.
  const searchFallback = (c: Context) => {
    const rest = c.req.path.replace(/^(\/v1)?\/search\/?/, '');
    let q = rest;
    try {
      q = decodeURIComponent(rest);
    } catch {
      // keep the raw text
    }
    return unrecognized(c, q.length > 4 * MAX_QUERY_LENGTH ? q.slice(0, 4 * MAX_QUERY_LENGTH) : q);
  };
  // Hono's `/search/*` also matches `/search` and `/search/`.
  app.get('/search/*', searchFallback);

  app.openapi(chainsRoute, async (c) => {
    const raw = c.req.valid('param').wallet;
    const wallet = walletFrom(raw);
    if (wallet === null) return notAnAddress(c, raw);
    const agg = await readWalletAggregate(readerOf(ctx.db), wallet);
    const rows = [...agg.chains].sort((a, b) => order(a.network, b.network));
    const scores = scoredChains(rows);
    c.header('Cache-Control', CACHE_PREVIEW);
    return c.json(
      {
        wallet,
        chains: rows.map((r) => ({
          network: r.network,
          agent_count: r.agent_count,
          agent_ids: r.agent_ids,
          final_score: scores.chainScore(r.network),
          total_reviews: r.total_reviews,
          distinct_raters: r.distinct_raters,
        })),
        chains_with_identity: rows.length,
        chains_with_reputation: rows.filter((r) => r.ratings > 0).length,
        identity_count: rows.reduce((s, r) => s + r.agent_count, 0),
        total_reviews: rows.reduce((s, r) => s + r.total_reviews, 0),
        distinct_raters: agg.totals?.distinct_raters ?? 0,
        global_score: scores.global,
        caveats: previewCaveats(wallet),
        caveats_not_computed: caveatsNotComputedInPreview(),
        policy_version: POLICY_VERSION,
        source: WALLET_CHAINS_SOURCE,
        refreshed_at: agg.refreshed_at,
      },
      200,
    );
  });

  const lookupTier = tierById('wallet-lookup');
  // Documented for HEAD as well; Hono answers HEAD with the GET handler and drops the body.
  app.openAPIRegistry.registerPath({
    ...existsRoute,
    method: 'head',
    operationId: 'headWalletExists',
    summary: 'Same as GET without the body: the status and Content-Length only (free)',
  });
  app.openapi(existsRoute, async (c) => {
    const raw = c.req.valid('param').wallet;
    const wallet = walletFrom(raw);
    if (wallet === null) {
      const body = {
        detail: {
          error: 'not_an_address' as const,
          wallet: raw,
          message:
            'Not a wallet: expected an EVM address (0x + 40 hex, any case) or a Solana base58 key (32-44 chars).',
        },
      };
      return c.json(withLength(c, body), 422);
    }
    const { totals, refreshed_at } = await readWalletTotals(readerOf(ctx.db), wallet);
    const hasIdentity = (totals?.identity_count ?? 0) > 0;
    const hasReputation = (totals?.chains_with_reputation ?? 0) > 0;
    const next: z.infer<typeof WalletExistsSchema>['next'] = {};
    if (hasIdentity) {
      next.free = {
        endpoint: '/wallets/{wallet}/chains',
        gives: 'per chain: agent ids, final_score, total_reviews and distinct_raters, plus the global score (free)',
      };
    }
    if (hasIdentity && hasReputation && totals) {
      // Same table the paywall charges from (src/payments/pricing.ts).
      const t = lookupTier;
      next.paid = {
        endpoint: '/reputation/wallet/{wallet}',
        price_usd: t.price_usd,
        pricing_version: PRICING_VERSION,
        tier: t.id,
        preview: { distinct_raters: totals.distinct_raters, last_rating_at: totals.last_rating_at },
        how: 'Call it without payment: the 402 is the price quote. Sign one of its accepts[] (check payTo against the treasury in GET /pricing) and replay the identical request with X-PAYMENT.',
      };
    }
    const body = {
      wallet,
      has_identity: hasIdentity,
      identity_count: totals?.identity_count ?? 0,
      chains_with_identity: totals?.chains_with_identity ?? 0,
      has_reputation: hasReputation,
      chains_with_reputation: totals?.chains_with_reputation ?? 0,
      total_reviews: totals?.total_reviews ?? 0,
      source: WALLET_SOURCE,
      refreshed_at,
      next,
    };
    c.header('Cache-Control', CACHE_PREVIEW);
    return c.json(withLength(c, body), 200);
  });
}
