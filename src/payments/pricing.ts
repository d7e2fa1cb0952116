/**
 * The pricing table, as pure data: the single source that `GET /pricing` publishes, the x402
 * paywall charges from, `/workflows.json` and `/wallets/{wallet}/exists` quote, and the MCP door
 * relays. Nothing here touches the database or the network, so the catalog keeps answering with
 * the index down.
 *
 * Free/paid rule (docs/POLICIES.md): free is what one cached answer serves everybody (aggregates,
 * plus the number and location of a named subject); metered is the decomposition of one named
 * subject.
 * Change a price or move the free/paid line, bump `PRICING_VERSION`.
 */
import { METERED_ROUTES, pathPattern, type FreePreview } from '../metered-routes.js';

export type { FreePreview };

/** Version of the whole table; rides in every 402 (`pricing.version`) and in `X-Pricing-Version`. */
export const PRICING_VERSION = 'cost-tiered@5';
/** Settlement currency of every tier. */
export const CURRENCY = 'USDC';
/** USDC has 6 decimals on every offered network: 10 000 base units are one cent. */
const USDC_DECIMALS = 6;
/** x402 challenge timeout (`maxTimeoutSeconds`) of the challenge and of each `accepts[]` entry. */
export const MAX_TIMEOUT_SECONDS = 120;

export interface PaymentNetwork {
  /** Our slug for the chain. */
  network: string;
  chain_id: number;
  /** CAIP-2 id, as `accepts[].network` carries it. */
  caip2: string;
  /** The USDC contract on that network (`accepts[].asset`). */
  asset: string;
  /** EIP-712 domain of the token (`accepts[].extra`). */
  asset_name: string;
  asset_version: string;
  decimals: number;
}

function usdc(network: string, chainId: number, asset: string, name: string): PaymentNetwork {
  return Object.freeze({
    network,
    chain_id: chainId,
    caip2: `eip155:${chainId}`,
    asset,
    asset_name: name,
    asset_version: '2',
    decimals: USDC_DECIMALS,
  });
}

/**
 * Networks offered for payment, IN THE ORDER every challenge offers them (chosen by settlement
 * gas: Ethereum L1 and Solana are not offered). `asset` is the USDC contract of each network (the
 * same list is in docs/POLICIES.md).
 */
export const PAYMENT_NETWORKS: readonly PaymentNetwork[] = Object.freeze([
  usdc('base', 8453, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 'USD Coin'),
  usdc('avalanche', 43114, '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E', 'USD Coin'),
  usdc('arbitrum', 42161, '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', 'USD Coin'),
  usdc('optimism', 10, '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85', 'USD Coin'),
  usdc('polygon', 137, '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', 'USD Coin'),
  usdc('celo', 42220, '0xcebA9300f2b948710d2653dD7B07f33A8B32118C', 'USDC'),
]);

/** `GET` also answers `HEAD`; `ANY` is every method (the documented refusals). */
type TierMethod = 'GET' | 'POST' | 'ANY';

export interface PriceTier {
  /** Stable id; travels in every 402 as `pricing.tier`. */
  id: string;
  method: TierMethod;
  /**
   * Regular expression over the request path (the `/v1` alias already stripped), anchored: the
   * very pattern `matchTier` uses, published unaltered.
   */
  path: string;
  /** USD as a decimal string, never a float. */
  price_usd: string;
  /** The same price in USDC base units (6 decimals), as a string: "0.01" → "10000". */
  amount: string;
  free: boolean;
  /** True when the price of that path depends on the query string (see `when_query`). */
  conditional: boolean;
  /** Query parameters that select this tier over its unconditional sibling; null when none. */
  when_query: Readonly<Record<string, string>> | null;
  /** The cost reason behind the price, in one sentence. */
  why: string;
  /** Metered tiers: the free route that answers the same question (null: none, on purpose). */
  free_preview: FreePreview | null;
}

/** "0.01" → "10000" (exact decimal arithmetic on the string; no float ever touches a price). */
export function usdToBaseUnits(priceUsd: string, decimals: number = USDC_DECIMALS): string {
  const m = /^(\d+)(?:\.(\d+))?$/.exec(priceUsd);
  if (!m) throw new RangeError(`not a USD price: ${JSON.stringify(priceUsd)}`);
  const frac = m[2] ?? '';
  if (frac.length > decimals) throw new RangeError(`price ${priceUsd} has more than ${decimals} decimals`);
  const units = BigInt(m[1]! + frac.padEnd(decimals, '0'));
  return units.toString();
}

type TierInput = Omit<PriceTier, 'amount' | 'free' | 'conditional' | 'when_query' | 'free_preview'> &
  Partial<Pick<PriceTier, 'conditional' | 'when_query' | 'free_preview'>>;

function tier(t: TierInput): PriceTier {
  // Fail at load time on a pattern that would not compile in the matcher.
  new RegExp(t.path);
  const free = t.price_usd === '0';
  return Object.freeze({
    id: t.id,
    method: t.method,
    path: t.path,
    price_usd: t.price_usd,
    amount: usdToBaseUnits(t.price_usd),
    free,
    conditional: t.conditional ?? false,
    when_query: t.when_query ? Object.freeze({ ...t.when_query }) : null,
    why: t.why,
    free_preview: t.free_preview ? Object.freeze({ ...t.free_preview }) : null,
  });
}

/**
 * The metered tiers, derived from METERED_ROUTES (src/metered-routes.ts), where each metered route is
 * declared once: its path pattern, prices, conditional tiers and free preview.
 */
const METERED_TIERS: readonly PriceTier[] = METERED_ROUTES.flatMap((r) =>
  r.tiers.map((t) =>
    tier({
      id: t.id,
      method: 'GET',
      path: pathPattern(r.path),
      price_usd: t.price_usd,
      conditional: r.tiers.length > 1,
      ...(t.when_query ? { when_query: t.when_query } : {}),
      why: t.why,
      free_preview: r.free_preview,
    }),
  ),
);

/**
 * Every route, one tier each (the wallet route has two, chosen by `?snapshot=true`). Free tiers
 * are listed so the free/paid line is legible from the table alone.
 */
export const PRICE_TIERS: readonly PriceTier[] = Object.freeze([
  ...METERED_TIERS,
  // ------------------------------------------------------------------ free
  tier({
    id: 'health',
    method: 'GET',
    path: '^/health$',
    price_usd: '0',
    why: 'Index size, scan coverage and the policies in force: one cached answer for everybody.',
  }),
  tier({
    id: 'pricing',
    method: 'GET',
    path: '^/pricing$',
    price_usd: '0',
    why: 'This table: static, never touches the database.',
  }),
  tier({
    id: 'manifesto',
    method: 'GET',
    path: '^/manifesto(\\.md|\\.es\\.md|\\.html)?$',
    price_usd: '0',
    why: 'Static principles and how to verify them: a document that charges to be verified is an advertisement.',
  }),
  tier({
    id: 'workflows',
    method: 'GET',
    path: '^/workflows\\.json$',
    price_usd: '0',
    why: 'Static list of agent workflows.',
  }),
  tier({
    id: 'search',
    method: 'GET',
    path: '^/search(/.*)?$',
    price_usd: '0',
    why: 'The number and location of a named subject: what one cached answer serves everybody; charging would also bill typos.',
  }),
  tier({
    id: 'wallet-chains',
    method: 'GET',
    path: '^/wallets/[^/]+/chains$',
    price_usd: '0',
    why: 'Per-chain preview read from the hourly aggregate: the number, never who it is made of.',
  }),
  tier({
    id: 'wallet-exists',
    method: 'GET',
    path: '^/wallets/[^/]+/exists$',
    price_usd: '0',
    why: 'Booleans and counts from the hourly aggregate, sized for sweeps: the service does not charge for saying there is nothing.',
  }),
  tier({
    id: 'chains',
    method: 'GET',
    path: '^/chains(/[^/]+)?$',
    price_usd: '0',
    why: 'Aggregates per chain, recomputed after each index pass.',
  }),
  tier({
    id: 'feed',
    method: 'GET',
    path: '^/feed$',
    price_usd: '0',
    why: 'The newest ratings, the same answer for everybody.',
  }),
  tier({
    id: 'leaderboard-shop-window',
    method: 'GET',
    path: '^/leaderboard$',
    price_usd: '0',
    why: 'The first page of the ranking, precomputed after each index pass.',
  }),
  tier({
    id: 'stats-facets',
    method: 'GET',
    path: '^/stats/facets$',
    price_usd: '0',
    why: 'Index-wide aggregate.',
  }),
  tier({
    id: 'stats-types',
    method: 'GET',
    path: '^/stats/types$',
    price_usd: '0',
    why: 'Index-wide aggregate.',
  }),
  tier({
    id: 'stats-issuers',
    method: 'GET',
    path: '^/stats/issuers$',
    price_usd: '0',
    why: 'Index-wide aggregate.',
  }),
  tier({
    id: 'categories',
    method: 'GET',
    path: '^/categories$',
    price_usd: '0',
    why: 'Index-wide aggregate.',
  }),
  tier({
    id: 'badge',
    method: 'GET',
    path: '^/badge/[^/]+\\.svg$',
    price_usd: '0',
    why: 'An edge-cached image of the free global score: the number, never its decomposition.',
  }),
  tier({
    id: 'well-known',
    method: 'GET',
    path: '^/\\.well-known/.*$',
    price_usd: '0',
    why: 'Discovery documents (agent card, protected-resource metadata).',
  }),
  tier({
    id: 'docs',
    method: 'GET',
    path: '^/(openapi\\.json|docs(/.*)?|redoc)$',
    price_usd: '0',
    why: 'The live schema and its two renderings.',
  }),
  tier({
    id: 'a2a',
    method: 'POST',
    path: '^/a2a$',
    price_usd: '0',
    why: 'The free preview over A2A; answers point at the metered routes by path and price.',
  }),
  tier({
    id: 'mcp',
    method: 'POST',
    path: '^/mcp$',
    price_usd: '0',
    why: 'The door is free; metered tools relay the 402 of the route behind them.',
  }),
  tier({
    id: 'api',
    method: 'GET',
    path: '^/api$',
    price_usd: '0',
    why: 'An informative challenge that shows what a 402 looks like; nothing is bought.',
  }),
  tier({
    id: 'names',
    method: 'ANY',
    path: '^/names/(resolve|reverse)$',
    price_usd: '0',
    why: 'A documented refusal: there is no name search and no person lookup.',
  }),
  tier({
    id: 'accounts',
    method: 'ANY',
    path: '^/(auth|me)(/.*)?$',
    price_usd: '0',
    why: 'A documented refusal: there are no accounts; payment is the authentication.',
  }),
]);

const COMPILED = PRICE_TIERS.map((t) => ({ t, re: new RegExp(t.path) }));

function methodMatches(tierMethod: TierMethod, method: string): boolean {
  const m = method.toUpperCase();
  if (tierMethod === 'ANY') return true;
  if (tierMethod === 'GET') return m === 'GET' || m === 'HEAD';
  return m === tierMethod;
}

function stripV1(path: string): string {
  if (path === '/v1') return '/';
  return path.startsWith('/v1/') ? path.slice(3) : path;
}

/**
 * The tier a request falls into, or null when no tier covers it. `/v1` is stripped first; among
 * the tiers matching method and path, one whose `when_query` matches wins over the unconditional
 * one (so `?snapshot=true` selects `wallet-snapshot`).
 */
export function matchTier(
  method: string,
  path: string,
  query: URLSearchParams | Readonly<Record<string, string | undefined>> = {},
): PriceTier | null {
  const p = stripV1(path);
  const get = (k: string): string | null | undefined =>
    query instanceof URLSearchParams ? query.get(k) : query[k];
  let fallback: PriceTier | null = null;
  for (const { t, re } of COMPILED) {
    if (!methodMatches(t.method, method) || !re.test(p)) continue;
    if (t.when_query) {
      if (Object.entries(t.when_query).every(([k, v]) => get(k) === v)) return t;
    } else if (!fallback) {
      fallback = t;
    }
  }
  return fallback;
}

/** The tier with that id (throws on an unknown id: ids are code, not input). */
export function tierById(id: string): PriceTier {
  const t = PRICE_TIERS.find((x) => x.id === id);
  if (!t) throw new Error(`unknown pricing tier ${id}`);
  return t;
}

export const FREE_TIER_SUMMARY =
  'Free is what one cached answer serves everybody: index aggregates, plus the number and location of a named subject ' +
  '(/search/{q}, /wallets/{wallet}/chains, /wallets/{wallet}/exists, /badge/{wallet}.svg). Metered is the decomposition ' +
  'of one named subject: who rated, how often, on which facet, when, in which transaction.';

export interface PricingCatalog {
  pricing_version: string;
  currency: string;
  /** Network slugs in the order every challenge offers them. */
  networks: string[];
  accepted_networks: PaymentNetwork[];
  /** The single pinned `payTo`; null while TREASURY_ADDRESS is unset (metered routes answer 503). */
  treasury: string | null;
  max_timeout_seconds: number;
  free_tier: string;
  authority: string;
  tiers: PriceTier[];
}

/** The published catalog: the table above plus the treasury from the configuration. */
export function pricingCatalog(config: {
  treasuryAddress: string | null;
  /** X402_ASSET_<NETWORK>: the token a challenge quotes on that network (the catalog says the same). */
  paymentAssetOverrides?: Readonly<Record<string, string>>;
}): PricingCatalog {
  return {
    pricing_version: PRICING_VERSION,
    currency: CURRENCY,
    networks: PAYMENT_NETWORKS.map((n) => n.network),
    accepted_networks: PAYMENT_NETWORKS.map((n) => ({
      ...n,
      asset: config.paymentAssetOverrides?.[n.network] ?? n.asset,
    })),
    treasury: config.treasuryAddress,
    max_timeout_seconds: MAX_TIMEOUT_SECONDS,
    free_tier: FREE_TIER_SUMMARY,
    authority:
      "The authoritative price of one call is the accepts[] of that call's own 402: the price can depend on the query string (?snapshot=true).",
    tiers: PRICE_TIERS.map((t) => ({
      ...t,
      when_query: t.when_query ? { ...t.when_query } : null,
      free_preview: t.free_preview ? { ...t.free_preview } : null,
    })),
  };
}
