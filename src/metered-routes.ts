/**
 * METERED_ROUTES: every metered route, declared once, as plain data (no handler, no database, no
 * web framework). A top-level module of shared vocabulary: the paid handlers (below the paywall)
 * and the paywall both read it, and neither imports upward for it. Each entry holds the route's
 * path (OpenAPI template, also served under /v1), its tiers (id, price, the query that selects a
 * conditional tier, the cost reason, the neutral request the MCP door probes its 402 with), its
 * free preview and its OpenAPI operation. Everything below reads it, and nothing else declares a metered route:
 *  - the metered rows of the pricing table (src/payments/pricing.ts: `/pricing`, `matchTier`, the
 *    one rule that picks a request's tier, and so every 402's price), path patterns included;
 *  - the HTTP mounts and their OpenAPI entries (src/doors/http/routes/reputation.ts);
 *  - the MCP `rep_pricing` probe paths (src/doors/mcp/pricing-tool.ts) and the explorer's price labels;
 *  - the handler of each tier (src/paid/index.ts maps tier ids to handlers, and checks that every
 *    tier declared here has one).
 */
import { AGENT_RATINGS_LIMIT, LEADERBOARD_PAGE_LIMIT } from './request-params.js';

export interface FreePreview {
  /** The free route answering the same question about the same subject (template form). */
  endpoint: string;
  gives: string;
}

export interface MeteredTier {
  /** Stable tier id; travels in every 402 as `pricing.tier`. */
  id: string;
  /** USD as a decimal string, never a float. */
  price_usd: string;
  /** Query parameters that select this tier over the route's unconditional one. */
  when_query?: Readonly<Record<string, string>>;
  /** The cost reason behind the price, in one sentence. */
  why: string;
  /** A neutral request of this tier (path and query) whose 402 the MCP door probes; the 402 comes before validation. */
  probe: string;
}

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query';
  required: boolean;
  description?: string;
  schema: Record<string, unknown>;
}

export interface MeteredRoute {
  /** OpenAPI-style path (also served under /v1), e.g. `/reputation/wallet/{wallet}`. */
  path: string;
  /** One tier, or an unconditional tier and its conditional siblings (first: the default). */
  tiers: readonly MeteredTier[];
  /** The free route answering the same question about the same subject (null: none, on purpose). */
  free_preview: FreePreview | null;
  /** The OpenAPI operation (the responses are the door's, the same for every metered route). */
  openapi: { operationId: string; summary: string; parameters: readonly OpenApiParameter[]; answer: string };
}

/** Anchored regular expression of an OpenAPI path template: `{param}` is one path segment. */
export function pathPattern(template: string): string {
  const parts = template.split(/(\{[^}]+\})/);
  return `^${parts.map((p) => (/^\{[^}]+\}$/.test(p) ? '[^/]+' : p.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))).join('')}$`;
}

const PROBE_WALLET = '0x0000000000000000000000000000000000000000';

const walletParam: OpenApiParameter = {
  name: 'wallet',
  in: 'path',
  required: true,
  description: 'EVM address (0x + 40 hex, any case) or Solana base58 key (verbatim).',
  schema: { type: 'string' },
};
const queryParam = (
  name: string,
  description: string,
  schema: Record<string, unknown>,
): OpenApiParameter => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

const WALLET_PREVIEW: FreePreview = {
  endpoint: '/wallets/{wallet}/chains',
  gives:
    'the per-chain number for free: agent ids, final_score, total_reviews and distinct_raters per chain, and the global score',
};

export const METERED_ROUTES: readonly MeteredRoute[] = Object.freeze([
  {
    path: '/reputation/wallet/{wallet}',
    tiers: [
      {
        id: 'wallet-lookup',
        price_usd: '0.01',
        why: 'Decomposes one named wallet on request (per-chain scores, facets, self-rating gap, concentration, first and last rating): a query only you asked for.',
        probe: `/reputation/wallet/${PROBE_WALLET}`,
      },
      {
        id: 'wallet-snapshot',
        price_usd: '0.05',
        when_query: { snapshot: 'true' },
        why: 'The same decomposition plus a durable receipt row (inputs_digest, policy_version) kept for you to cite: the only route that writes.',
        probe: `/reputation/wallet/${PROBE_WALLET}?snapshot=true`,
      },
    ],
    free_preview: WALLET_PREVIEW,
    openapi: {
      operationId: 'getWalletReputation',
      summary: 'Wallet profile: the composition of its score ($0.01; $0.05 with snapshot=true)',
      parameters: [
        walletParam,
        queryParam(
          'snapshot',
          '`true` writes a durable receipt row with inputs_digest and policy_version ($0.05).',
          {
            type: 'string',
            enum: ['true', 'false'],
          },
        ),
      ],
      answer:
        'Wallet profile. `weighted_score` (`rater_weight_policy`) weighs each rater by its evidence; `rater_evidence` ' +
        'counts the raters by account history (fresh, established, relayed, pending, unavailable), with a verified payment, ' +
        'in a cohort, reciprocal, seeds (docs/POLICIES.md, rater weighting)',
    },
  },
  {
    path: '/reputation/wallet/{wallet}/history',
    tiers: [
      {
        id: 'wallet-history',
        price_usd: '0.03',
        why: "Rebuilds one wallet's score bucket by bucket over on-chain time: a cumulative computation per point, for one subject.",
        probe: `/reputation/wallet/${PROBE_WALLET}/history`,
      },
    ],
    free_preview: WALLET_PREVIEW,
    openapi: {
      operationId: 'getWalletHistory',
      summary: 'Score history by on-chain time, weekly or monthly, with coverage ($0.03)',
      parameters: [
        walletParam,
        queryParam('bucket', 'Granularity.', { type: 'string', enum: ['week', 'month'], default: 'week' }),
      ],
      answer: 'History',
    },
  },
  {
    path: '/reputation/agent/{network}/{agent_id}',
    tiers: [
      {
        id: 'agent-detail',
        price_usd: '0.02',
        why: 'Returns every rating one agent received, each with its transaction and revocation: the heaviest read of one subject.',
        probe: '/reputation/agent/base/1',
      },
    ],
    free_preview: {
      endpoint: '/search/{agent_id}',
      gives:
        'where that id exists, one row per chain with its owner, final_score, total_reviews and distinct_raters',
    },
    openapi: {
      operationId: 'getAgentReputation',
      summary:
        'One agent and every rating it received, each with its transaction, revoked ones marked ($0.02)',
      parameters: [
        { name: 'network', in: 'path', required: true, schema: { type: 'string' } },
        {
          name: 'agent_id',
          in: 'path',
          required: true,
          description: 'A decimal counter on EVM chains, a base58 key on solana; always a string.',
          schema: { type: 'string' },
        },
        queryParam(
          'limit',
          `Ratings returned (0 = the largest page, ${AGENT_RATINGS_LIMIT.max}); truncation is always declared in \`pagination\`.`,
          {
            type: 'integer',
            minimum: AGENT_RATINGS_LIMIT.min,
            maximum: AGENT_RATINGS_LIMIT.max,
            default: AGENT_RATINGS_LIMIT.default,
          },
        ),
        queryParam('offset', 'First rating returned.', { type: 'integer', minimum: 0, default: 0 }),
        queryParam(
          'after',
          'Keyset cursor: `pagination.next_cursor` of the previous page (instead of offset).',
          {
            type: 'string',
          },
        ),
      ],
      answer:
        'Agent detail. Each rating carries `document` (fetch state, `integrity_state` match / mismatch / no_commitment / ' +
        'unreachable / not_json / changed, `blob_sha256`, `byte_length`, `parser_version`, `mismatches[]`; null when the ' +
        'rating names no URI), `author_class`, `responses[]` and `payment_proof` (null, or verified / not_found / mismatch / ' +
        'unsupported_chain); `evidence` counts beside the score move no score. Each rating also carries `rater_evidence`: ' +
        'its rater’s account history (nonce of its first rating transaction), verified payments to this subject, ' +
        'independent breadth, cohort, graph trust, reciprocity, and the weight of its voice in `weighted_score`' +
        ". `registration` (null without an agentURI): the agent's registration file as declared by the agent (`state` " +
        'pending / valid / invalid / unreachable / changed, `problems[]`, name, description, `services[]` each with ' +
        '`domain_proof` and `liveness`, x402_support, active, fetched_at)',
    },
  },
  {
    path: '/reputation/rater/{wallet}',
    tiers: [
      {
        id: 'rater-profile',
        price_usd: '0.01',
        why: 'Decomposes what one wallet emitted as a rater (subjects, dispersion, revocations, roles): no aggregate serves it.',
        probe: `/reputation/rater/${PROBE_WALLET}`,
      },
    ],
    // No free preview on purpose: the free routes describe subjects, never a rater's output.
    free_preview: null,
    openapi: {
      operationId: 'getRaterProfile',
      summary: 'The wallet as a rater: what it emitted, to whom, how dispersed; never a score ($0.01)',
      parameters: [walletParam],
      answer:
        'Rater profile. `evidence`: its account history (first rating, nonce, sender), verified payments, breadth, cohort, ' +
        'reciprocal subjects and graph trust with its parameters, each with its source; never a score',
    },
  },
  {
    path: '/leaderboard/page',
    tiers: [
      {
        id: 'leaderboard-deep',
        price_usd: '0.01',
        why: 'Pages past the free first page, widens it (limit up to 500) or filters it by declared type: a query shaped by you.',
        probe: '/leaderboard/page',
      },
    ],
    free_preview: { endpoint: '/leaderboard', gives: 'the first 100 rows of the same ranking, free' },
    openapi: {
      operationId: 'getLeaderboardPage',
      summary: 'Leaderboard past the first 100 rows, wider pages or a declared-type filter ($0.01 per call)',
      parameters: [
        queryParam('offset', 'Rows to skip.', { type: 'integer', minimum: 0, default: 0 }),
        queryParam('limit', 'Rows per page.', {
          type: 'integer',
          minimum: LEADERBOARD_PAGE_LIMIT.min,
          maximum: LEADERBOARD_PAGE_LIMIT.max,
          default: LEADERBOARD_PAGE_LIMIT.default,
        }),
        queryParam('type', 'Declared type filter (self-declared, never verified).', { type: 'string' }),
      ],
      answer: 'Leaderboard page',
    },
  },
]);
