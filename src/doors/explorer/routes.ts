/**
 * The explorer: server-rendered HTML pages at `/` and under `/explore/`, built from the JSON
 * answers of the free routes, fetched IN PROCESS through the same app (`requestInProcess`), so the
 * numbers, the rate limit and the error meanings are the API's: no query is written here. A page
 * view costs its client ONE token of the default budget: the page request's own (a page refused
 * 429 reads nothing); its reads are made `alreadyCharged` and take none. Plain Hono routes
 * (`app.get`), so none of them enters the OpenAPI document. No script at all; one local
 * stylesheet; a Content-Security-Policy on every answer.
 */
import type { Context } from 'hono';
import { METERED_ROUTES } from '../../metered-routes.js';
import { paidExampleCommand } from '../../payments/paid-example.js';
import { pricingCatalog } from '../../payments/pricing.js';
import type { App, AppContext, AppEnv } from '../http/context.js';
import { notFound } from '../http/errors.js';
import { isObject, pathSegment, requestInProcess } from '../in-process.js';
import type { Html } from './html.js';
import {
  CSS_PATH,
  chainPage,
  errorPage,
  homePage,
  searchPage,
  walletPage,
  type ChainDetail,
  type ChainStat,
  type FeedEvent,
  type HealthSummary,
  type Leaderboard,
  type PaidRoute,
  type SearchResult,
  type WalletChains,
  type WalletRaterEvidence,
} from './pages.js';
import { EXPLORER_CSS } from './style.js';
import { agentPage, type AgentRegistration } from './agent-page.js';

/** The site's paths (`/` and `/explore`, `/explore/…`): HTML, never in the OpenAPI document. */
export const EXPLORER_PATH = /^\/(?:explore(?:\/|$)|$)/;

/** No script may run (none is served); styles and images from this origin only; never framed. */
export const EXPLORER_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
  "frame-ancestors 'none'; base-uri 'none'; form-action 'self'; object-src 'none'";

/** The pages compose free answers cached for 30-60 s; a browser may keep them as long. */
const CACHE_PAGE = 'public, max-age=30';

/** Rows of the latest-ratings table on the home page. */
export const HOME_FEED_ROWS = 10;
/** Agent-detail routes listed on a wallet page (a wallet may hold many identities). */
const MAX_AGENT_ROUTES = 12;

/** The placeholder key of the wallet page's paid example. */
export const BUYER_KEY_PLACEHOLDER = '0xYOUR_BUYER_PRIVATE_KEY';

type C = Context<AppEnv>;

interface Answer {
  status: number;
  body: unknown;
  retryAfter: string | null;
}

function securityHeaders(c: C): void {
  c.header('Content-Security-Policy', EXPLORER_CSP);
  c.header('X-Content-Type-Options', 'nosniff');
  c.header('Referrer-Policy', 'no-referrer');
  c.header('X-Frame-Options', 'DENY');
}

function send(c: C, page: Html, status: 200 | 404 | 422 | 429 | 500 | 503 = 200): Response {
  securityHeaders(c);
  c.header('Cache-Control', status === 200 ? CACHE_PAGE : 'no-store');
  return c.html(page.markup, status);
}

/** `/` asked for JSON and not HTML: it keeps the JSON answers it always gave. */
function jsonOnly(c: C): boolean {
  const accept = (c.req.header('accept') ?? '').toLowerCase();
  return accept.includes('application/json') && !accept.includes('text/html');
}

/**
 * The answer to a request of the explorer refused by the rate limit (app.ts), before any work: the
 * HTML 429 page carrying the limit's `message` (the limit set Retry-After). Null for a path that is
 * not the explorer's, and for `/` asked for JSON only: the API's JSON 429.
 */
export function explorerRateLimited(c: C, message: string): Response | null {
  if (!EXPLORER_PATH.test(c.req.path) || (c.req.path === '/' && jsonOnly(c))) return null;
  return send(c, errorPage(429, 'Too many requests', message), 429);
}

/** The detail of an API error body as the page shows it, with the status and meaning kept. */
function errorAnswer(c: C, a: Answer): Response {
  const detail = isObject(a.body) ? a.body.detail : undefined;
  const d = isObject(detail) ? detail : undefined;
  const message =
    typeof d?.message === 'string'
      ? d.message
      : typeof detail === 'string'
        ? detail
        : Array.isArray(detail)
          ? detail
              .map((i) => (isObject(i) && typeof i.msg === 'string' ? i.msg : ''))
              .filter(Boolean)
              .join('; ')
          : 'The request failed.';
  const code = typeof d?.error === 'string' ? d.error : null;
  const strings = (v: unknown) =>
    Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  if (a.status === 404) {
    return send(
      c,
      errorPage(404, code === 'unknown_network' ? 'Unknown network' : 'Not found', message, {
        knownNetworks: strings(d?.known_networks),
      }),
      404,
    );
  }
  if (a.status === 422) {
    const title =
      code === 'not_an_address'
        ? 'Not an address'
        : code === 'unrecognized_query'
          ? 'Unrecognized query'
          : code === 'unknown_network'
            ? 'Unknown network'
            : 'Invalid request';
    return send(
      c,
      errorPage(422, title, message, {
        acceptedShapes: strings(d?.accepted_shapes),
        knownNetworks: strings(d?.known_networks),
      }),
      422,
    );
  }
  if (a.status === 429) {
    c.header('Retry-After', a.retryAfter ?? '1');
    return send(c, errorPage(429, 'Too many requests', message), 429);
  }
  if (a.status === 503) {
    if (a.retryAfter !== null) c.header('Retry-After', a.retryAfter);
    return send(c, errorPage(503, 'Unavailable', message), 503);
  }
  return send(c, errorPage(500, 'Internal error', 'The page could not be built.'), 500);
}

export function registerExplorerRoutes(app: App, ctx: AppContext): void {
  const baseUrl = () => ctx.config.baseUrl.replace(/\/+$/, '');

  /**
   * One free route through the same app, on behalf of the page's client, who paid the page's one
   * token already: the read takes none (`alreadyCharged`).
   */
  const get = async (c: C, path: string): Promise<Answer> => {
    const res = await requestInProcess(
      app,
      path,
      { headers: { accept: 'application/json' } },
      c.get('client'),
      { alreadyCharged: true },
    );
    const text = await res.text();
    let body: unknown = null;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      body = null;
    }
    return { status: res.status, body, retryAfter: res.headers.get('retry-after') };
  };
  /** Several routes; the first answer that is not 200 is returned as the failure. */
  const getAll = async (c: C, paths: string[]): Promise<{ ok: unknown[] } | { fail: Answer }> => {
    const answers = await Promise.all(paths.map((p) => get(c, p)));
    const fail = answers.find((a) => a.status !== 200);
    return fail ? { fail } : { ok: answers.map((a) => a.body) };
  };

  app.get('/', async (c) => {
    c.header('Vary', 'Accept');
    // An API client asking for JSON (and not HTML) keeps the JSON answer `/` always gave.
    if (jsonOnly(c)) return notFound(c);
    const r = await getAll(c, ['/health', '/chains', '/leaderboard', `/feed?limit=${HOME_FEED_ROWS}`]);
    if ('fail' in r) return errorAnswer(c, r.fail);
    const [health, chains, leaderboard, feed] = r.ok as [
      HealthSummary,
      ChainStat[],
      Leaderboard,
      FeedEvent[],
    ];
    return send(c, homePage({ health, chains, leaderboard, feed }));
  });

  app.get('/explore', (c) => c.redirect('/', 302));
  app.get('/explore/', (c) => c.redirect('/', 302));

  app.get(CSS_PATH, (c) => {
    securityHeaders(c);
    c.header('Content-Type', 'text/css; charset=utf-8');
    c.header('Cache-Control', 'public, max-age=3600');
    return c.body(EXPLORER_CSS, 200);
  });

  app.get('/explore/search', async (c) => {
    const q = (c.req.query('q') ?? '').trim();
    if (q === '') return send(c, searchPage('', null));
    const a = await get(c, `/search/${pathSegment(q)}`);
    if (a.status !== 200) return errorAnswer(c, a);
    return send(c, searchPage(q, a.body as SearchResult));
  });

  app.get('/explore/wallets/:wallet', async (c) => {
    const raw = c.req.param('wallet');
    const [a, evidence] = await Promise.all([
      get(c, `/wallets/${pathSegment(raw)}/chains`),
      get(c, `/wallets/${pathSegment(raw)}/rater-evidence`),
    ]);
    if (a.status !== 200) return errorAnswer(c, a);
    const preview = a.body as WalletChains;
    const wallet = preview.wallet;
    const base = baseUrl();
    const catalog = pricingCatalog(ctx.config);
    const asset = catalog.accepted_networks[0]?.asset ?? null;
    const paidExample =
      catalog.treasury === null || asset === null
        ? null
        : paidExampleCommand({
            apiUrl: base,
            path: `/reputation/wallet/${wallet}`,
            buyerKey: BUYER_KEY_PLACEHOLDER,
            treasury: catalog.treasury,
            asset,
          });
    const badgeSnippet =
      `<a href="${base}/explore/wallets/${wallet}">` +
      `<img src="${base}/badge/${wallet}.svg" alt="ERC-8004 reputation of ${wallet}"></a>`;
    return send(
      c,
      walletPage({
        preview,
        badgeSnippet,
        paid: walletPaidRoutes(preview),
        paidExample,
        pricing: catalog,
        raterEvidence: evidence.status === 200 ? (evidence.body as WalletRaterEvidence) : null,
      }),
    );
  });

  app.get('/explore/chains/:network', async (c) => {
    const a = await get(c, `/chains/${pathSegment(c.req.param('network'))}`);
    if (a.status !== 200) return errorAnswer(c, a);
    return send(c, chainPage(a.body as ChainDetail));
  });

  app.get('/explore/agents/:network/:id', async (c) => {
    const network = pathSegment(c.req.param('network'));
    const id = pathSegment(c.req.param('id'));
    const [reg, search] = await Promise.all([
      get(c, `/agents/${network}/${id}/registration`),
      get(c, `/search/${id}`),
    ]);
    if (reg.status !== 200) return errorAnswer(c, reg);
    return send(
      c,
      agentPage({
        registration: reg.body as AgentRegistration,
        search: search.status === 200 ? (search.body as SearchResult) : null,
      }),
    );
  });

  // Any other path of the site: the HTML 404 (never the API's JSON one).
  app.get('/explore/*', (c) =>
    send(c, errorPage(404, 'Not found', 'No page of the explorer has this address.'), 404),
  );
}

/**
 * The metered routes about this wallet and the agents it holds, each priced by the table the
 * paywall charges from (`matchTier`): every route of METERED_ROUTES whose template names only
 * `{wallet}`, `{network}` and `{agent_id}`, once per tier (a conditional tier with its query).
 */
export function walletPaidRoutes(preview: WalletChains): PaidRoute[] {
  const agents = preview.chains
    .flatMap((ch) => ch.agent_ids.map((id) => ({ network: ch.network, id })))
    .slice(0, MAX_AGENT_ROUTES);
  const out: PaidRoute[] = [];
  for (const r of METERED_ROUTES) {
    const names = [...r.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    if (names.length === 0 || names.some((n) => !['wallet', 'network', 'agent_id'].includes(n))) continue;
    const subjects = names.includes('agent_id') ? agents : [{ network: '', id: '' }];
    for (const s of subjects) {
      const path = r.path
        .replace('{wallet}', preview.wallet)
        .replace('{network}', s.network)
        .replace('{agent_id}', s.id);
      // the table's own tiers: the prices /pricing publishes and the paywall charges
      for (const t of r.tiers) {
        const qs = new URLSearchParams(t.when_query ?? {}).toString();
        out.push({
          path: qs === '' ? path : `${path}?${qs}`,
          tier: t.id,
          price_usd: t.price_usd,
          why: t.why,
        });
      }
    }
  }
  return out;
}
