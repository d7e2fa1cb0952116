/** Every HTTP route, registered in one place. */
import type { App, AppContext } from '../context.js';
import { registerHealth } from './health.js';
import { registerAggregateRoutes } from './aggregates.js';
import { registerLookupRoutes } from './lookup.js';
import { registerMetaRoutes } from './meta.js';
import { registerDocsRoutes } from './docs.js';

export function registerRoutes(app: App, ctx: AppContext): void {
  registerHealth(app, ctx);
  // /chains, /chains/{network}, /feed, /leaderboard, /stats/*, /categories
  registerAggregateRoutes(app, ctx);
  // /search/{q}, /wallets/{wallet}/chains, /wallets/{wallet}/exists
  registerLookupRoutes(app, ctx);
  // /pricing, /manifesto, /workflows.json, /.well-known/*, /names/*, /auth*, /me*
  registerMetaRoutes(app, ctx);
  // /openapi.json, /docs, /redoc (last: the document describes every route above)
  registerDocsRoutes(app, ctx);
}
