/** Every HTTP route, registered in one place. */
import type { App, AppContext } from '../context.js';
import { FreeAnswerCache } from '../free-cache.js';
import { registerHealth } from './health.js';
import { registerAggregateRoutes } from './aggregates.js';
import { registerLookupRoutes } from './lookup.js';
import { registerMetaRoutes } from './meta.js';
import { registerDocsRoutes } from './docs.js';
import { registerBadgeRoutes } from './badge.js';
import { registerA2aRoutes } from './a2a.js';
import { registerMcpRoutes } from './mcp.js';
import { registerPaidRoutes } from './reputation.js';

/** Free routes served from precomputed bytes (free-cache.ts), by how their answer may be reused. */
function registerFreeCache(app: App, ctx: AppContext): void {
  const cache = ctx.freeCache === undefined ? new FreeAnswerCache(ctx.db).useClock(ctx.now) : ctx.freeCache;
  if (cache === null) return;
  // functions of the index generation
  for (const p of ['/leaderboard', '/stats/*', '/categories', '/search/*', '/badge/*']) {
    app.use(p, cache.middleware('generation'));
  }
  app.use(
    '/wallets/*',
    cache.middleware('generation', (path) => /^\/wallets\/[^/]+\/chains\/?$/.test(path)),
  );
  // ... and of the clock (stale hours)
  for (const p of ['/health', '/chains', '/chains/*']) app.use(p, cache.middleware('live'));
  // static: built once per process
  for (const p of [
    '/pricing',
    '/manifesto',
    '/manifesto.md',
    '/manifesto.es.md',
    '/manifesto.html',
    '/workflows.json',
    '/.well-known/oauth-protected-resource',
    '/.well-known/agent-card.json',
    '/openapi.json',
  ]) {
    app.use(p, cache.middleware('static'));
  }
}

export function registerRoutes(app: App, ctx: AppContext): void {
  registerFreeCache(app, ctx);
  registerHealth(app, ctx);
  // /chains, /chains/{network}, /feed, /leaderboard, /stats/*, /categories
  registerAggregateRoutes(app, ctx);
  // /search/{q}, /wallets/{wallet}/chains, /wallets/{wallet}/exists
  registerLookupRoutes(app, ctx);
  // /pricing, /manifesto, /workflows.json, /.well-known/*, /names/*, /auth*, /me*
  registerMetaRoutes(app, ctx);
  // metered: /reputation/*, /leaderboard/page behind the x402 paywall; GET /api (informative 402)
  registerPaidRoutes(app, ctx);
  // /badge/{wallet}.svg
  registerBadgeRoutes(app, ctx);
  // POST /a2a, /.well-known/agent-card.json, CORS preflight of /a2a and /mcp (not in the OpenAPI document)
  registerA2aRoutes(app, ctx);
  // POST /mcp (after the A2A registration: its CORS middleware covers /mcp too; not in the OpenAPI document)
  registerMcpRoutes(app, ctx);
  // /openapi.json, /docs, /redoc (last: the document describes every route above)
  registerDocsRoutes(app, ctx);
}
