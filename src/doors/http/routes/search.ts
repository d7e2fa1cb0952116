/**
 * `GET /search/{q}`: where an address or an agent id exists, exact match only (src/read/search.ts).
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { readerOf } from '../../../db/database.js';
import { isAgentCounter, isBase58Key, normalizeAgentId, parseWallet } from '../../../identifiers.js';
import { readRefreshMeta } from '../../../read/refresh-meta.js';
import { AGENT_LOOKUP_SOURCE, findAgentsById } from '../../../read/search.js';
import { WALLET_CHAINS_SOURCE, readWalletAggregate } from '../../../read/wallets.js';
import { POLICY_VERSION, meanFromAggregate } from '../../../scoring/index.js';
import type { App, AppContext } from '../context.js';
import {
  ACCEPTED_SHAPES,
  type Interpretation,
  SearchMatchSchema,
  SearchResultSchema,
  UnrecognizedQuerySchema,
} from '../schemas/lookup.js';
import { CACHE_PREVIEW, networkOrder, scoredChains } from '../wallet-preview.js';

/** Longest accepted shape is an EVM agent id (uint256: 78 digits); anything longer is refused unread. */
const MAX_QUERY_LENGTH = 78;

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
        examples: [
          '7',
          '0x000000000000000000000000000000000000dEaD',
          '1nc1nerator11111111111111111111111111111111',
        ],
      }),
    }),
  },
  responses: {
    200: {
      description: 'What the query was read as, and what the index found',
      content: { 'application/json': { schema: SearchResultSchema } },
    },
    422: {
      description:
        '`unrecognized_query`: none of the accepted shapes; `accepted_shapes` lists them. The only error of this route.',
      content: { 'application/json': { schema: UnrecognizedQuerySchema } },
    },
  },
});

function singleType(types: readonly (string | null)[]): string | null {
  const set = new Set(types);
  if (set.size !== 1) return null;
  const [only] = [...set];
  return only ?? null;
}

export function registerSearchRoutes(app: App, ctx: AppContext): void {
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

  app.openapi(searchRoute, async function search(c) {
    const q = c.req.valid('param').q;
    // Bound before any other work: the longest accepted shape is 78 characters.
    if (q.length > MAX_QUERY_LENGTH) return unrecognized(c, q);
    const wallet = parseWallet(q);
    const agentId = isAgentCounter(q) ? normalizeAgentId(evmNetworks[0] ?? 'base', q) : null;
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
}
