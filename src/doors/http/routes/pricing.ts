/** `GET /pricing`: the pricing table (src/payments/pricing.ts), from configuration only: never the database. */
import { createRoute } from '@hono/zod-openapi';
import { PRICING_VERSION, pricingCatalog } from '../../../payments/pricing.js';
import type { App, AppContext } from '../context.js';
import { etagMatches, etagOf } from '../free-cache.js';
import { PricingCatalogSchema } from '../schemas/meta.js';

const CACHE_PRICING = 'public, max-age=300';

const pricingRoute = createRoute({
  method: 'get',
  path: '/pricing',
  operationId: 'getPricing',
  tags: ['free'],
  summary: 'Every price and why it costs that (free; never touches the database)',
  description:
    'The pricing table the paywall charges from, published: one tier per route with its price as a string, its amount in ' +
    'USDC base units and the reason, the accepted networks in challenge order with their USDC contracts, and the treasury ' +
    'address. Static: it never touches the database and keeps answering with the index down. Header `X-Pricing-Version`. ' +
    "The authoritative price for one call is the `accepts[]` of that call's own 402.",
  responses: {
    200: {
      description: 'The pricing catalog',
      headers: {
        'X-Pricing-Version': {
          description: 'The `pricing_version` of the table.',
          schema: { type: 'string' },
        },
        ETag: {
          description: 'Of the body: send it back as `If-None-Match` for a 304 while the table is unchanged.',
          schema: { type: 'string' },
        },
      },
      content: { 'application/json': { schema: PricingCatalogSchema } },
    },
    304: { description: 'Not modified: the `If-None-Match` ETag is the current one' },
  },
});

export function registerPricingRoute(app: App, ctx: AppContext): void {
  // Built from configuration only (no database access, ever), so built ONCE per app: the body and
  // its ETag are bytes ready to send; a matching If-None-Match is answered 304.
  const body = JSON.stringify(pricingCatalog(ctx.config));
  const etag = etagOf(body);
  app.openapi(pricingRoute, function getPricing(c) {
    c.header('X-Pricing-Version', PRICING_VERSION);
    c.header('Cache-Control', CACHE_PRICING);
    c.header('ETag', etag);
    if (etagMatches(c.req.header('if-none-match'), etag)) return c.body(null, 304);
    c.header('Content-Type', 'application/json');
    return c.body(body, 200);
  });
}
