/**
 * The metered routes, each mounted behind the one x402 paywall (src/payments/paywall.ts): no
 * payment → 402 quote before any validation; with X-PAYMENT → verify → validate → claim + settle →
 * run. Declared in the OpenAPI document for readers; the paywall, not zod, sees the request first.
 * This is the only place the paywall meets Hono (`registerPaidRoute`). Also `GET /api`, the
 * informative 402 (sells nothing).
 */
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { App, AppContext } from '../context.js';
import { createPaywall, paymentsNotConfiguredBody, type Paywall } from '../../../payments/paywall.js';
import type { PaidHandler } from '../../../paid/handler.js';
import { routeHandler } from '../../../paid/index.js';
import { METERED_ROUTES } from '../../../metered-routes.js';
import { buildChallenge, canonicalResource } from '../../../payments/challenge.js';
import { tierById } from '../../../payments/pricing.js';
import { json, PaidUnavailableSchema } from '../schemas/common.js';

const paidResponses = (what: string) => ({
  200: { description: `${what}. Headers X-Payment-Receipt (settlement tx hash) and X-Payment-Reused.` },
  402: {
    description:
      'The x402 challenge (a price quote, not an error): sign one entry of accepts[] and replay the identical request ' +
      'with X-PAYMENT. Issued before any validation. Also the answer to a spent or mismatched credential (`error` set, ' +
      '`retryable: false`: ask again without X-PAYMENT), and `payment_in_flight` (`retryable: true`, Retry-After): ' +
      'another request is settling this very authorization and it is not spent on chain yet, or the chain could not be ' +
      'read (`message` says which); retry the SAME X-PAYMENT after Retry-After, never re-sign.',
    headers: { 'Retry-After': { schema: { type: 'string' }, description: 'On `payment_in_flight` only.' } },
  },
  404: { description: 'Unknown network or agent (the authorization is not consumed).' },
  422: { description: 'Invalid parameter (the authorization is not consumed).' },
  503: {
    ...json(
      PaidUnavailableSchema,
      '`facilitator_unavailable` (retry the SAME X-PAYMENT after Retry-After; nothing was consumed), ' +
        '`paid_capacity_exhausted` (retry the SAME X-PAYMENT after Retry-After), ' +
        '`database_unavailable` (retry the SAME X-PAYMENT after Retry-After; nothing was charged, or, with ' +
        'X-Payment-Receipt set, the payment was settled and the retry is answered with no new charge), ' +
        '`payment_spent_pending` (the authorization is spent on chain: its settlement is being recorded, or its ' +
        'answer prepared by another request; retry the SAME X-PAYMENT after Retry-After: answered 200 with its ' +
        'receipt, never charged again) or `payments_not_configured` (no TREASURY_ADDRESS, `retryable: false`).',
    ),
    headers: {
      'Retry-After': { schema: { type: 'string' }, description: 'Seconds; on every retryable 503.' },
      'X-Payment-Receipt': {
        schema: { type: 'string' },
        description:
          'Set when the payment is known to be settled (its transaction): the retry is never charged again.',
      },
    },
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
      { request: c.req.raw, path: c.req.path, params, query: c.req.queries() ?? {} },
      opts.handler,
    );
    return c.body(answer.body, answer.status as ContentfulStatusCode, answer.headers);
  });
}

/**
 * Every metered route of METERED_ROUTES (src/metered-routes.ts), behind one paywall, with
 * its OpenAPI entry; the handler of each comes from src/paid/index.ts (`routeHandler`).
 */
export function registerPaidRoutes(app: App, ctx: AppContext): void {
  const paywall = createPaywall(ctx);
  const tags = ['metered'];
  for (const route of METERED_ROUTES) {
    const { operationId, summary, parameters, answer } = route.openapi;
    const openapi = { operationId, summary, tags, parameters, responses: paidResponses(answer) };
    registerPaidRoute(app, ctx, { path: route.path, handler: routeHandler(route), openapi }, paywall);
  }
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

/**
 * `GET /api`: the informative 402 (contract, Errors table). It shows what a challenge looks like,
 * quoting the entry tier (`wallet-lookup`) as the example, and sells nothing: an `X-PAYMENT` sent
 * here is ignored and never settled. With TREASURY_ADDRESS unset it answers the same 503 as the
 * metered routes (there is no payTo to show).
 */
const API_EXAMPLE_TIER = 'wallet-lookup';

export function registerApiChallenge(app: App, ctx: AppContext): void {
  app.get('/api', (c) => {
    const treasury = ctx.config.treasuryAddress;
    if (!treasury) return c.json(paymentsNotConfiguredBody(), 503, { 'Cache-Control': 'no-store' });
    const { body, headers } = buildChallenge({
      tier: tierById(API_EXAMPLE_TIER),
      resource: canonicalResource(c.req.method, new URL(c.req.url)),
      config: {
        treasuryAddress: treasury,
        facilitatorUrl: ctx.config.facilitatorUrl,
        paymentAssetOverrides: ctx.config.paymentAssetOverrides,
      },
      error: 'payment_required',
      retryable: false,
      nextAction:
        'Nothing is sold at /api: this is an example challenge (the wallet-lookup tier). Call a metered route, e.g. ' +
        'GET /reputation/wallet/{wallet}, without X-PAYMENT and sign the accepts[] of ITS own 402; see GET /pricing for every tier.',
    });
    return c.json(body, 402, headers);
  });
}
