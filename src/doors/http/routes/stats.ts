/**
 * `GET /stats/facets`, `/stats/types`, `/stats/issuers`, `/stats/documents`, `/stats/registrations`
 * and `/categories`: index-wide aggregates (src/read/stats.ts, src/read/categories.ts,
 * src/read/documents.ts, src/read/registrations.ts).
 */
import { createRoute, z } from '@hono/zod-openapi';
import { readerOf } from '../../../db/database.js';
import { resolveNetwork } from '../../../request-params.js';
import { readRefreshMeta } from '../../../read/refresh-meta.js';
import { readCategories } from '../../../read/categories.js';
import { readDocumentStats, readIssuerCoverage } from '../../../read/documents.js';
import { readRegistrationStats } from '../../../read/registrations.js';
import { registrationsConfig } from '../../../config.js';
import { RegistrationStatsSchema } from '../schemas/registrations.js';
import {
  ISSUER_SOURCE,
  UNKNOWN_TYPE,
  readFacets,
  readIssuers,
  readTypeBreakdown,
} from '../../../read/stats.js';
import { POLICY_VERSION } from '../../../scoring/index.js';
import type { App, AppContext } from '../context.js';
import { unknownNetwork } from '../errors.js';
import { CACHE_AGGREGATE } from '../free-cache.js';
import {
  CategoryCatalogSchema,
  DocumentStatsSchema,
  FacetStatSchema,
  FeedQueryErrorSchema,
  IssuerStatsSchema,
  TypeBreakdownSchema,
} from '../schemas/aggregates.js';
import { NETWORK_DOC, json } from '../schemas/common.js';

const facetsRoute = createRoute({
  method: 'get',
  path: '/stats/facets',
  summary: 'Every facet (raw tag1) with volume, mean and reach (free)',
  description:
    'An object keyed by raw tag1 ("" is its own facet), in volume order. Keys are untrusted free text: escape them ' +
    'before rendering. Facets are separate judgements and are never averaged together.',
  tags: ['free'],
  request: {
    query: z.object({
      network: z
        .string()
        .optional()
        .openapi({ description: `${NETWORK_DOC} Omit it for the whole index.` }),
    }),
  },
  responses: {
    200: json(z.record(z.string(), FacetStatSchema), 'Facets by volume'),
    422: json(FeedQueryErrorSchema, '`unknown_network` with `known_networks`'),
  },
});

const typesRoute = createRoute({
  method: 'get',
  path: '/stats/types',
  summary: 'Declared-type coverage (free)',
  description:
    '`declared_type` is what an agent says about itself in its own metadata: self-declared, never a verification. ' +
    '`unknown` counts the agents that declare none (an empty or literal "unknown" declaration included).',
  tags: ['free'],
  responses: { 200: json(TypeBreakdownSchema, 'Coverage by declared type') },
});

const issuersRoute = createRoute({
  method: 'get',
  path: '/stats/issuers',
  summary: 'Ratings grouped by the host of their feedbackURI (free, advisory)',
  description:
    '`document_coverage` is the feedback-document coverage per host (`by_host`, keyed by issuer_host; `no_host`): ' +
    'documents queued, fetched, matching their on-chain hash, with a verified payment. It follows the fetcher ' +
    '(fresh within a minute); the grouping follows the index refresh.',
  tags: ['free'],
  responses: { 200: json(IssuerStatsSchema, 'Issuers by volume') },
});

const documentsRoute = createRoute({
  method: 'get',
  path: '/stats/documents',
  summary: 'Feedback documents: fetch, integrity and payment-proof coverage (free, advisory)',
  description:
    'How many ratings name a feedback document, how many were fetched, how many match their on-chain feedbackHash, ' +
    'how many name a proofOfPayment the chain confirms, and the responses appended to ratings. Evidence only: ' +
    'nothing here moves a score. Fresh within a minute (the fetcher runs between index passes).',
  tags: ['free'],
  responses: { 200: json(DocumentStatsSchema, 'Coverage') },
});

const registrationsRoute = createRoute({
  method: 'get',
  path: '/stats/registrations',
  summary:
    'Registration files, domain proofs and live endpoints: the coverage funnel per chain (free, advisory)',
  description:
    'Per chain: agents indexed, agents naming an agentURI, whose URI answered, whose registration file is valid, and among ' +
    'those the agents with a verified domain proof and with a live endpoint (at the protocol level: an A2A card that ' +
    'parses, an MCP server answering initialize and tools/list, a web endpoint answering 2xx); beside it every file ' +
    'state, every domain proof (per endpoint) and the probes. Evidence only: nothing here moves a score. Fresh within a ' +
    'minute (the fetcher and the probes run between index passes).',
  tags: ['free'],
  responses: { 200: json(RegistrationStatsSchema, 'Coverage') },
});

const categoriesRoute = createRoute({
  method: 'get',
  path: '/categories',
  summary: 'Categories: the types agents of the index declare, with counts (free)',
  description:
    'Our own small shape. A category is a declared type present in the index, verbatim; alphabetical, never by volume ' +
    'or reputation. Nothing is curated or invented, and declarations are never verified.',
  tags: ['free'],
  responses: { 200: json(CategoryCatalogSchema, 'The catalog') },
});

/** JSON object from ordered entries, keeping that order on the wire (integer-like keys too). */
function orderedObjectJson(entries: readonly [string, unknown][]): string {
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
}

export function registerStatsRoutes(app: App, ctx: AppContext): void {
  app.openapi(facetsRoute, async function getFacetStats(c) {
    const { network: raw } = c.req.valid('query');
    let network = '*';
    if (raw !== undefined) {
      const n = resolveNetwork(ctx, raw);
      if (n === null) return unknownNetwork(c, ctx, raw, 422);
      network = n;
    }
    const facets = await readFacets(readerOf(ctx.db), network);
    const body = orderedObjectJson(facets.map(({ facet, ...stat }) => [facet, stat]));
    // Built by hand so the volume order survives on the wire (JSON.stringify would move
    // integer-like keys first); values are still JSON.stringify'd.
    return c.body(body, 200, {
      'Content-Type': 'application/json; charset=UTF-8',
      'Cache-Control': CACHE_AGGREGATE,
    }) as never;
  });

  app.openapi(typesRoute, async function getTypeStats(c) {
    const [t, meta] = await Promise.all([
      readTypeBreakdown(readerOf(ctx.db)),
      readRefreshMeta(readerOf(ctx.db)),
    ]);
    const head = {
      classification_source: 'self_declared',
      declared_type_verified: false,
      note:
        'declared_type is what each agent says about itself in its own on-chain metadata: self-declared, never ' +
        `verified by this index. "${UNKNOWN_TYPE}" means the agent did not say.`,
      total_agents: t.total_agents,
      declared_agents: t.declared_agents,
      unknown_agents: t.unknown_agents,
      unknown_share: t.unknown_share,
    };
    const types = orderedObjectJson(t.types.map(({ type, ...stat }) => [type, stat]));
    const body = `${JSON.stringify(head).slice(0, -1)},"types":${types},"refreshed_at":${JSON.stringify(meta.refreshed_at)}}`;
    return c.body(body, 200, {
      'Content-Type': 'application/json; charset=UTF-8',
      'Cache-Control': CACHE_AGGREGATE,
    }) as never;
  });

  app.openapi(issuersRoute, async function getIssuerStats(c) {
    const [i, meta, coverage] = await Promise.all([
      readIssuers(readerOf(ctx.db)),
      readRefreshMeta(readerOf(ctx.db)),
      readIssuerCoverage(readerOf(ctx.db)),
    ]);
    c.header('Cache-Control', CACHE_AGGREGATE);
    return c.json(
      {
        issuer_source: ISSUER_SOURCE,
        issuer_org_rule:
          'Approximate registrable domain of issuer_host, without the Public Suffix List: the last two labels ' +
          '(feedback.example.com -> example.com), or the last three under a generic second level of a two-letter ' +
          'country code (api.shop.co.uk -> shop.co.uk); IP literals and single-label hosts are their own org. ' +
          'An attribution by name only, never a verification.',
        advisory: true as const,
        issuers: i.issuers,
        no_host: i.no_host,
        document_coverage: coverage,
        policy_version: POLICY_VERSION,
        source: 'agg_issuer',
        refreshed_at: meta.refreshed_at,
      },
      200,
    );
  });

  app.openapi(documentsRoute, async function getDocumentStats(c) {
    const stats = await readDocumentStats(readerOf(ctx.db));
    c.header('Cache-Control', CACHE_AGGREGATE);
    return c.json(
      { advisory: true as const, ...stats, fetcher_enabled: ctx.config.feedbackFetch?.enabled !== false },
      200,
    );
  });

  app.openapi(registrationsRoute, async function getRegistrationStats(c) {
    const stats = await readRegistrationStats(readerOf(ctx.db));
    const r = ctx.config.registrations ?? registrationsConfig({});
    c.header('Cache-Control', CACHE_AGGREGATE);
    return c.json(
      {
        advisory: true as const,
        funnel: ['agents', 'with_uri', 'fetched', 'valid_file', 'verified_domain', 'live_endpoint'],
        note:
          'valid_file counts the files in state valid or changed; verified_domain and live_endpoint count agents with a ' +
          'valid file and at least one such service. What an agent declares is never verified: the domain proof and ' +
          'the liveness are what this index observed.',
        chains: stats.chains,
        totals: stats.totals,
        fetcher_enabled: r.enabled,
        liveness_enabled: r.liveness,
      },
      200,
    );
  });

  app.openapi(categoriesRoute, async function getCategories(c) {
    const [cat, meta] = await Promise.all([
      readCategories(readerOf(ctx.db)),
      readRefreshMeta(readerOf(ctx.db)),
    ]);
    c.header('Cache-Control', CACHE_AGGREGATE);
    return c.json(
      {
        categories_source: 'declared_type' as const,
        declared_type_verified: false as const,
        ordering: 'alphabetical' as const,
        note:
          'Each category is a type that indexed agents declare about themselves, verbatim, listed when at least one ' +
          'agent declares it. Self-declared, never verified; no score per category.',
        categories: cat.categories,
        coverage: cat.coverage,
        refreshed_at: meta.refreshed_at,
      },
      200,
    );
  });
}
