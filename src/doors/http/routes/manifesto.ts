/**
 * `GET /manifesto` (JSON) and its editions `/manifesto.md`, `/manifesto.es.md`, `/manifesto.html`
 * (src/manifesto.ts); `GET /workflows.json`, the agent workflows.
 */
import { createRoute, z } from '@hono/zod-openapi';
import { manifesto, manifestoHtml, manifestoMarkdown } from '../../../manifesto.js';
import { PRICING_VERSION, matchTier } from '../../../payments/pricing.js';
import type { App, AppContext } from '../context.js';
import { CACHE_STATIC } from '../free-cache.js';
import { ManifestoSchema, WorkflowsSchema } from '../schemas/meta.js';

const manifestoRoute = createRoute({
  method: 'get',
  path: '/manifesto',
  operationId: 'getManifesto',
  tags: ['free'],
  summary: 'The manifesto, as data (free; static)',
  description:
    'The principles this service is built on, each with what enforces it, and `verifications`: every checkable claim with ' +
    'the exact command that checks it. No figure of the index is copied here. Static: never touches the database.',
  responses: {
    200: {
      description: 'The manifesto record',
      content: { 'application/json': { schema: ManifestoSchema } },
    },
  },
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

export function workflows(baseUrl: string) {
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
            gives:
              'has_identity, has_reputation and counts; next.paid only when there is something to decompose.',
            next: 'If has_reputation is false, stop: there is nothing to buy and null is not zero.',
          },
          {
            method: 'GET',
            route: '/wallets/{wallet}/chains',
            gives:
              'Per chain: agent ids, final_score (null when unrated), total_reviews and distinct_raters; global_score.',
            next: 'Read distinct_raters next to every score. Treat caveats_not_computed as unverified.',
          },
          {
            method: 'GET',
            route: '/reputation/wallet/{wallet}',
            gives:
              'The composition: per-chain scores, facets, self_rated with its gap, concentration, confidence and caveats[].',
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
            gives:
              'interpretations (what the shape allows) and matches (one row per chain and reading) with detail_route.',
            next: 'Pick the row whose network you care about; the same numeric id is a different agent on each chain.',
          },
          {
            method: 'GET',
            route: '/reputation/agent/{network}/{agent_id}',
            gives:
              'The agent and every rating it received, each with tx_hash, block and log index; revoked ones marked.',
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
            next: "Mind the route's own budget (RateLimit-Policy 10;w=1;burst=20); on 429, pause and replay.",
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
            gives:
              'Totals emitted, revocations, distinct subjects, value_stddev, per-chain split, top_subject_share, self_ratings, roles.',
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
            gives:
              'The first 100 rows ranked by shrunk_score, with final_score and distinct_raters to recompute the order.',
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
            gives:
              'Every tier with its price and reason, the accepted networks and the pinned treasury address.',
            next: 'Keep the treasury address: it is the only payTo you should ever sign for.',
          },
          {
            method: 'GET',
            route: '/reputation/wallet/{wallet}',
            gives:
              'Without X-PAYMENT: the 402 challenge with accepts[] (one entry per network, amount in USDC base units).',
            next: 'Check payTo against the treasury; sign an EIP-3009 TransferWithAuthorization for one accepts[] entry; replay the identical request with X-PAYMENT. On 503, retry with the same header after Retry-After.',
          },
        ]),
      },
    ],
  };
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
  responses: {
    200: { description: 'The workflows', content: { 'application/json': { schema: WorkflowsSchema } } },
  },
});

export function registerManifestoRoutes(app: App, ctx: AppContext): void {
  // Read at request time: the demo learns its BASE_URL only once the listener has a port.
  const baseOf = () => ctx.config.baseUrl.replace(/\/+$/, '');

  app.openapi(manifestoRoute, function getManifesto(c) {
    c.header('Cache-Control', CACHE_STATIC);
    return c.json(manifesto(baseOf()), 200);
  });
  app.openapi(
    editionRoute(
      '/manifesto.md',
      'getManifestoEn',
      'The manifesto, English edition (Markdown)',
      'text/markdown',
    ),
    function getManifestoEn(c) {
      c.header('Cache-Control', CACHE_STATIC);
      c.header('Content-Type', 'text/markdown; charset=utf-8');
      return c.body(manifestoMarkdown(baseOf(), 'en'), 200);
    },
  );
  app.openapi(
    editionRoute(
      '/manifesto.es.md',
      'getManifestoEs',
      'El manifiesto, edición en español (Markdown)',
      'text/markdown',
    ),
    function getManifestoEs(c) {
      c.header('Cache-Control', CACHE_STATIC);
      c.header('Content-Type', 'text/markdown; charset=utf-8');
      return c.body(manifestoMarkdown(baseOf(), 'es'), 200);
    },
  );
  app.openapi(
    editionRoute('/manifesto.html', 'getManifestoHtml', 'The manifesto, HTML edition', 'text/html'),
    function getManifestoHtml(c) {
      c.header('Cache-Control', CACHE_STATIC);
      return c.html(manifestoHtml(baseOf()), 200);
    },
  );

  app.openapi(workflowsRoute, function getWorkflows(c) {
    c.header('Cache-Control', CACHE_STATIC);
    return c.json(workflows(baseOf()), 200);
  });
}
