/**
 * The metered routes, each mounted behind the one x402 paywall (src/payments/paywall.ts): no
 * payment → 402 quote before any validation; with X-PAYMENT → verify → validate → claim + settle →
 * run. Declared in the OpenAPI document for readers; the paywall, not zod, sees the request first.
 * This is the only place the paywall meets Hono (`registerPaidRoute`).
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { App, AppContext } from '../context.js';
import { createPaywall, type Paywall } from '../../../payments/paywall.js';
import type { PaidHandler } from '../../../paid/handler.js';
import {
  agentDetailHandler,
  leaderboardPageHandler,
  raterProfileHandler,
  walletHistoryHandler,
  walletProfileRouteHandler,
} from '../../../paid/index.js';
import { registerApiChallenge } from './api-challenge.js';

const wallet = {
  name: 'wallet',
  in: 'path',
  required: true,
  description: 'EVM address (0x + 40 hex, any case) or Solana base58 key (verbatim).',
  schema: { type: 'string' },
};
const q = (name: string, description: string, schema: Record<string, unknown>) => ({
  name,
  in: 'query',
  required: false,
  description,
  schema,
});

const paidResponses = (what: string) => ({
  200: { description: `${what}. Headers X-Payment-Receipt (settlement tx hash) and X-Payment-Reused.` },
  402: {
    description:
      'The x402 challenge (a price quote, not an error): sign one entry of accepts[] and replay the identical request ' +
      'with X-PAYMENT. Issued before any validation. Also the answer to a spent or mismatched credential.',
  },
  404: { description: 'Unknown network or agent (the authorization is not consumed).' },
  422: { description: 'Invalid parameter (the authorization is not consumed).' },
  503: {
    description:
      '`facilitator_unavailable` (retry the SAME X-PAYMENT after Retry-After; nothing was consumed) or ' +
      '`payments_not_configured` (no TREASURY_ADDRESS).',
  },
});

interface PaidRouteOptions<I> {
  /** OpenAPI-style path, e.g. `/reputation/wallet/{wallet}` (also served under /v1). */
  path: string;
  handler: PaidHandler<I>;
  /**
   * Optional OpenAPI operation (summary, description, tags, responses, …) registered for the
   * document only: the paywall, not zod, sees the request first, so no request schema is enforced.
   */
  openapi?: Record<string, unknown>;
}

/** Mounts a PaidHandler behind the paywall on `app` (GET; HEAD follows GET in Hono). */
export function registerPaidRoute<I>(
  app: App,
  ctx: AppContext,
  opts: PaidRouteOptions<I>,
  paywall: Paywall = createPaywall(ctx),
): void {
  const honoPath = opts.path.replace(/\{([^}]+)\}/g, ':$1');
  if (opts.openapi) {
    app.openAPIRegistry.registerPath({
      responses: {},
      ...opts.openapi,
      method: 'get',
      path: opts.path,
    } as Parameters<App['openAPIRegistry']['registerPath']>[0]);
  }
  app.get(honoPath, async function paidRoute(c) {
    const params = { ...c.req.param() } as Record<string, string>;
    const answer = await paywall.handle(
      { request: c.req.raw, params, query: c.req.queries() ?? {} },
      opts.handler,
    );
    return c.body(answer.body, answer.status as ContentfulStatusCode, answer.headers);
  });
}

export function registerPaidRoutes(app: App, ctx: AppContext): void {
  const paywall = createPaywall(ctx);
  const tags = ['metered'];
  registerPaidRoute(
    app,
    ctx,
    {
      path: '/reputation/wallet/{wallet}',
      handler: walletProfileRouteHandler,
      openapi: {
        operationId: 'getWalletReputation',
        summary: 'Wallet profile: the composition of its score ($0.01; $0.05 with snapshot=true)',
        tags,
        parameters: [
          wallet,
          q(
            'snapshot',
            '`true` writes a durable receipt row with inputs_digest and policy_version ($0.05).',
            {
              type: 'string',
              enum: ['true', 'false'],
            },
          ),
        ],
        responses: paidResponses('Wallet profile'),
      },
    },
    paywall,
  );
  registerPaidRoute(
    app,
    ctx,
    {
      path: '/reputation/wallet/{wallet}/history',
      handler: walletHistoryHandler,
      openapi: {
        operationId: 'getWalletHistory',
        summary: 'Score history by on-chain time, weekly or monthly, with coverage ($0.03)',
        tags,
        parameters: [
          wallet,
          q('bucket', 'Granularity.', { type: 'string', enum: ['week', 'month'], default: 'week' }),
        ],
        responses: paidResponses('History'),
      },
    },
    paywall,
  );
  registerPaidRoute(
    app,
    ctx,
    {
      path: '/reputation/agent/{network}/{agent_id}',
      handler: agentDetailHandler,
      openapi: {
        operationId: 'getAgentReputation',
        summary:
          'One agent and every rating it received, each with its transaction, revoked ones marked ($0.02)',
        tags,
        parameters: [
          { name: 'network', in: 'path', required: true, schema: { type: 'string' } },
          {
            name: 'agent_id',
            in: 'path',
            required: true,
            description: 'A decimal counter on EVM chains, a base58 key on solana; always a string.',
            schema: { type: 'string' },
          },
          q(
            'limit',
            'Ratings returned (0 = the largest page, 1000); truncation is always declared in `pagination`.',
            {
              type: 'integer',
              minimum: 0,
              maximum: 1000,
              default: 200,
            },
          ),
          q('offset', 'First rating returned.', { type: 'integer', minimum: 0, default: 0 }),
          q('after', 'Keyset cursor: `pagination.next_cursor` of the previous page (instead of offset).', {
            type: 'string',
          }),
        ],
        responses: paidResponses('Agent detail'),
      },
    },
    paywall,
  );
  registerPaidRoute(
    app,
    ctx,
    {
      path: '/reputation/rater/{wallet}',
      handler: raterProfileHandler,
      openapi: {
        operationId: 'getRaterProfile',
        summary: 'The wallet as a rater: what it emitted, to whom, how dispersed; never a score ($0.01)',
        tags,
        parameters: [wallet],
        responses: paidResponses('Rater profile'),
      },
    },
    paywall,
  );
  registerPaidRoute(
    app,
    ctx,
    {
      path: '/leaderboard/page',
      handler: leaderboardPageHandler,
      openapi: {
        operationId: 'getLeaderboardPage',
        summary:
          'Leaderboard past the first 100 rows, wider pages or a declared-type filter ($0.01 per call)',
        tags,
        parameters: [
          q('offset', 'Rows to skip.', { type: 'integer', minimum: 0, default: 0 }),
          q('limit', 'Rows per page.', { type: 'integer', minimum: 1, maximum: 500, default: 100 }),
          q('type', 'Declared type filter (self-declared, never verified).', { type: 'string' }),
        ],
        responses: paidResponses('Leaderboard page'),
      },
    },
    paywall,
  );
  registerApiChallenge(app, ctx);
  app.openAPIRegistry.registerPath({
    method: 'get',
    path: '/api',
    operationId: 'getApiChallenge',
    summary: 'An informative x402 challenge: what a 402 looks like (sells nothing)',
    tags,
    responses: {
      402: {
        description:
          'An example challenge quoting the wallet-lookup tier; any X-PAYMENT sent here is ignored.',
      },
      503: { description: '`payments_not_configured`: no TREASURY_ADDRESS.' },
    },
  });
}
