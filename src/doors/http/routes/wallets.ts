/**
 * `GET /wallets/{wallet}/chains` (the free per-chain preview of a wallet) and
 * `GET /wallets/{wallet}/exists` (booleans and counts, sized for sweeps); src/read/wallets.ts.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { readerOf } from '../../../db/database.js';
import { walletFrom } from '../../../request-params.js';
import { PRICING_VERSION, tierById } from '../../../payments/pricing.js';
import {
  WALLET_CHAINS_SOURCE,
  WALLET_SOURCE,
  readWalletAggregate,
  readWalletTotals,
} from '../../../read/wallets.js';
import { readSubjectPaidRaters } from '../../../read/raters.js';
import {
  POLICY_VERSION,
  RATER_WEIGHT_POLICY,
  caveatsNotComputedInPreview,
  previewCaveats,
} from '../../../scoring/index.js';
import type { App, AppContext } from '../context.js';
import { CACHE_PREVIEW, networkOrder, scoredChains } from '../wallet-preview.js';
import { notAnAddress } from '../errors.js';
import { NotAnAddressSchema, walletParam } from '../schemas/common.js';
import { WalletChainsSchema, WalletExistsSchema, WalletRaterEvidenceSchema } from '../schemas/lookup.js';

const walletChainsRoute = createRoute({
  method: 'get',
  path: '/wallets/{wallet}/chains',
  operationId: 'getWalletChains',
  tags: ['free'],
  summary:
    'Every identity a wallet holds and its score per chain: the free preview of the paid wallet profile',
  description:
    "Per chain where the wallet holds an identity: its agent ids, the score from that chain's ratings only (null when " +
    'unrated), eligible ratings and distinct raters; then the wallet-wide figures and the global score (mean of the ' +
    'per-chain scores). A wallet with no identity anywhere is `200` with `chains: []` and `global_score: null`, not ' +
    '404. Read from the aggregate recomputed after each index pass (`source`, `refreshed_at`). EVM input in any case ' +
    'gives a byte-identical answer; Solana keys are case-sensitive.',
  request: { params: z.object({ wallet: walletParam }) },
  responses: {
    200: {
      description: 'The per-chain preview',
      content: { 'application/json': { schema: WalletChainsSchema } },
    },
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
    200: {
      description: 'Booleans, counts and where to go next',
      content: { 'application/json': { schema: WalletExistsSchema } },
    },
    422: {
      description: '`not_an_address`: same rule as `GET /wallets/{wallet}/chains`.',
      content: { 'application/json': { schema: NotAnAddressSchema } },
    },
  },
});

const raterEvidenceRoute = createRoute({
  method: 'get',
  path: '/wallets/{wallet}/rater-evidence',
  operationId: 'getWalletRaterEvidence',
  tags: ['free'],
  summary: 'How many of a wallet’s raters paid it, verified on chain: the free preview of the rater evidence',
  description:
    'Two counts about the raters of the agents a wallet owns: its distinct eligible raters and how many of them carry a ' +
    'verified payment proof (the feedback document’s proofOfPayment, checked against the chain). The per-rater ' +
    'evidence (account history, cohorts, graph trust) and the `weighted_score` it feeds are in the paid wallet profile ' +
    'and agent detail. A wallet with no data is `200` with zeros. Counts from the background rater-evidence run ' +
    '(`computed_at`) and the free aggregates (`refreshed_at`).',
  request: { params: z.object({ wallet: walletParam }) },
  responses: {
    200: {
      description: 'The counts',
      content: { 'application/json': { schema: WalletRaterEvidenceSchema } },
    },
    422: {
      description: '`not_an_address`: same rule as `GET /wallets/{wallet}/chains`.',
      content: { 'application/json': { schema: NotAnAddressSchema } },
    },
  },
});

/** JSON with an explicit Content-Length, so HEAD answers the same length without a body. */
function withLength<T>(c: Context, body: T): T {
  c.header('Content-Length', String(Buffer.byteLength(JSON.stringify(body), 'utf8')));
  return body;
}

export function registerWalletRoutes(app: App, ctx: AppContext): void {
  const order = networkOrder(ctx);
  app.openapi(walletChainsRoute, async function getWalletChains(c) {
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

  app.openapi(raterEvidenceRoute, async function getWalletRaterEvidence(c) {
    const raw = c.req.valid('param').wallet;
    const wallet = walletFrom(raw);
    if (wallet === null) return notAnAddress(c, raw);
    const db = readerOf(ctx.db);
    const [{ totals, refreshed_at }, paid] = await Promise.all([
      readWalletTotals(db, wallet),
      readSubjectPaidRaters(db, wallet),
    ]);
    c.header('Cache-Control', CACHE_PREVIEW);
    return c.json(
      {
        wallet,
        distinct_raters: totals?.distinct_raters ?? 0,
        raters_with_verified_payment: paid.raters_with_verified_payment,
        rater_weight_policy: RATER_WEIGHT_POLICY,
        computed_at: paid.computed_at,
        refreshed_at,
        source: 'rater_evidence',
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
  app.openapi(existsRoute, async function getWalletExists(c) {
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
        gives:
          'per chain: agent ids, final_score, total_reviews and distinct_raters, plus the global score (free)',
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
