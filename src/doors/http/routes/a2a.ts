/**
 * The A2A door: JSON-RPC 2.0 over `POST /a2a` (and `/v1/a2a`), the agent card
 * `GET /.well-known/agent-card.json`. The open CORS of `/a2a` and `/mcp` is in app.ts, the 405
 * and the in-process calls in src/doors/in-process.ts.
 *
 * The door re-implements no query: `message/send` is answered by calling THIS app in process
 * (`app.request('/wallets/…/chains' | '/search/…' | '/health')`, each call spending one token of
 * the POSTing client's own bucket, like the POST itself) and formatting the JSON those handlers return
 * (src/doors/a2a/dispatch.ts). No SQL here.
 *
 * `/a2a` is registered with plain Hono methods, so it stays out of the OpenAPI document (the
 * contract); the agent card is a normal free GET and is declared there. There is only the API
 * host in this build: the door is served from it, never from a separate "site host".
 *
 * HTTP statuses: 200 for every JSON-RPC answer (success, -32600, -32601, -32603), 400 for -32700
 * (the body is not JSON), 413 (with a -32600 envelope) for a body over {@link MAX_BODY_BYTES},
 * 405 `{detail}` for GET, HEAD, PUT, PATCH and DELETE on /a2a, 204 for the CORS preflight.
 */
import { randomUUID } from 'node:crypto';
import { createRoute } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import type { App, AppContext } from '../context.js';
import { agentCard, AgentCardSchema } from '../../a2a/agent-card.js';
import { answerText, extractText } from '../../a2a/dispatch.js';
import {
  errorResponse,
  internalError,
  INVALID_REQUEST,
  PARSE_ERROR,
  parseRequest,
  successResponse,
  type JsonRpcId,
} from '../../a2a/jsonrpc.js';
import { logger } from '../../../log.js';
import { refuseOtherMethods, requestInProcess } from '../../in-process.js';

/** Longest request body read; a `message/send` carrying a wallet fits in a few hundred bytes. */
export const MAX_BODY_BYTES = 64 * 1024;

/** An in-process call found the client's bucket empty: the POST is answered 429 as a whole. */
class OverBudget extends Error {}

const agentCardRoute = createRoute({
  method: 'get',
  path: '/.well-known/agent-card.json',
  operationId: 'getAgentCard',
  tags: ['free'],
  summary:
    'A2A agent card (protocol 0.3.0): the JSON-RPC endpoint, its two skills and its capabilities (free)',
  description:
    'Discovery document of the A2A door. The door takes JSON-RPC 2.0 `message/send` only and answers with one ' +
    'message (never a task): the free per-chain preview of an EVM address or a Solana key, or the index status. No ' +
    'streaming, no push notifications, no payment over the door. The door itself is not part of this schema.',
  responses: {
    200: { description: 'The agent card', content: { 'application/json': { schema: AgentCardSchema } } },
  },
});

export function registerA2aRoutes(app: App, ctx: AppContext): void {
  /**
   * In process through the same app (and its handlers); the JSON of a 200, else an error. Each
   * call spends one token of the POSTing client's own bucket (`client`, see AppEnv).
   */
  const getFor =
    (client: string | undefined) =>
    async (path: string): Promise<unknown> => {
      const res = await requestInProcess(app, path, { headers: { accept: 'application/json' } }, client);
      if (res.status !== 200) {
        await res.body?.cancel().catch(() => undefined);
        if (res.status === 429) throw new OverBudget();
        throw new Error(`in-process GET answered ${res.status}`);
      }
      return res.json();
    };

  const rpc = (c: Context, body: unknown, status: 200 | 400 | 413 = 200) => {
    c.header('Cache-Control', 'no-store');
    return c.json(body as object, status);
  };

  // Hono's bodyLimit refuses a body over MAX_BODY_BYTES unread (declared) or as soon as the
  // stream passes it, with the door's own JSON-RPC envelope.
  const withinBodyLimit = bodyLimit({
    maxSize: MAX_BODY_BYTES,
    onError: (c) =>
      rpc(
        c,
        errorResponse(null, INVALID_REQUEST, `Invalid Request: the body is over ${MAX_BODY_BYTES} bytes`),
        413,
      ),
  });

  app.post('/a2a', withinBodyLimit, async (c) => {
    let raw: string;
    try {
      raw = await c.req.text();
    } catch {
      return rpc(c, errorResponse(null, PARSE_ERROR, 'Parse error: the body could not be read'), 400);
    }
    const req = parseRequest(raw);
    if (req.kind === 'parse-error') return rpc(c, req.error, 400);
    if (req.kind !== 'message-send') return rpc(c, req.error);
    const id: JsonRpcId = req.id;
    try {
      const text = await answerText(extractText(req.params), { get: getFor(c.get('client')) });
      return rpc(
        c,
        successResponse(id, {
          kind: 'message',
          role: 'agent',
          messageId: randomUUID(),
          parts: [{ kind: 'text', text }],
        }),
      );
    } catch (e) {
      if (e instanceof OverBudget) {
        c.header('Retry-After', '1');
        c.header('Cache-Control', 'no-store');
        return c.json(
          {
            detail:
              'Too many requests: answering this message needs more of your rate budget than is left. Nothing was charged; replay the identical request after a pause.',
          },
          429,
        );
      }
      // Never echo the message text (hostile input) into the log.
      logger('a2a').error({ err: e instanceof Error ? e.message : String(e) }, 'message/send failed');
      return rpc(c, internalError(id));
    }
  });

  // Wrong HTTP method: 405 {detail}. Hono answers HEAD with the GET handler (no body).
  refuseOtherMethods(
    app,
    '/a2a',
    'Method Not Allowed: this is the A2A door, JSON-RPC 2.0 over POST (method message/send). ' +
      'The agent card is GET /.well-known/agent-card.json.',
  );

  app.openapi(agentCardRoute, (c) => {
    c.header('Cache-Control', 'public, max-age=300');
    // Cards are fetched cross-origin by browser clients.
    c.header('Access-Control-Allow-Origin', '*');
    return c.json(agentCard(ctx.config.baseUrl), 200);
  });
}
