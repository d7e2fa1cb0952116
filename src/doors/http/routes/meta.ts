/**
 * Static and policy routes: `/pricing`, `/manifesto` (and its editions), `/workflows.json`,
 * `/.well-known/oauth-protected-resource` (and the two OAuth/OIDC documents that do not exist),
 * and the documented refusals `/names/resolve`, `/names/reverse` and `/(auth|me)(/.*)?`.
 * None of these touches the database: they keep answering with the index down.
 */
import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { App, AppContext } from '../context.js';
import { matchTier, PRICING_VERSION, pricingCatalog } from '../../../payments/pricing.js';
import { manifesto, manifestoHtml, manifestoMarkdown, PRINCIPLE_IDS } from '../../../manifesto.js';

const CACHE_STATIC = 'public, max-age=3600';
const CACHE_PRICING = 'public, max-age=300';

// ------------------------------------------------------------------ schemas

const PaymentNetworkSchema = z
  .object({
    network: z.string(),
    chain_id: z.number().int(),
    caip2: z.string().openapi({ description: 'As `accepts[].network` carries it, e.g. `eip155:8453`.' }),
    asset: z.string().openapi({ description: 'The USDC contract on that network. Sign against the 402\'s `accepts[].asset`.' }),
    asset_name: z.string().openapi({ description: 'EIP-712 domain name of the token.' }),
    asset_version: z.string().openapi({ description: 'EIP-712 domain version of the token.' }),
    decimals: z.number().int(),
  })
  .openapi('PaymentNetwork');

const PricingTierSchema = z
  .object({
    id: z.string().openapi({ description: 'Stable tier id; travels in every 402 as `pricing.tier`.' }),
    method: z.enum(['GET', 'POST', 'ANY']).openapi({ description: '`GET` also covers `HEAD`; `ANY` is every method.' }),
    path: z.string().openapi({
      description: 'Anchored regular expression over the request path (the `/v1` alias stripped): the very pattern the paywall matches.',
    }),
    price_usd: z.string().openapi({ description: 'USD as a decimal STRING, never a float. `"0"` on free tiers.' }),
    amount: z.string().openapi({ description: 'The same price in USDC base units (6 decimals): `"10000"` is $0.01.' }),
    free: z.boolean(),
    conditional: z.boolean().openapi({
      description: 'True when the price of that path depends on the query string; the authority for one call is its own 402.',
    }),
    when_query: z.record(z.string(), z.string()).nullable().openapi({
      description: 'Query parameters that select this tier over its unconditional sibling (e.g. `{"snapshot":"true"}`).',
    }),
    why: z.string().openapi({ description: 'The cost reason behind the price, in one sentence; also in every 402.' }),
    free_preview: z
      .object({ endpoint: z.string(), gives: z.string() })
      .nullable()
      .openapi({ description: 'Metered tiers: the free route answering the same question (null on the rater route, on purpose).' }),
  })
  .openapi('PricingTier');

const PricingCatalogSchema = z
  .object({
    pricing_version: z.string().openapi({ description: 'Version of the whole table; also the `X-Pricing-Version` header.' }),
    currency: z.string(),
    networks: z.array(z.string()).openapi({ description: 'Networks accepted for payment, in the order every challenge offers them.' }),
    accepted_networks: z.array(PaymentNetworkSchema),
    treasury: z.string().nullable().openapi({
      description: 'The single pinned `payTo`. If a challenge names another address, do not pay. Null while unset (metered routes then answer 503).',
    }),
    max_timeout_seconds: z.number().int(),
    free_tier: z.string(),
    authority: z.string(),
    tiers: z.array(PricingTierSchema),
  })
  .openapi('PricingCatalog');

const ManifestoSchema = z
  .object({
    manifesto_version: z.string(),
    title: z.string(),
    subtitle: z.string(),
    catchphrase: z.string(),
    editions: z.object({ en: z.string(), es: z.string(), html: z.string() }).openapi({
      description: 'The prose in full: English and Spanish Markdown, and HTML.',
    }),
    note: z.string(),
    origin: z.record(z.string(), z.unknown()).openapi({
      description: 'Where the principles come from: earlier reputation products, their lessons and what this index corrects. No figures.',
    }),
    principles: z.array(
      z
        .object({
          id: z.enum(PRINCIPLE_IDS),
          statement: z.string(),
          detail: z.string(),
          inherited_from: z.string().nullable(),
          enforced_by: z.string().openapi({ description: 'The file or route that makes the principle true.' }),
        })
        .openapi('ManifestoPrinciple'),
    ),
    we_are_not: z.array(z.string()),
    verifications: z.array(
      z
        .object({
          claim: z.string(),
          route: z.string(),
          free: z.boolean(),
          command: z.string().openapi({ description: 'A curl against this deployment that checks the claim.' }),
          read: z.string().openapi({ description: 'What to read in the answer.' }),
        })
        .openapi('ManifestoVerification'),
    ),
    siblings: z.record(z.string(), z.string()),
  })
  .openapi('Manifesto');

const WorkflowStepSchema = z
  .object({
    step: z.number().int(),
    method: z.string(),
    route: z.string().openapi({ description: 'Route template; replace `{wallet}`, `{q}`, `{network}`, `{agent_id}`.' }),
    free: z.boolean(),
    price_usd: z.string().openapi({ description: 'From the pricing table (`"0"` when free).' }),
    tier: z.string().nullable(),
    gives: z.string(),
    next: z.string().openapi({ description: 'How to read the answer and what to do next.' }),
  })
  .openapi('WorkflowStep');

const WorkflowsSchema = z
  .object({
    workflows_version: z.string(),
    description: z.string(),
    base_url: z.string(),
    pricing_version: z.string(),
    workflows: z.array(
      z
        .object({
          id: z.string(),
          goal: z.string(),
          when: z.string(),
          steps: z.array(WorkflowStepSchema),
        })
        .openapi('Workflow'),
    ),
  })
  .openapi('Workflows');

const ProtectedResourceSchema = z
  .object({
    resource: z.string(),
    resource_name: z.string(),
    resource_documentation: z.string(),
    authorization_servers: z.array(z.string()).openapi({ description: 'Always empty: there is no authorization server.' }),
    scopes_supported: z.array(z.string()).openapi({ description: 'Always empty.' }),
    bearer_methods_supported: z.array(z.string()).openapi({ description: 'Always empty: no bearer token is ever useful.' }),
    x402: z.object({ protocol: z.literal('x402+HTTP'), pricing: z.string(), documentation: z.string() }),
  })
  .openapi('ProtectedResourceMetadata');

const RefusalSchema = z
  .object({
    detail: z.object({
      error: z.enum(['not_offered', 'no_accounts']),
      message: z.string(),
      principle: z.enum(['not-a-people-search-engine', 'payment-is-the-authentication']),
      manifesto: z.string().openapi({ description: 'Where the principle is published.' }),
    }),
  })
  .openapi('Refusal');

const NotFoundSchema = z.object({ detail: z.string() }).openapi('NotFound');

// ------------------------------------------------------------------ workflows

interface StepSpec {
  method: 'GET' | 'HEAD' | 'POST';
  route: string;
  gives: string;
  next: string;
}

function workflowSteps(specs: StepSpec[]) {
  return specs.map((s, i) => {
    const [path, query = ''] = s.route.split('?');
    const sample = (path ?? '').replace(/\{[^}]+\}/g, 'x');
    const t = matchTier(s.method, sample, new URLSearchParams(query));
    return {
      step: i + 1,
      method: s.method,
      route: s.route,
      free: t ? t.free : true,
      price_usd: t ? t.price_usd : '0',
      tier: t ? t.id : null,
      gives: s.gives,
      next: s.next,
    };
  });
}

function workflows(baseUrl: string) {
  return {
    workflows_version: 'workflows@1',
    description:
      'Machine-readable agent workflows over this API. Routes are templates relative to base_url; prices come from the same table the paywall charges from (GET /pricing), and the authority for one paid call is its own 402. Free steps come first on purpose: they tell you whether the paid step is worth it.',
    base_url: baseUrl,
    pricing_version: PRICING_VERSION,
    workflows: [
      {
        id: 'vet-wallet',
        goal: 'Decide whether a counterparty wallet has reputation worth reading before you transact with it.',
        when: 'You hold a wallet address (EVM or Solana).',
        steps: workflowSteps([
          {
            method: 'GET',
            route: '/wallets/{wallet}/exists',
            gives: 'has_identity, has_reputation and counts; next.paid only when there is something to decompose.',
            next: 'If has_reputation is false, stop: there is nothing to buy and null is not zero.',
          },
          {
            method: 'GET',
            route: '/wallets/{wallet}/chains',
            gives: 'Per chain: agent ids, final_score (null when unrated), total_reviews and distinct_raters; global_score.',
            next: 'Read distinct_raters next to every score. Treat caveats_not_computed as unverified.',
          },
          {
            method: 'GET',
            route: '/reputation/wallet/{wallet}',
            gives: 'The composition: per-chain scores, facets, self_rated with its gap, concentration, confidence and caveats[].',
            next: 'Branch on caveats[].code, never on text. The decision stays yours.',
          },
        ]),
      },
      {
        id: 'resolve-identifier',
        goal: 'Find what an address, agent id or Solana asset names in the index, chain by chain.',
        when: 'You hold a string and do not know whether it is a wallet or an agent id.',
        steps: workflowSteps([
          {
            method: 'GET',
            route: '/search/{q}',
            gives: 'interpretations (what the shape allows) and matches (one row per chain and reading) with detail_route.',
            next: 'Pick the row whose network you care about; the same numeric id is a different agent on each chain.',
          },
          {
            method: 'GET',
            route: '/reputation/agent/{network}/{agent_id}',
            gives: 'The agent and every rating it received, each with tx_hash, block and log index; revoked ones marked.',
            next: 'Verify any rating against the chain with its transaction.',
          },
        ]),
      },
      {
        id: 'sweep-wallets',
        goal: 'Check many wallets cheaply before spending anything on any of them.',
        when: 'You hold a list of addresses.',
        steps: workflowSteps([
          {
            method: 'HEAD',
            route: '/wallets/{wallet}/exists',
            gives: 'The status (200 or 422) and Content-Length, no body; GET gives the booleans.',
            next: 'Mind the route\'s own budget (RateLimit-Policy 10;w=1;burst=20); on 429, pause and replay.',
          },
        ]),
      },
      {
        id: 'audit-rater',
        goal: 'See what a wallet emitted as a rater: how many subjects, how dispersed, how often revoked.',
        when: 'A rating looks suspicious and you want to weigh its author.',
        steps: workflowSteps([
          {
            method: 'GET',
            route: '/reputation/rater/{wallet}',
            gives: 'Totals emitted, revocations, distinct subjects, value_stddev, per-chain split, top_subject_share, self_ratings, roles.',
            next: 'It emits no score and never will: weigh the evidence yourself.',
          },
        ]),
      },
      {
        id: 'survey-index',
        goal: 'Understand the index before asking about one subject.',
        when: 'First contact, or monitoring.',
        steps: workflowSteps([
          {
            method: 'GET',
            route: '/health',
            gives: 'Agents and ratings indexed, scan state per chain, the policies in force.',
            next: 'Use chains[].network as the vocabulary of every {network}.',
          },
          {
            method: 'GET',
            route: '/leaderboard',
            gives: 'The first 100 rows ranked by shrunk_score, with final_score and distinct_raters to recompute the order.',
            next: 'Page further with GET /leaderboard/page (metered).',
          },
          {
            method: 'GET',
            route: '/stats/facets',
            gives: 'Every facet (tag1) with volume, mean and distinct_agents.',
            next: 'Facets are separate judgements: never average them.',
          },
        ]),
      },
      {
        id: 'pay-per-call',
        goal: 'Pay for one metered call with x402, without an account.',
        when: 'A route answered 402.',
        steps: workflowSteps([
          {
            method: 'GET',
            route: '/pricing',
            gives: 'Every tier with its price and reason, the accepted networks and the pinned treasury address.',
            next: 'Keep the treasury address: it is the only payTo you should ever sign for.',
          },
          {
            method: 'GET',
            route: '/reputation/wallet/{wallet}',
            gives: 'Without X-PAYMENT: the 402 challenge with accepts[] (one entry per network, amount in USDC base units).',
            next: 'Check payTo against the treasury; sign an EIP-3009 TransferWithAuthorization for one accepts[] entry; replay the identical request with X-PAYMENT. On 503, retry with the same header after Retry-After.',
          },
        ]),
      },
    ],
  };
}

// ------------------------------------------------------------------ routes

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
      headers: { 'X-Pricing-Version': { description: 'The `pricing_version` of the table.', schema: { type: 'string' } } },
      content: { 'application/json': { schema: PricingCatalogSchema } },
    },
  },
});

const manifestoRoute = createRoute({
  method: 'get',
  path: '/manifesto',
  operationId: 'getManifesto',
  tags: ['free'],
  summary: 'The manifesto, as data (free; static)',
  description:
    'The principles this service is built on, each with what enforces it, and `verifications`: every checkable claim with ' +
    'the exact command that checks it. No figure of the index is copied here. Static: never touches the database.',
  responses: { 200: { description: 'The manifesto record', content: { 'application/json': { schema: ManifestoSchema } } } },
});

function editionRoute(path: string, operationId: string, summary: string, type: string) {
  return createRoute({
    method: 'get',
    path,
    operationId,
    tags: ['free'],
    summary,
    responses: { 200: { description: summary, content: { [type]: { schema: z.string() } } } },
  });
}

const workflowsRoute = createRoute({
  method: 'get',
  path: '/workflows.json',
  operationId: 'getWorkflows',
  tags: ['free'],
  summary: 'Agent workflows: which routes to call, in which order, at what price (free; static)',
  description:
    'A machine-readable list of workflows (vet a wallet, resolve an identifier, sweep wallets, audit a rater, survey the ' +
    'index, pay per call). Each step names the method, the route template, whether it is free, its price and tier from ' +
    'the pricing table, what it gives and how to read it.',
  responses: { 200: { description: 'The workflows', content: { 'application/json': { schema: WorkflowsSchema } } } },
});

const protectedResourceRoute = createRoute({
  method: 'get',
  path: '/.well-known/oauth-protected-resource',
  operationId: 'getProtectedResourceMetadata',
  tags: ['free'],
  summary: 'OAuth protected-resource metadata (RFC 9728) saying there is no OAuth: payment is the authentication',
  description:
    'Published so that OAuth-aware clients learn, in their own vocabulary, that there is no authorization server, no scope ' +
    'and no bearer token: metered routes are paid per call with x402. `/.well-known/openid-configuration` and ' +
    '`/.well-known/oauth-authorization-server` answer 404.',
  responses: {
    200: { description: 'Protected-resource metadata', content: { 'application/json': { schema: ProtectedResourceSchema } } },
  },
});

function absentDocRoute(path: string, operationId: string) {
  return createRoute({
    method: 'get',
    path,
    operationId,
    tags: ['free'],
    summary: 'Does not exist on purpose: there is no OAuth or OIDC server (404)',
    responses: {
      404: { description: 'Not found: payment is the authentication.', content: { 'application/json': { schema: NotFoundSchema } } },
    },
  });
}

const REFUSAL_STATUS = 410;

function refusalDoc(path: string, operationId: string, method: 'get' | 'post', summary: string, description: string) {
  return createRoute({
    method,
    path,
    operationId,
    tags: ['refused'],
    summary,
    description,
    responses: {
      [REFUSAL_STATUS]: {
        description: 'Gone, on purpose and for good: a documented refusal. Same answer for every method and any query string.',
        content: { 'application/json': { schema: RefusalSchema } },
      },
    },
  });
}

const NAMES_DESCRIPTION =
  'There is no name search and no person lookup (principle `not-a-people-search-engine`). This path answers `410 Gone` ' +
  'with `detail.error: not_offered` for every method and any query string, never data about anybody, and reads nothing. ' +
  'It keeps its own low rate budget (`RateLimit-Policy: 1;w=1;burst=2`, shared by both name routes). To look up an address ' +
  'or an agent id, use `GET /search/{q}` (exact match).';
const ACCOUNTS_DESCRIPTION =
  'There is no account, registration, session, API key or token (principle `payment-is-the-authentication`). `/auth`, ' +
  '`/me` and every path below them answer `410 Gone` with `detail.error: no_accounts`, for every method. Free routes need ' +
  'no headers; metered routes are paid per call with x402 (see `GET /pricing`).';

// ------------------------------------------------------------------ handlers

export function registerMetaRoutes(app: App, ctx: AppContext): void {
  // Read at request time: the demo learns its BASE_URL only once the listener has a port.
  const baseOf = () => ctx.config.baseUrl.replace(/\/+$/, '');

  app.openapi(pricingRoute, (c) => {
    // Built from configuration only: no database access, ever.
    c.header('X-Pricing-Version', PRICING_VERSION);
    c.header('Cache-Control', CACHE_PRICING);
    return c.json(pricingCatalog(ctx.config), 200);
  });

  app.openapi(manifestoRoute, (c) => {
    c.header('Cache-Control', CACHE_STATIC);
    return c.json(manifesto(baseOf()), 200);
  });
  app.openapi(editionRoute('/manifesto.md', 'getManifestoEn', 'The manifesto, English edition (Markdown)', 'text/markdown'), (c) => {
    c.header('Cache-Control', CACHE_STATIC);
    c.header('Content-Type', 'text/markdown; charset=utf-8');
    return c.body(manifestoMarkdown(baseOf(), 'en'), 200);
  });
  app.openapi(editionRoute('/manifesto.es.md', 'getManifestoEs', 'El manifiesto, edición en español (Markdown)', 'text/markdown'), (c) => {
    c.header('Cache-Control', CACHE_STATIC);
    c.header('Content-Type', 'text/markdown; charset=utf-8');
    return c.body(manifestoMarkdown(baseOf(), 'es'), 200);
  });
  app.openapi(editionRoute('/manifesto.html', 'getManifestoHtml', 'The manifesto, HTML edition', 'text/html'), (c) => {
    c.header('Cache-Control', CACHE_STATIC);
    return c.html(manifestoHtml(baseOf()), 200);
  });

  app.openapi(workflowsRoute, (c) => {
    c.header('Cache-Control', CACHE_STATIC);
    return c.json(workflows(baseOf()), 200);
  });

  app.openapi(protectedResourceRoute, (c) => {
    c.header('Cache-Control', CACHE_STATIC);
    const base = baseOf();
    return c.json(
      {
        resource: base,
        resource_name: 'ERC-8004 reputation index (read-only)',
        resource_documentation: `${base}/docs`,
        authorization_servers: [],
        scopes_supported: [],
        bearer_methods_supported: [],
        x402: { protocol: 'x402+HTTP' as const, pricing: `${base}/pricing`, documentation: `${base}/docs` },
      },
      200,
    );
  });
  const noOAuth = (c: Context) =>
    c.json(
      { detail: 'Not Found: there is no OAuth or OpenID Connect server here; payment is the authentication (see /.well-known/oauth-protected-resource).' },
      404,
    );
  app.openapi(absentDocRoute('/.well-known/openid-configuration', 'getOpenIdConfiguration'), noOAuth);
  app.openapi(absentDocRoute('/.well-known/oauth-authorization-server', 'getOAuthAuthorizationServer'), noOAuth);

  // ---- documented refusals: every method, any query string, nothing read.
  const refuse = (kind: 'names' | 'accounts') => (c: Context) => {
    c.header('Cache-Control', 'public, max-age=86400');
    const base = baseOf();
    const body =
      kind === 'names'
        ? {
            detail: {
              error: 'not_offered' as const,
              message:
                'There is no name search and no person lookup here. Look up an address or an agent id with GET /search/{q} (exact match).',
              principle: 'not-a-people-search-engine' as const,
              manifesto: `${base}/manifesto`,
            },
          }
        : {
            detail: {
              error: 'no_accounts' as const,
              message:
                'There are no accounts, sessions, API keys or tokens. Free routes need no headers; metered routes are paid per call with x402 (GET /pricing).',
              principle: 'payment-is-the-authentication' as const,
              manifesto: `${base}/manifesto`,
            },
          };
    return c.json(body, REFUSAL_STATUS);
  };
  for (const [path, id] of [
    ['/names/resolve', 'resolveNameRefused'],
    ['/names/reverse', 'reverseNameRefused'],
  ] as const) {
    app.openAPIRegistry.registerPath(refusalDoc(path, id, 'get', 'Refused: no name search, no person lookup (410)', NAMES_DESCRIPTION));
    app.all(path, refuse('names'));
  }
  for (const [path, id] of [
    ['/auth', 'authRefused'],
    ['/me', 'meRefused'],
  ] as const) {
    app.openAPIRegistry.registerPath(refusalDoc(path, id, 'get', 'Refused: there are no accounts (410)', ACCOUNTS_DESCRIPTION));
    app.openAPIRegistry.registerPath(refusalDoc(path, `${id}Post`, 'post', 'Refused: there are no accounts (410)', ACCOUNTS_DESCRIPTION));
    app.all(path, refuse('accounts'));
    app.all(`${path}/*`, refuse('accounts'));
  }
}
