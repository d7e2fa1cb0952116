/**
 * The request parameters every door and every paid handler share, written once: the wallet and
 * network path parameters, the page bounds of the ranked and paged routes, and the 422/404 bodies
 * their refusals answer with. Plain values, no Hono, no database: the HTTP routes wrap them in a
 * response, the paid handlers return them to the paywall, the metered-route table
 * (src/metered-routes.ts) and the MCP tools quote the bounds.
 */
import type { Config } from './config.js';
import { parseWallet } from './identifiers.js';

/** Rows of the free first page (`GET /leaderboard`). */
export const LEADERBOARD_FREE_ROWS = 100;
/** `limit` of the paid leaderboard page: rows per page (the free page's size by default). */
export const LEADERBOARD_PAGE_LIMIT = { min: 1, max: 500, default: LEADERBOARD_FREE_ROWS } as const;
/** `limit` (alias `max_ratings`) of the agent detail: ratings per page; 0 = the largest page. */
export const AGENT_RATINGS_LIMIT = { min: 0, max: 1000, default: 200 } as const;

/** FastAPI-style validation item, the shape of the reference schema's HTTPValidationError. */
export interface ValidationItem {
  loc: (string | number)[];
  msg: string;
  type: string;
  input?: unknown;
}

/** The 422 body for a string that is neither an EVM address nor a Solana key (badge shape too). */
export function notAnAddressBody(wallet: string) {
  return {
    detail: {
      error: 'not_an_address' as const,
      wallet,
      message:
        'Not a wallet: expected an EVM address (0x + 40 hex, any case) or a Solana base58 key (32-44 chars).',
    },
  };
}

/** The known slug for `raw` (case-insensitive), or null. */
export function resolveNetwork(ctx: { config: Pick<Config, 'chains'> }, raw: string): string | null {
  const slug = raw.toLowerCase();
  return ctx.config.chains.some((c) => c.network === slug) ? slug : null;
}

/** The `unknown_network` body (404 on `/chains/{network}` and the agent route, 422 on `/feed`). */
export function unknownNetworkBody(ctx: { config: Pick<Config, 'chains'> }, network: string) {
  return {
    detail: {
      error: 'unknown_network' as const,
      network,
      known_networks: ctx.config.chains.map((c) => c.network),
      message: 'Not a chain this index holds. known_networks lists the valid slugs (GET /chains).',
    },
  };
}

/** Longest accepted wallet shape: a Solana key (44); `0x` + 40 hex is 42. */
const MAX_WALLET_LENGTH = 44;

/** A wallet route's path segment: bounded, then parsed (EVM lower-cased, Solana verbatim); null when not a wallet. */
export function walletFrom(raw: string): string | null {
  if (raw.length > MAX_WALLET_LENGTH) return null;
  return parseWallet(raw)?.address ?? null;
}
