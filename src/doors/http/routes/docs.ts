/**
 * `GET /openapi.json` (OpenAPI 3.1, generated from the same zod schemas that validate requests),
 * `GET /docs` (Swagger UI) and `GET /redoc` (Redoc). Both renderers are served from LOCAL assets
 * (swagger-ui-dist and redoc from node_modules, under /docs/assets/*): no CDN, no external font.
 * Registered last, so the document describes every route registered before it.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createRoute, z } from '@hono/zod-openapi';
import type { App, AppContext } from '../context.js';
import { API_VERSION } from '../errors.js';
import { PRICING_VERSION } from '../../../payments/pricing.js';
import {
  CONFIDENCE_POLICY,
  ORDERING_POLICY,
  POLICY_VERSION,
  RATER_WEIGHT_POLICY,
} from '../../../scoring/index.js';

const require = createRequire(import.meta.url);

const TITLE = 'ERC-8004 Reputation Index';

/** Paths that exist but are not part of the OpenAPI document (the A2A door is not in the schema). */
const HIDDEN_PATH = /^\/a2a(\/|$)/;

const DESCRIPTION = `A read-only index of ERC-8004 agent reputation across chains. It serves **evidence, not a verdict**: every score travels with its composition (distinct raters, concentration, self-rating gap, per-facet and per-chain detail) and with the \`policy_version\` that produced it, and every rating with its transaction.

### Free and paid

**Free** is what one cached answer serves everybody: the index aggregates, plus the number and the location of a named subject (\`/search/{q}\`, \`/wallets/{wallet}/chains\`, \`/wallets/{wallet}/exists\`, the badge). No account, no key, no header.

**Metered** is the decomposition of one named subject (who rated, how often, on which facet, when, in which transaction): \`/reputation/*\` and \`/leaderboard/page\`, paid per call in USDC over x402. Call the route without payment: the \`402\` is the price quote. Sign against its \`accepts[]\`, check \`payTo\` against the treasury published by \`GET /pricing\`, and replay the identical request with \`X-PAYMENT\`. **Payment is the authentication**: there is no OAuth, session or API key (\`/auth\`, \`/me\` answer \`410\`). There is no name search and no person lookup (\`/names/*\` answer \`410\`).

Pricing table \`${PRICING_VERSION}\` (\`GET /pricing\`, header \`X-Pricing-Version\`). Policies: scoring \`${POLICY_VERSION}\`, ranking \`${ORDERING_POLICY}\`, rater weighting \`${RATER_WEIGHT_POLICY}\`, evidence bands \`${CONFIDENCE_POLICY}\` (live in \`GET /health\`).

### Documentation

The project's own documents ship with its source: \`docs/API.md\` (every route, field, status code, header and limit, the badge, the A2A and MCP doors, and the x402 payment flow step by step) and \`docs/POLICIES.md\` (the math of every policy above, the eight caveat codes and when they fire, and the payment policy).

### Rate limits

Every response carries \`RateLimit-Policy\` (RFC 9239 syntax: requests per 1-second window and the burst); the header is the authority. Default \`50;w=1;burst=40\` per client address; \`GET|HEAD /wallets/{wallet}/exists\` has its own budget \`10;w=1;burst=20\`; \`/names/resolve\` and \`/names/reverse\` share \`1;w=1;burst=2\`. Over budget the answer is \`429\` with \`Retry-After\`, issued before the application runs: nothing queried, nothing charged, no \`X-PAYMENT\` consumed; replay the identical request after a pause. No per-request remaining/reset counter is emitted, on purpose.

### Versioning

The API is versioned by this document's \`info.version\` (semver, currently \`${API_VERSION}\`), echoed in every response as \`Api-Version\`. The \`/v1\` prefix is an alias of the same contract: every route answers identically with and without it. A breaking change to a served field (including a change of type) bumps the major version and is never silent; a new optional field is not breaking. Scored numbers are versioned separately by \`policy_version\`; the pricing table by \`pricing_version\`. Caveat codes carry no version: the set of eight is frozen. Deprecations are announced before removal.`;

/** Files served under /docs/assets/{file}: a fixed allow-list, never a path from the request. */
interface Asset {
  type: string;
  load: () => Promise<Buffer | string>;
}

function fromPackage(pkgFile: string, rel: string): () => Promise<Buffer> {
  return () => readFile(join(dirname(require.resolve(pkgFile)), rel));
}

const SWAGGER_INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: 'openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    defaultModelsExpandDepth: 0,
    docExpansion: 'list'
  });
});
`;

const ASSETS: Record<string, Asset> = {
  'swagger-ui.css': {
    type: 'text/css; charset=utf-8',
    load: fromPackage('swagger-ui-dist/package.json', 'swagger-ui.css'),
  },
  'swagger-ui-bundle.js': {
    type: 'text/javascript; charset=utf-8',
    load: fromPackage('swagger-ui-dist/package.json', 'swagger-ui-bundle.js'),
  },
  'favicon-32x32.png': {
    type: 'image/png',
    load: fromPackage('swagger-ui-dist/package.json', 'favicon-32x32.png'),
  },
  'swagger-init.js': { type: 'text/javascript; charset=utf-8', load: async () => SWAGGER_INIT },
  'redoc.standalone.js': {
    type: 'text/javascript; charset=utf-8',
    // The bundle hard-codes one remote image (the Redocly logo of its footer); served locally
    // nothing may leave the host, so that URL becomes an inert data URI (the image then hides).
    load: async () =>
      (await readFile(require.resolve('redoc/bundles/redoc.standalone.js'), 'utf8')).replaceAll(
        'https://cdn.redoc.ly/redoc/logo-mini.svg',
        'data:,',
      ),
  },
};

/** Escapes text for HTML element content and attribute values. */
function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

// Relative URLs on purpose: the same page works at /docs and at /v1/docs (and behind a path prefix).
function swaggerPage(): string {
  const t = escapeHtml(`${TITLE} · API ${API_VERSION} · Swagger UI`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${t}</title>
<link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/assets/swagger-ui-bundle.js"></script>
<script src="docs/assets/swagger-init.js"></script>
</body>
</html>
`;
}

function redocPage(): string {
  const t = escapeHtml(`${TITLE} · API ${API_VERSION} · Redoc`);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${t}</title>
<link rel="icon" type="image/png" href="docs/assets/favicon-32x32.png">
<style>body{margin:0;padding:0}</style>
</head>
<body>
<redoc spec-url="openapi.json" hide-hostname="false"></redoc>
<script src="docs/assets/redoc.standalone.js"></script>
</body>
</html>
`;
}

// ------------------------------------------------------------------ routes

const openapiRoute = createRoute({
  method: 'get',
  path: '/openapi.json',
  operationId: 'getOpenApi',
  tags: ['docs'],
  summary: 'This OpenAPI 3.1 document, generated live from the route schemas (free)',
  responses: {
    200: {
      description: 'The OpenAPI 3.1 document',
      content: { 'application/json': { schema: z.record(z.string(), z.unknown()) } },
    },
  },
});

const htmlRoute = (path: string, operationId: string, summary: string) =>
  createRoute({
    method: 'get',
    path,
    operationId,
    tags: ['docs'],
    summary,
    responses: {
      200: {
        description: 'HTML page (assets served locally under /docs/assets)',
        content: { 'text/html': { schema: z.string() } },
      },
    },
  });

const assetRoute = createRoute({
  method: 'get',
  path: '/docs/assets/{file}',
  operationId: 'getDocsAsset',
  tags: ['docs'],
  summary: 'Static assets of the documentation pages (Swagger UI and Redoc bundles, served locally)',
  request: {
    params: z.object({
      file: z.string().openapi({ param: { name: 'file', in: 'path' }, examples: Object.keys(ASSETS) }),
    }),
  },
  responses: {
    200: { description: 'The asset', content: { 'application/octet-stream': { schema: z.string() } } },
    404: {
      description: 'Not one of the served assets',
      content: { 'application/json': { schema: z.object({ detail: z.string() }) } },
    },
  },
});

type OpenApiDoc = ReturnType<App['getOpenAPI31Document']>;

const RESPONSE_HEADERS = {
  'Api-Version': { $ref: '#/components/headers/Api-Version' },
  'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
};

/** Post-processing shared by every operation: the headers every response carries, and the 429. */
function finishDocument(doc: OpenApiDoc): OpenApiDoc {
  const paths: NonNullable<OpenApiDoc['paths']> = {};
  for (const [p, item] of Object.entries(doc.paths ?? {})) {
    if (HIDDEN_PATH.test(p)) continue;
    for (const method of ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'] as const) {
      const op = (
        item as Record<string, { responses?: Record<string, Record<string, unknown>> } | undefined>
      )[method];
      if (!op) continue;
      op.responses ??= {};
      op.responses['429'] ??= {
        description:
          'Too many requests: over the rate budget of this route (see `RateLimit-Policy`). Issued before the application runs: nothing queried, nothing charged, no `X-PAYMENT` consumed. Replay the identical request after `Retry-After` seconds.',
        headers: { 'Retry-After': { schema: { type: 'string' } } },
        content: {
          'application/json': {
            schema: { type: 'object', properties: { detail: { type: 'string' } }, required: ['detail'] },
          },
        },
      };
      for (const r of Object.values(op.responses)) {
        const headers = (r.headers ?? {}) as Record<string, unknown>;
        r.headers = { ...RESPONSE_HEADERS, ...headers };
      }
    }
    paths[p] = item;
  }
  doc.paths = paths;
  // Describe only the tags some operation uses (an empty tag renders as an empty section).
  const used = new Set<string>();
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item as Record<string, { tags?: string[] }>))
      for (const t of op?.tags ?? []) used.add(t);
  }
  doc.tags = (doc.tags ?? []).filter((t) => used.has(t.name));
  doc.components ??= {};
  (doc.components as Record<string, unknown>).headers = {
    'Api-Version': {
      description: 'The API version (`info.version` of this document), on every response.',
      schema: { type: 'string', example: API_VERSION },
    },
    'RateLimit-Policy': {
      description:
        'The rate budget of this route in RFC 9239 syntax (`<rate>;w=1;burst=<n>`), on every response. The authority.',
      schema: { type: 'string', example: '50;w=1;burst=40' },
    },
  };
  return doc;
}

export function registerDocsRoutes(app: App, ctx: AppContext): void {
  let cached: { baseUrl: string; json: string } | null = null;
  const documentJson = (): string => {
    const baseUrl = ctx.config.baseUrl.replace(/\/+$/, '');
    if (cached?.baseUrl === baseUrl) return cached.json;
    const doc = app.getOpenAPI31Document({
      openapi: '3.1.0',
      info: { title: TITLE, version: API_VERSION, description: DESCRIPTION },
      servers: [{ url: baseUrl }],
      tags: [
        { name: 'free', description: 'No payment, no headers, no account.' },
        { name: 'metered', description: 'Answers 402 with a signable x402 challenge until paid per call.' },
        {
          name: 'refused',
          description: 'Documented refusals: no name search, no person lookup, no accounts.',
        },
        { name: 'docs', description: 'This document and its two renderings.' },
      ],
    });
    cached = { baseUrl, json: JSON.stringify(finishDocument(doc)) };
    return cached.json;
  };

  app.openapi(openapiRoute, (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    c.header('Content-Type', 'application/json');
    // The document is serialised once; returning the cached string keeps it byte-identical.
    return c.body(documentJson(), 200) as never;
  });

  app.openapi(htmlRoute('/docs', 'getSwaggerUi', 'Swagger UI over the live schema (local assets)'), (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.html(swaggerPage(), 200);
  });
  app.openapi(htmlRoute('/redoc', 'getRedoc', 'Redoc over the live schema (local assets)'), (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    return c.html(redocPage(), 200);
  });

  const loaded = new Map<string, Promise<Buffer | string>>();
  app.openapi(assetRoute, async (c) => {
    const file = c.req.valid('param').file;
    const asset = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!asset) return c.json({ detail: 'Not Found' }, 404);
    let p = loaded.get(file);
    if (!p) {
      p = asset.load();
      loaded.set(file, p);
      p.catch(() => loaded.delete(file));
    }
    const content = await p;
    c.header('Content-Type', asset.type);
    c.header('Cache-Control', 'public, max-age=86400');
    return c.body(typeof content === 'string' ? content : new Uint8Array(content), 200) as never;
  });
}
