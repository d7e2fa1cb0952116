/** Every HTTP route, registered in one place. */
import type { App, AppContext } from '../context.js';
import { FreeAnswerCache } from '../free-cache.js';
import { registerHealth } from './health.js';
import { registerChainsRoutes } from './chains.js';
import { registerFeedRoute } from './feed.js';
import { registerLeaderboardRoute } from './leaderboard.js';
import { registerStatsRoutes } from './stats.js';
import { registerAgentRoutes } from './agents.js';
import { registerSearchRoutes } from './search.js';
import { registerWalletRoutes } from './wallets.js';
import { registerPricingRoute } from './pricing.js';
import { registerManifestoRoutes } from './manifesto.js';
import { registerWellKnownRoutes } from './well-known.js';
import { registerRefusalRoutes } from './refusals.js';
import { registerDocsRoutes } from './docs.js';
import { registerBadgeRoutes } from './badge.js';
import { registerA2aRoutes } from './a2a.js';
import { registerMcpRoutes } from './mcp.js';
import { registerPaidRoutes } from './reputation.js';
import { registerExplorerRoutes } from '../../explorer/routes.js';

/** Free routes served from precomputed bytes (free-cache.ts), by how their answer may be reused. */
function registerFreeCache(app: App, ctx: AppContext): void {
  const cache = ctx.freeCache === undefined ? new FreeAnswerCache(ctx.db).useClock(ctx.now) : ctx.freeCache;
  if (cache === null) return;
  // functions of the index generation
  for (const p of ['/leaderboard', '/categories', '/search/*', '/badge/*']) {
    app.use(p, cache.middleware('generation'));
  }
  app.use(
    '/stats/*',
    cache.middleware('generation', (path) => !/^\/stats\/(documents|issuers|registrations)\/?$/.test(path)),
  );
  app.use(
    '/wallets/*',
    cache.middleware('generation', (path) => /^\/wallets\/[^/]+\/chains\/?$/.test(path)),
  );
  // the rater-evidence counts move with the background rater-evidence run between passes
  app.use(
    '/wallets/*',
    cache.middleware('minute', (path) => /^\/wallets\/[^/]+\/rater-evidence\/?$/.test(path)),
  );
  // ... and of the clock (stale hours)
  for (const p of ['/health', '/chains', '/chains/*']) app.use(p, cache.middleware('live'));
  // ... and of the minute: /stats/documents and the document coverage of /stats/issuers move with
  // the document fetcher between index passes, and read every document row
  for (const p of ['/stats/documents', '/stats/issuers']) app.use(p, cache.middleware('minute'));
  // ... likewise the registration files, domain proofs and probes (fetched between index passes)
  for (const p of ['/stats/registrations', '/agents/*']) app.use(p, cache.middleware('minute'));
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
  // /chains, /chains/{network}
  registerChainsRoutes(app, ctx);
  // /feed
  registerFeedRoute(app, ctx);
  // /leaderboard (the free first page; /leaderboard/page is metered, in reputation.ts)
  registerLeaderboardRoute(app, ctx);
  // /stats/facets, /stats/types, /stats/issuers, /stats/documents, /stats/registrations, /categories
  registerStatsRoutes(app, ctx);
  // /search/{q}
  registerSearchRoutes(app, ctx);
  // /agents/{network}/{agent_id}/registration
  registerAgentRoutes(app, ctx);
  // /wallets/{wallet}/chains, /wallets/{wallet}/exists, /wallets/{wallet}/rater-evidence
  registerWalletRoutes(app, ctx);
  // /pricing
  registerPricingRoute(app, ctx);
  // /manifesto, /manifesto.md, /manifesto.es.md, /manifesto.html, /workflows.json
  registerManifestoRoutes(app, ctx);
  // /.well-known/oauth-protected-resource and the absent OAuth/OpenID documents
  registerWellKnownRoutes(app, ctx);
  // /names/resolve, /names/reverse, /auth*, /me* (documented 410 refusals)
  registerRefusalRoutes(app, ctx);
  // metered (METERED_ROUTES): /reputation/*, /leaderboard/page behind the x402 paywall; GET /api (informative 402)
  registerPaidRoutes(app, ctx);
  // /badge/{wallet}.svg
  registerBadgeRoutes(app, ctx);
  // POST /a2a (not in the OpenAPI document), /.well-known/agent-card.json; the door CORS is in app.ts
  registerA2aRoutes(app, ctx);
  // POST /mcp (not in the OpenAPI document)
  registerMcpRoutes(app, ctx);
  // the explorer: HTML at / and /explore/* (plain routes: not in the OpenAPI document)
  registerExplorerRoutes(app, ctx);
  // /openapi.json, /docs, /redoc (last: the document describes every route above)
  registerDocsRoutes(app, ctx);
}
