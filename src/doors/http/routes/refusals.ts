/**
 * The documented refusals, every method, any query string, nothing read: `/names/resolve`,
 * `/names/reverse` (410 `not_offered`: no name search, no person lookup), `/auth*`, `/me*`
 * (410 `no_accounts`: payment is the authentication).
 */
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import type { App, AppContext } from '../context.js';
import { RefusalSchema } from '../schemas/meta.js';

const REFUSAL_STATUS = 410;

function refusalDoc(
  path: string,
  operationId: string,
  method: 'get' | 'post',
  summary: string,
  description: string,
) {
  return createRoute({
    method,
    path,
    operationId,
    tags: ['refused'],
    summary,
    description,
    responses: {
      [REFUSAL_STATUS]: {
        description:
          'Gone, on purpose and for good: a documented refusal. Same answer for every method and any query string.',
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

export function registerRefusalRoutes(app: App, ctx: AppContext): void {
  // Read at request time: the demo learns its BASE_URL only once the listener has a port.
  const baseOf = () => ctx.config.baseUrl.replace(/\/+$/, '');

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
    app.openAPIRegistry.registerPath(
      refusalDoc(path, id, 'get', 'Refused: no name search, no person lookup (410)', NAMES_DESCRIPTION),
    );
    app.all(path, refuse('names'));
  }
  for (const [path, id] of [
    ['/auth', 'authRefused'],
    ['/me', 'meRefused'],
  ] as const) {
    app.openAPIRegistry.registerPath(
      refusalDoc(path, id, 'get', 'Refused: there are no accounts (410)', ACCOUNTS_DESCRIPTION),
    );
    app.openAPIRegistry.registerPath(
      refusalDoc(path, `${id}Post`, 'post', 'Refused: there are no accounts (410)', ACCOUNTS_DESCRIPTION),
    );
    app.all(path, refuse('accounts'));
    app.all(`${path}/*`, refuse('accounts'));
  }
}
