/**
 * The HTTP door: one Hono app whose routes are declared with zod (so /openapi.json is generated
 * from the same schemas that validate requests). Every route is also reachable under /v1 with the
 * same contract: the path is read with a leading /v1 stripped. The MCP and A2A doors call this
 * same app in process (`app.request(...)`), so no query is written twice.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context, MiddlewareHandler } from 'hono';
import { HTTPException } from 'hono/http-exception';
import { matchedRoutes } from 'hono/route';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  databaseUnavailableBody,
  isDatabaseUnavailable,
} from '../../db/database.js';
import { accessLogger, logger } from '../../log.js';
import { paymentOutcomeOf, recordHttpRequest, recordRateLimited } from '../../metrics.js';
import { API_VERSION, notFound, validationError } from './errors.js';
import type { ValidationItem } from '../../request-params.js';
import { InProcessRateLimitStore, policyHeader, type Budget } from './rate-limit.js';
import type { App, AppContext, AppEnv } from './context.js';
import { registerRoutes } from './routes/index.js';
import { explorerRateLimited } from '../explorer/routes.js';

/**
 * The route TEMPLATE that answered (`/reputation/agent/:network/:agent_id`), never the raw path:
 * the last matched handler that is not a middleware; `unmatched` for a 404 of no route.
 */
function routeTemplate(c: Context<AppEnv>): string {
  const routes = matchedRoutes(c);
  for (let i = routes.length - 1; i >= 0; i--) {
    const r = routes[i]!;
    if (r.method !== 'ALL' && r.path !== '*' && r.path !== '/*') return r.path;
  }
  return 'unmatched';
}

/**
 * The path of a request URL, as `new URL(url).pathname` gives it, without parsing the URL on every
 * request: Request URLs are already serialised absolute URLs (node-server builds them with the WHATWG
 * parser unless the target is plain ASCII without dot segments or `%`), so the path is the text
 * from the first `/` after `scheme://host` up to `?` or `#`.
 */
export function pathOfUrl(url: string): string {
  const scheme = url.indexOf('://');
  const start = scheme < 0 ? -1 : url.indexOf('/', scheme + 3);
  if (start < 0) return new URL(url).pathname;
  let end = url.length;
  for (let i = start; i < end; i++) {
    const ch = url.charCodeAt(i);
    if (ch === 63 /* ? */ || ch === 35 /* # */) end = i;
  }
  return url.slice(start, end);
}

function stripV1(path: string): string {
  if (path === '/v1') return '/';
  return path.startsWith('/v1/') ? path.slice(3) : path;
}

/**
 * The rate-limit key of a request. From a socket: its address, or with TRUST_PROXY the
 * X-Forwarded-For entry `trustProxyHops` places from the right (each trusted proxy appends the peer
 * it saw, so entries further left are whatever the client wrote and are never trusted; a header
 * with fewer entries than hops did not come through every proxy: the socket address is used).
 * From an in-process door call: the client of the door request that made it (`inProcessClient`).
 */
export function clientKey(
  env: AppEnv['Bindings'] | undefined,
  forwardedFor: string | undefined,
  config: Pick<AppContext['config'], 'trustProxy' | 'trustProxyHops'>,
): string | undefined {
  const socketAddr = env?.incoming?.socket?.remoteAddress;
  if (socketAddr === undefined) return env?.inProcessClient;
  if (!config.trustProxy || forwardedFor === undefined) return socketAddr;
  const hops = config.trustProxyHops ?? 1;
  const entries = forwardedFor
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  return entries.length >= hops ? entries[entries.length - hops]! : socketAddr;
}

/**
 * Whether a request is an in-process read the request that made it already paid the client's token
 * for (an explorer page's read, `inProcessCharged`). Only a binding can say so, and only on a call
 * that did not come from a socket: nothing an HTTP client sends is read here.
 */
export function alreadyCharged(env: AppEnv['Bindings'] | undefined): boolean {
  return env !== undefined && env.incoming === undefined && env.inProcessCharged === true;
}

const TOO_MANY_REQUESTS =
  'Too many requests: over the rate budget. Nothing was queried or charged; replay the identical request after a pause.';

/** Every route of the service on the shell below. */
export function createApp(ctx: AppContext): App {
  const app = createAppShell(ctx);
  registerRoutes(app, ctx);
  return app;
}

/** The open CORS of the two agent doors (the contract: /a2a and /mcp). */
const DOOR_CORS_PREFLIGHT: Readonly<Record<string, string>> = Object.freeze({
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, GET, OPTIONS',
  'access-control-allow-headers': 'content-type',
  'access-control-max-age': '600',
});

const DOOR_PATH = /^(?:\/v1)?\/(a2a|mcp)$/;

/**
 * Answers the preflight (`OPTIONS`) of /a2a and /mcp with 204 and the open CORS headers, and puts
 * `access-control-allow-origin: *` on every other answer of those two paths that runs after it.
 * Registered on `/a2a/*` and `/mcp/*` (Hono's `/x/*` also matches `/x`) and acting only on the exact
 * paths: `/mcp/anything` is left to the router (404).
 */
const doorCors: MiddlewareHandler = async (c, next) => {
  if (!DOOR_PATH.test(c.req.path)) return next();
  if (c.req.method === 'OPTIONS') {
    for (const [k, v] of Object.entries(DOOR_CORS_PREFLIGHT)) c.header(k, v);
    return c.body(null, 204);
  }
  await next();
  c.res.headers.set('access-control-allow-origin', '*');
};

/**
 * The open CORS of the two agent doors on `app` (preflight 204, allow-origin on their answers),
 * before their routes. Not Hono's `cors()`: it joins the methods without spaces and adds `Vary`,
 * changing the answer.
 */
export function useDoorCors(app: App): void {
  app.use('/a2a/*', doorCors);
  app.use('/mcp/*', doorCors);
}

/**
 * The HTTP shell without routes: /v1 alias, 422 validation hook, Api-Version and RateLimit-Policy
 * headers, the rate limit, JSON 404 and error handling. Tests of one mechanism (the paywall)
 * mount their own routes on it.
 */
export function createAppShell(ctx: AppContext): App {
  const app: App = new OpenAPIHono<AppEnv>({
    // An in-process call whose path holds a dot segment is routed by that path as written
    // (`inProcessPath`, src/doors/in-process.ts); a socket request never carries the binding.
    getPath: (req, opts) => {
      const env = opts?.env as AppEnv['Bindings'] | undefined;
      const literal = env?.incoming === undefined ? env?.inProcessPath : undefined;
      return stripV1(literal ?? pathOfUrl(req.url));
    },
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
  // Each budget's RateLimit-Policy value, built once (it is set twice on every answer).
  const policies = new Map<Budget, string>(Object.values(budgets).map((b) => [b, policyHeader(b)]));

  // X-Forwarded-For only matters behind a trusted proxy: otherwise the request headers are not read.
  const forwardedFor = (c: Context<AppEnv>): string | undefined =>
    ctx.config.trustProxy ? c.req.header('x-forwarded-for') : undefined;

  // Access log and HTTP metrics around everything (429s and errors included). One line per
  // socket request: method, route template, status, ms, client, payment outcome; never a header
  // value, a query string or a raw path. In-process calls of the MCP/A2A doors log at debug and
  // are not counted again (their door's own request is).
  app.use('*', async (c, next) => {
    const t0 = performance.now();
    try {
      await next();
    } finally {
      const ms = performance.now() - t0;
      const fromSocket = c.env?.incoming?.socket?.remoteAddress !== undefined;
      // the rate-limit middleware below already computed it (when it ran)
      const client = c.get('client') ?? clientKey(c.env, forwardedFor(c), ctx.config);
      const route = routeTemplate(c);
      const status = c.res.status;
      const payment = paymentOutcomeOf(c.req.raw);
      const line = {
        method: c.req.method,
        route,
        status,
        ms: Math.round(ms * 10) / 10,
        client: fromSocket ? client : `in-process:${client ?? 'unlimited'}`,
        ...(payment ? { payment } : {}),
      };
      if (fromSocket) {
        recordHttpRequest(c.req.method, route, status, ms / 1000);
        accessLogger().info(line, 'request');
      } else {
        accessLogger().debug(line, 'request');
      }
    }
  });

  // Headers on every response, then the rate limit before any work: one token per request, from
  // a socket or in process (each MCP/A2A call, like the door POST), except an explorer page's
  // reads: the page request took the one token of the view (alreadyCharged).
  app.use('*', async (c, next) => {
    const budget = budgetFor(stripV1(c.req.path));
    c.header('Api-Version', API_VERSION);
    const policy = policies.get(budget)!;
    c.header('RateLimit-Policy', policy);
    const client = clientKey(c.env, forwardedFor(c), ctx.config);
    // A call with no client (a test harness calling app.request with no env) is not limited.
    if (client !== undefined) {
      c.set('client', client);
      if (!alreadyCharged(c.env) && !(await limiter.take(budget, client))) {
        recordRateLimited(budget.name);
        c.header('Retry-After', '1');
        // A page of the explorer is refused with its HTML 429 page, anything else with the JSON.
        return explorerRateLimited(c, TOO_MANY_REQUESTS) ?? c.json({ detail: TOO_MANY_REQUESTS }, 429);
      }
    }
    await next();
    // Handlers that build their own Response lose the headers set above; restore them.
    c.res.headers.set('Api-Version', API_VERSION);
    c.res.headers.set('RateLimit-Policy', policy);
  });

  useDoorCors(app);
  app.notFound((c) => notFound(c));
  app.onError((err, c) => {
    if (err instanceof HTTPException) {
      const res = err.getResponse();
      return c.json({ detail: err.message || res.statusText }, res.status as 400);
    }
    if (isDatabaseUnavailable(err)) {
      // The database is away (stopped, restarting, connections dropped): retryable, never a 500.
      logger('http').warn(
        { err: (err as Error).message, route: routeTemplate(c) },
        'database unavailable: answered 503',
      );
      c.header('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
      c.header('Cache-Control', 'no-store');
      return c.json(databaseUnavailableBody(), 503);
    }
    // Logged as one JSON event (chain strings are hostile text); the route template, not the path.
    logger('http').error({ err, method: c.req.method, route: routeTemplate(c) }, 'request failed');
    return c.json({ detail: 'Internal error' }, 500);
  });
  return app;
}
