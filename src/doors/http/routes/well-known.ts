/**
 * `GET /.well-known/oauth-protected-resource` (payment is the authentication) and the documented 404
 * of the OAuth/OpenID discovery documents. The agent card (`/.well-known/agent-card.json`) is in a2a.ts.
 */
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { App, AppContext } from '../context.js';
import { CACHE_STATIC } from '../free-cache.js';
import { NotFoundSchema } from '../schemas/common.js';
import { ProtectedResourceSchema } from '../schemas/meta.js';

const protectedResourceRoute = createRoute({
  method: 'get',
  path: '/.well-known/oauth-protected-resource',
  operationId: 'getProtectedResourceMetadata',
  tags: ['free'],
  summary:
    'OAuth protected-resource metadata (RFC 9728) saying there is no OAuth: payment is the authentication',
  description:
    'Published so that OAuth-aware clients learn, in their own vocabulary, that there is no authorization server, no scope ' +
    'and no bearer token: metered routes are paid per call with x402. `/.well-known/openid-configuration` and ' +
    '`/.well-known/oauth-authorization-server` answer 404.',
  responses: {
    200: {
      description: 'Protected-resource metadata',
      content: { 'application/json': { schema: ProtectedResourceSchema } },
    },
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
      404: {
        description: 'Not found: payment is the authentication.',
        content: { 'application/json': { schema: NotFoundSchema } },
      },
    },
  });
}

export function registerWellKnownRoutes(app: App, ctx: AppContext): void {
  // Read at request time: the demo learns its BASE_URL only once the listener has a port.
  const baseOf = () => ctx.config.baseUrl.replace(/\/+$/, '');

  app.openapi(protectedResourceRoute, function getProtectedResource(c) {
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
      {
        detail:
          'Not Found: there is no OAuth or OpenID Connect server here; payment is the authentication (see /.well-known/oauth-protected-resource).',
      },
      404,
    );
  app.openapi(absentDocRoute('/.well-known/openid-configuration', 'getOpenIdConfiguration'), noOAuth);
  app.openapi(
    absentDocRoute('/.well-known/oauth-authorization-server', 'getOAuthAuthorizationServer'),
    noOAuth,
  );
}
