/**
 * The request parameters the HTTP door and the MCP tools share, one schema per parameter set:
 * the free routes' query strings (`/feed`, `/chains/{network}`) and the MCP tools' call
 * arguments (JSON values; the bounds are those the paid handlers and the read model enforce,
 * imported from them, never written twice). An MCP tool's arguments become the query of the
 * route it calls, so the route's own validation answers what the schema here lets through.
 */
import { z } from '@hono/zod-openapi';
import { AGENT_RATINGS_LIMIT, LEADERBOARD_PAGE_LIMIT } from '../../../request-params.js';
import { CHAIN_DAYS, CHAIN_TOP_LIMIT } from '../../../read/chains.js';
import { FEED_LIMIT } from '../../../read/feed.js';
import { HISTORY_BUCKETS, type HistoryBucket } from '../../../scoring/history.js';
import { NETWORK_DOC, intQuery } from './common.js';

// ------------------------------------------------------------------ HTTP query strings

/** `GET /feed?network&limit`. */
export const FeedQuerySchema = z.object({
  network: z
    .string()
    .optional()
    .openapi({ description: `${NETWORK_DOC} Omit it for the global feed.` }),
  limit: intQuery(FEED_LIMIT, 'How many ratings to return.'),
});

/** `GET /chains/{network}?days&limit`. */
export const ChainQuerySchema = z.object({
  days: intQuery(CHAIN_DAYS, 'Days of activity history, ending today (UTC).'),
  limit: intQuery(CHAIN_TOP_LIMIT, 'Top wallets to return.'),
});

// ------------------------------------------------------------------ MCP tool arguments

const payment = z
  .string()
  .min(1)
  .optional()
  .describe(
    'The base64 x402 payment payload (a signed EIP-3009 authorization) for THIS call, sent as X-PAYMENT. Omit it to get the 402 challenge (a free price quote). Sign only when recipient_check.verdict is OK_TO_PAY.',
  );
const wallet = z
  .string()
  .describe(
    'EVM address (0x + 40 hex, any case) or Solana base58 key (32-44 chars, case-sensitive, send verbatim).',
  );
const network = z.string().describe('Chain slug (vocabulary: chains[].network of rep_index_status).');

/** The arguments of every MCP tool, by tool (`tools/list` shows them as JSON Schema). */
export const ToolArgs = {
  none: z.object({}).strict(),
  resolve: z
    .object({ q: z.string().describe('EVM address, Solana base58 key or agent id (exact match only).') })
    .strict(),
  checkWallet: z.object({ wallet }).strict(),
  chains: z
    .object({
      network: network.optional(),
      days: z.number().int().optional().describe('With network: days of the activity series.'),
    })
    .strict(),
  feed: z
    .object({
      network: network.optional(),
      limit: z.number().int().optional().describe('How many ratings.'),
    })
    .strict(),
  lookupWallet: z.object({
    wallet,
    snapshot: z
      .boolean()
      .optional()
      .describe('true: also write a durable receipt row (inputs_digest, policy_version); priced higher.'),
    payment,
  }),
  raterProfile: z.object({ wallet, payment }),
  lookupAgent: z.object({
    network: network.describe('Chain slug of the agent (required, no default).'),
    agent_id: z.string().describe('Agent id as a string (counter on EVM chains, base58 on solana).'),
    max_ratings: z
      .number()
      .int()
      .min(AGENT_RATINGS_LIMIT.min)
      .max(AGENT_RATINGS_LIMIT.max)
      .optional()
      .describe(
        `Ratings to return (default ${AGENT_RATINGS_LIMIT.default}; at most ${AGENT_RATINGS_LIMIT.max}; 0 = the largest page, ${AGENT_RATINGS_LIMIT.max}). Truncation is always declared.`,
      ),
    payment,
  }),
  history: z.object({
    wallet,
    bucket: z
      .enum(HISTORY_BUCKETS as unknown as readonly [HistoryBucket, ...HistoryBucket[]])
      .optional()
      .describe('Bucket size of the series (route default when omitted).'),
    payment,
  }),
  facets: z.object({
    wallet: wallet.optional(),
    network: network.optional().describe('Without wallet: restrict the reference table to one chain.'),
    payment: payment.describe(
      'Only with wallet: the base64 x402 payload for GET /reputation/wallet/{wallet}.',
    ),
  }),
  leaderboard: z.object({
    offset: z.number().int().min(0).optional(),
    limit: z.number().int().min(LEADERBOARD_PAGE_LIMIT.min).max(LEADERBOARD_PAGE_LIMIT.max).optional(),
    type: z
      .string()
      .min(1)
      .optional()
      .describe('Declared-type filter (self-declared, never verified); metered.'),
    payment,
  }),
} as const;
