/**
 * The HTTP door: one Hono app whose routes are declared with zod (so /openapi.json is generated
 * from the same schemas that validate requests). Every route is also reachable under /v1 with the
 * same contract: the path is read with a leading /v1 stripped. The MCP and A2A doors call this
 * same app in process (`app.request(...)`), so no query is written twice.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import { HTTPException } from 'hono/http-exception';
import { API_VERSION, notFound, validationError, type ValidationItem } from './errors.js';
import { InProcessRateLimitStore, policyHeader, type Budget } from './rate-limit.js';
import type { App, AppContext, AppEnv } from './context.js';
import { registerRoutes } from './routes/index.js';

function stripV1(path: string): string {
  if (path === '/v1') return '/';
  return path.startsWith('/v1/') ? path.slice(3) : path;
}

/** Every route of the service on the shell below. */
export function createApp(ctx: AppContext): App {
  const app = createAppShell(ctx);
  registerRoutes(app, ctx);
  return app;
}

/**
 * The HTTP shell without routes: /v1 alias, 422 validation hook, Api-Version and RateLimit-Policy
 * headers, the rate limit, JSON 404 and error handling. Tests of one mechanism (the paywall)
 * mount their own routes on it.
 */
export function createAppShell(ctx: AppContext): App {
  const app: App = new OpenAPIHono<AppEnv>({
    getPath: (req) => stripV1(new URL(req.url).pathname),
    // Invalid parameters are the contract's 422, never Hono's default 400.
    defaultHook: (result, c) => {
      if (!result.success) {
        const items: ValidationItem[] = result.error.issues.map((i) => ({
          loc: [result.target, ...i.path.map((p) => (typeof p === 'symbol' ? String(p) : p))],
          msg: i.message,
          type: i.code,
        }));
        return validationError(c, items);
      }
      return undefined;
    },
  });

  const budgets = {
    default: { name: 'default', ...ctx.config.rateLimit } satisfies Budget,
    exists: { name: 'exists', rate: 10, burst: 20 } satisfies Budget,
    names: { name: 'names', rate: 1, burst: 2 } satisfies Budget,
  };
  // The context's store (Redis when REDIS_URL is set); otherwise this app's own in-process buckets.
  const limiter = ctx.rateLimit ?? new InProcessRateLimitStore();
  const budgetFor = (path: string): Budget =>
    /^\/wallets\/[^/]+\/exists\/?$/.test(path)
      ? budgets.exists
      : /^\/names\/(resolve|reverse)\/?$/.test(path)
        ? budgets.names
        : budgets.default;

  // Headers on every response, then the rate limit before any work.
  app.use('*', async (c, next) => {
    const budget = budgetFor(stripV1(c.req.path));
    c.header('Api-Version', API_VERSION);
    c.header('RateLimit-Policy', policyHeader(budget));
    const socketAddr = c.env?.incoming?.socket?.remoteAddress;
    // In-process calls (MCP/A2A doors) were already counted at their own door.
    if (socketAddr !== undefined) {
      const forwarded = ctx.config.trustProxy ? c.req.header('x-forwarded-for')?.split(',')[0]?.trim() : undefined;
      const client = forwarded || socketAddr;
      if (!(await limiter.take(budget, client))) {
        c.header('Retry-After', '1');
        return c.json(
          {
            detail: 'Too many requests: over the rate budget. Nothing was queried or charged; replay the identical request after a pause.',
          },
          429,
        );
      }
    }
    await next();
    // Handlers that build their own Response lose the headers set above; restore them.
    c.res.headers.set('Api-Version', API_VERSION);
    c.res.headers.set('RateLimit-Policy', policyHeader(budget));
  });

  app.notFound((c) => notFound(c));
  app.onError((err, c) => {
    if (err instanceof HTTPException) {
      const res = err.getResponse();
      return c.json({ detail: err.message || res.statusText }, res.status as 400);
    }
    // Log without echoing request data (chain strings are hostile text).
    console.error(`[http] ${c.req.method} ${JSON.stringify(c.req.path)} failed: ${err.stack ?? err.message}`);
    return c.json({ detail: 'Internal error' }, 500);
  });
  return app;
}
