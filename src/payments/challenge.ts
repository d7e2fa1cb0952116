/**
 * The x402 challenge: the `402` body (the contract's 22 top-level fields) and its headers, built
 * from the pricing table alone. No database, no network: a challenge is a price quote and is
 * issued before any validation, so a mistyped subject quotes exactly like a valid one.
 *
 * `accepts[]` entries are x402 v2 `PaymentRequirements` (scheme, network, asset, amount, payTo,
 * maxTimeoutSeconds, extra{name, version}): that type has no other required field, so the entries
 * are exactly what a v2 client signs against.
 */
import { encodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import {
  CURRENCY,
  FREE_TIER_SUMMARY,
  MAX_TIMEOUT_SECONDS,
  PAYMENT_NETWORKS,
  PRICING_VERSION,
  type FreePreview,
  type PaymentNetwork,
  type PriceTier,
} from './pricing.js';

const X402_VERSION = 2;
const SCHEME = 'exact';
/** Value of `X-Accept-Payment` on every 402. */
const ACCEPT_PAYMENT_HEADER = 'x402 USDC 2.0';
const SERVICE_LINE =
  'repindex: a read-only reputation index for ERC-8004 AI agents across 11 chains. Evidence, not verdicts: every score travels with its composition.';

/** Every free door (HTTP routes, badge, A2A, MCP); `{…}` segments are templates, not paste-ready. */
const FREE_DOORS: readonly string[] = Object.freeze([
  'GET /health',
  'GET /pricing',
  'GET /manifesto',
  'GET /search/{q}',
  'GET /wallets/{wallet}/chains',
  'GET /wallets/{wallet}/exists',
  'GET /chains',
  'GET /chains/{network}',
  'GET /feed',
  'GET /leaderboard',
  'GET /stats/facets',
  'GET /stats/types',
  'GET /stats/issuers',
  'GET /categories',
  'GET /badge/{wallet}.svg',
  'GET /workflows.json',
  'GET /.well-known/agent-card.json',
  'GET /.well-known/oauth-protected-resource',
  'GET /openapi.json',
  'GET /docs',
  'POST /a2a',
  'POST /mcp',
]);

/** What the paywall needs from the configuration to quote. */
export interface QuoteConfig {
  treasuryAddress: string;
  facilitatorUrl: string;
  paymentAssetOverrides?: Readonly<Record<string, string>>;
}

/** The offered networks with the configured asset overrides applied, in offer order. */
export function offeredNetworks(config: Pick<QuoteConfig, 'paymentAssetOverrides'>): PaymentNetwork[] {
  return PAYMENT_NETWORKS.map((n) => {
    const asset = config.paymentAssetOverrides?.[n.network];
    return asset ? { ...n, asset } : { ...n };
  });
}

/** One `accepts[]` entry per offered network, for this tier's amount, paid to the treasury. */
export function paymentRequirements(tier: PriceTier, config: QuoteConfig): PaymentRequirements[] {
  return offeredNetworks(config).map((n) => ({
    scheme: SCHEME,
    network: n.caip2 as PaymentRequirements['network'],
    asset: n.asset,
    amount: tier.amount,
    payTo: config.treasuryAddress,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    extra: { name: n.asset_name, version: n.asset_version },
  }));
}

/**
 * Canonical identity of what is bought: `METHOD /path?query` with the `/v1` alias stripped, HEAD
 * read as GET, and the query parameters sorted by name (stable: repeated keys keep their order).
 * Two requests with the same canonical resource are the same purchase. `routedPath`: the path the
 * router routed, when it is not the URL's (see the paywall's `PaidRequest.path`).
 */
export function canonicalResource(method: string, url: string | URL, routedPath?: string): string {
  const u = typeof url === 'string' ? new URL(url, 'http://x') : url;
  let path = routedPath ?? u.pathname;
  if (path === '/v1') path = '/';
  else if (path.startsWith('/v1/')) path = path.slice(3);
  const m = method.toUpperCase() === 'HEAD' ? 'GET' : method.toUpperCase();
  const entries = [...u.searchParams.entries()];
  // Array.prototype.sort is stable: equal keys keep their relative order.
  entries.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const q = new URLSearchParams(entries).toString();
  return `${m} ${path}${q ? `?${q}` : ''}`;
}

/** The free preview of a tier with `{name}` placeholders filled from the request's path params. */
function interpolatePreview(preview: FreePreview, params: Readonly<Record<string, string>>): FreePreview {
  return {
    endpoint: preview.endpoint.replace(/\{([a-z_]+)\}/g, (whole, name: string) =>
      params[name] !== undefined ? encodeURIComponent(params[name]) : whole,
    ),
    gives: preview.gives,
  };
}

/** The human dollar figure of a price: "0.01" → "$0.01" (never signed: accepts[].amount is). */
function usdFromPrice(priceUsd: string): string {
  return `$${priceUsd}`;
}

interface ChallengeBody {
  x402Version: number;
  scheme: string;
  resource: string;
  amount: string;
  price_usd: string;
  token: string;
  maxTimeoutSeconds: number;
  retryable: boolean;
  recipient: string;
  recipients: string[];
  supportedChains: number[];
  accepts: PaymentRequirements[];
  pricing: { version: string; tier: string; why: string; free_tier: string };
  next_action: string;
  free_preview?: FreePreview;
  see_also: string[];
  facilitator: string;
  description: string;
  error: string;
  message: string;
  mimeType: string;
  service: string;
}

interface ChallengeOptions {
  tier: PriceTier;
  /** Canonical resource (see {@link canonicalResource}). */
  resource: string;
  config: QuoteConfig;
  /** Raw path params of the request, to interpolate the free preview. */
  params?: Readonly<Record<string, string>>;
  /** Rejection code; default `payment_required` (a fresh quote). */
  error?: string;
  /** Human explanation of a rejection. */
  reason?: string;
  /** Override of next_action (rejections, the informative /api challenge). */
  nextAction?: string;
  /** Override of retryable (default: true on a fresh quote, false on a rejection). */
  retryable?: boolean;
  /**
   * Override of `message` (default: the quote, or `Payment rejected (<error>): <reason>. Nothing
   * was charged by this request.`), for an answer whose whole sentence must say what is known.
   */
  message?: string;
}

const FRESH_NEXT_ACTION =
  'Check that accepts[].payTo equals the treasury published out of band (if it differs, do not pay). ' +
  'Pick one accepts[] entry, sign an EIP-3009 TransferWithAuthorization for exactly its amount (base units), to its payTo, ' +
  'for its asset, on its network, valid for at most maxTimeoutSeconds; base64-encode the x402 payload and replay the identical ' +
  'request (same method, path and query) with header X-PAYMENT. Never sign the human `amount`.';

const REJECTED_NEXT_ACTION =
  'This X-PAYMENT was not accepted and retrying it will fail the same way: ask again without X-PAYMENT and sign the fresh accepts[] of that 402.';

export function buildChallenge(opts: ChallengeOptions): {
  body: ChallengeBody;
  headers: Record<string, string>;
} {
  const { tier, resource, config } = opts;
  const accepts = paymentRequirements(tier, config);
  const networks = offeredNetworks(config);
  const fresh = opts.error === undefined || opts.error === 'payment_required';
  const error = opts.error ?? 'payment_required';
  const price = usdFromPrice(tier.price_usd);
  const message =
    opts.message ??
    (fresh
      ? `Payment required: ${price} ${CURRENCY} for ${resource}. This 402 is a price quote; asking is free.`
      : `Payment rejected (${error})${opts.reason ? `: ${opts.reason}` : ''}. Nothing was charged by this request.`);
  // Field order: the contract's listing.
  const body: ChallengeBody = {
    x402Version: X402_VERSION,
    scheme: SCHEME,
    resource,
    amount: price,
    price_usd: tier.price_usd,
    token: CURRENCY,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    retryable: opts.retryable ?? fresh,
    recipient: config.treasuryAddress,
    recipients: [config.treasuryAddress],
    supportedChains: networks.map((n) => n.chain_id),
    accepts,
    pricing: { version: PRICING_VERSION, tier: tier.id, why: tier.why, free_tier: FREE_TIER_SUMMARY },
    next_action: opts.nextAction ?? (fresh ? FRESH_NEXT_ACTION : REJECTED_NEXT_ACTION),
    ...(tier.free_preview ? { free_preview: interpolatePreview(tier.free_preview, opts.params ?? {}) } : {}),
    see_also: [...FREE_DOORS],
    facilitator: config.facilitatorUrl,
    description: `${tier.id}: ${tier.why}`,
    error,
    message,
    mimeType: 'application/json',
    service: SERVICE_LINE,
  };
  return { body, headers: challengeHeaders(body) };
}

/** `X-Accept-Payment`, `X-Pricing-Version`, `Payment-Required` (the body, base64), `Cache-Control`. */
function challengeHeaders(body: ChallengeBody): Record<string, string> {
  return {
    'X-Accept-Payment': ACCEPT_PAYMENT_HEADER,
    'X-Pricing-Version': PRICING_VERSION,
    // The x402 codec (base64 of the JSON); our `resource` is the contract's string, not v2's object.
    'Payment-Required': encodePaymentRequiredHeader(body as unknown as PaymentRequired),
    'Cache-Control': 'no-store',
  };
}
