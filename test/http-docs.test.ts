/**
 * GET /openapi.json (OpenAPI 3.1 generated from the route schemas), GET /docs (Swagger UI) and
 * GET /redoc (Redoc), both served from local assets. The rendering itself is checked in a real
 * browser by test/http-docs-screenshot.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createApp } from '../src/doors/http/app.js';
import type { App } from '../src/doors/http/context.js';
import { EXPLORER_PATH } from '../src/doors/explorer/routes.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

const BASE = 'https://rep.example.org/api-root';
let t: TestDatabase;
let app: App;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
let doc: any;

beforeAll(async () => {
  t = await openTestDatabase();
  app = createApp({
    config: loadConfig({ BASE_URL: BASE }),
    db: t.db,
    now: () => new Date('2026-11-20T00:00:00Z'),
  });
  const res = await app.request('/openapi.json');
  expect(res.status).toBe(200);
  doc = await res.json();
});
afterAll(() => t.close());

const OPERATIONS = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options'] as const;

describe('GET /openapi.json', () => {
  it('is OpenAPI 3.1 with info.version 2.0.0, a description of free/paid, rate limits and versioning, and BASE_URL as server', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.info.version).toBe('2.0.0');
    expect(doc.info.title).toBeTruthy();
    for (const needle of [
      'Free and paid',
      'x402',
      'Rate limits',
      'RateLimit-Policy',
      '50;w=1;burst=40',
      '10;w=1;burst=20',
      '1;w=1;burst=2',
      'Versioning',
      '/v1',
      'Api-Version',
      'policy_version',
    ]) {
      expect(doc.info.description, needle).toContain(needle);
    }
    expect(doc.servers).toEqual([{ url: BASE }]);
  });

  it('lists the routes of this build, each once (never the /v1 duplicates), and never the A2A door', () => {
    const paths = Object.keys(doc.paths);
    for (const p of [
      '/health',
      '/search/{q}',
      '/wallets/{wallet}/chains',
      '/wallets/{wallet}/exists',
      '/pricing',
      '/manifesto',
      '/workflows.json',
      '/.well-known/oauth-protected-resource',
      '/names/resolve',
      '/names/reverse',
      '/auth',
      '/me',
      '/openapi.json',
      '/docs',
      '/redoc',
    ]) {
      expect(paths, p).toContain(p);
    }
    expect(paths.filter((p) => p.startsWith('/v1'))).toEqual([]);
    expect(paths.filter((p) => p.startsWith('/a2a'))).toEqual([]);
    expect(JSON.stringify(doc)).not.toMatch(/"\/a2a/);
    expect(doc.paths['/wallets/{wallet}/exists'].head).toBeDefined();
    expect(doc.paths['/wallets/{wallet}/exists'].get).toBeDefined();
    expect(Object.keys(doc.paths['/names/resolve'].get.responses)).toContain('410');
  });

  it('documents every route registered on the app (plain paths; wildcards, /a2a, /mcp and the explorer site aside)', () => {
    const documented = new Set(Object.keys(doc.paths));
    const missing = new Set<string>();
    for (const r of app.routes) {
      if (r.path.includes('*') || /^\/(a2a|mcp)(\/|$)/.test(r.path) || EXPLORER_PATH.test(r.path)) continue;
      const p = r.path.replace(/:([A-Za-z0-9_]+)(\{[^}]*\})?/g, '{$1}');
      if (!documented.has(p)) missing.add(`${r.method} ${r.path}`);
    }
    expect([...missing]).toEqual([]);
  });

  it('gives every operation a 429 and the Api-Version and RateLimit-Policy headers on every response', () => {
    expect(doc.components.headers['Api-Version']).toBeDefined();
    expect(doc.components.headers['RateLimit-Policy']).toBeDefined();
    for (const [path, item] of Object.entries<
      Record<string, { responses: Record<string, { headers?: object }> }>
    >(doc.paths)) {
      for (const m of OPERATIONS) {
        const op = item[m];
        if (!op) continue;
        expect(op.responses['429'], `${m} ${path}`).toBeDefined();
        for (const [code, r] of Object.entries(op.responses)) {
          expect(r.headers, `${m} ${path} ${code}`).toMatchObject({
            'Api-Version': { $ref: '#/components/headers/Api-Version' },
            'RateLimit-Policy': { $ref: '#/components/headers/RateLimit-Policy' },
          });
        }
      }
    }
  });

  it('declares the answers of a paid route: the 402 with payment_in_flight, the 503 body with every code, Retry-After and X-Payment-Receipt', () => {
    const paths = [
      '/reputation/wallet/{wallet}',
      '/reputation/agent/{network}/{agent_id}',
      '/leaderboard/page',
    ];
    for (const path of paths) {
      const r = doc.paths[path].get.responses;
      expect(r['402'].description, path).toMatch(/payment_in_flight.*retryable: true/);
      expect(r['402'].headers['Retry-After'], path).toBeDefined();
      expect(r['503'].content['application/json'].schema, path).toEqual({
        $ref: '#/components/schemas/PaidUnavailable',
      });
      expect(r['503'].description, path).toMatch(/payment_spent_pending/);
      expect(Object.keys(r['503'].headers), path).toEqual(
        expect.arrayContaining(['Retry-After', 'X-Payment-Receipt']),
      );
    }
    const body = doc.components.schemas.PaidUnavailable;
    expect(body.required).toEqual(['error', 'message', 'retryable']);
    expect(body.properties.error.enum).toEqual([
      'facilitator_unavailable',
      'paid_capacity_exhausted',
      'database_unavailable',
      'payment_spent_pending',
      'payments_not_configured',
    ]);
  });

  it('names the response schemas of the lookup and meta routes after the reference deployment', () => {
    for (const name of [
      'WalletChains',
      'WalletChain',
      'WalletExists',
      'SearchResult',
      'SearchMatch',
      'PricingCatalog',
      'PricingTier',
      'Manifesto',
      'ManifestoPrinciple',
      'ManifestoVerification',
      'Caveat',
      'NotAnAddress',
      'UnrecognizedQuery',
      'Refusal',
      'Workflows',
      'ProtectedResourceMetadata',
    ]) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    const search = doc.components.schemas.UnrecognizedQuery;
    expect(JSON.stringify(search)).toContain('accepted_shapes');
  });

  it('is byte-identical under /v1 and served as JSON', async () => {
    const [a, b] = await Promise.all([app.request('/openapi.json'), app.request('/v1/openapi.json')]);
    expect(a.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await b.text()).toBe(await a.text());
  });
});

describe('GET /docs and GET /redoc', () => {
  it.each([
    [
      '/docs',
      ['docs/assets/swagger-ui.css', 'docs/assets/swagger-ui-bundle.js', 'docs/assets/swagger-init.js'],
    ],
    ['/redoc', ['docs/assets/redoc.standalone.js', 'spec-url="openapi.json"']],
  ])('serves %s as HTML that loads only local assets', async (path, needles) => {
    for (const p of [path, `/v1${path}`]) {
      const res = await app.request(p);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      expect(res.headers.get('api-version')).toBe('2.0.0');
      const html = await res.text();
      for (const n of needles) expect(html).toContain(n);
      // No CDN, no external font: nothing absolute at all.
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
      expect(html).not.toMatch(/unpkg|jsdelivr|cdnjs|googleapis/);
    }
  });

  it.each([
    ['swagger-ui.css', /^text\/css/],
    ['swagger-ui-bundle.js', /^text\/javascript/],
    ['swagger-init.js', /^text\/javascript/],
    ['redoc.standalone.js', /^text\/javascript/],
    ['favicon-32x32.png', /^image\/png/],
  ])('serves the asset %s locally', async (file, type) => {
    const res = await app.request(`/docs/assets/${file}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(type);
    expect(res.headers.get('cache-control')).toContain('max-age');
    const body = new Uint8Array(await res.arrayBuffer());
    expect(body.byteLength).toBeGreaterThan(file === 'swagger-init.js' ? 100 : 500);
  });

  it('points Swagger UI at the relative schema and disables the online validator', async () => {
    const js = await (await app.request('/docs/assets/swagger-init.js')).text();
    expect(js).toContain("url: 'openapi.json'");
    expect(js).toContain('validatorUrl: null');
  });

  it.each([
    'nope.js',
    '..%2Fpackage.json',
    '%2E%2E%2F%2E%2E%2Fpackage.json',
    'constructor',
    '__proto__',
    'toString',
  ])('answers 404 JSON for an asset that is not on the allow-list (%s)', async (file) => {
    const res = await app.request(`/docs/assets/${file}`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });
});
