/**
 * The MCP door: Streamable HTTP, stateless, on `POST /mcp` (and `/v1/mcp`). Every POST gets a
 * fresh `McpServer` (the 14 tools of src/doors/mcp/tools.ts) and a fresh
 * `WebStandardStreamableHTTPServerTransport` with `sessionIdGenerator: undefined` (no
 * `mcp-session-id` is ever emitted; `tools/call` works without a prior `initialize`) and
 * `enableJsonResponse: true` (answers are `application/json`, never SSE). The SDK enforces the
 * request headers: without `Accept: application/json, text/event-stream` it answers 406, without
 * `Content-Type: application/json` 415, with an unparseable body 400 (JSON-RPC -32700); a
 * notification alone is answered 202 with no body.
 *
 * The tools re-implement no query: they call this same app in process (`app.request`, which the
 * rate limiter does not count again), metered tools with their `payment` as `X-PAYMENT`.
 *
 * Registered with plain Hono methods: not in the OpenAPI document. `GET` (and PUT, PATCH, DELETE:
 * there are no sessions to delete) answer 405 `{detail}`. The CORS preflight and
 * `access-control-allow-origin: *` come from the door middleware registered in a2a.ts.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { App, AppContext } from '../context.js';
import { API_VERSION } from '../errors.js';
import { inProcessCaller } from '../../mcp/results.js';
import { buildMcpServer } from '../../mcp/tools.js';

/** Longest request body read; a `tools/call` fits in a few kilobytes (a payment header included). */
export const MCP_MAX_BODY_BYTES = 64 * 1024;

export const MCP_SERVER_INFO = Object.freeze({ name: 'repindex', version: API_VERSION });

export function registerMcpRoutes(app: App, ctx: AppContext): void {
  const call = inProcessCaller(app);

  app.post('/mcp', async (c) => {
    const server = buildMcpServer({ call, treasury: ctx.config.treasuryAddress }, { ...MCP_SERVER_INFO });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MCP_MAX_BODY_BYTES,
    });
    try {
      await server.connect(transport);
      const res = await transport.handleRequest(c.req.raw);
      res.headers.set('Cache-Control', 'no-store');
      return res;
    } finally {
      await transport.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    }
  });

  app.on(['GET', 'PUT', 'PATCH', 'DELETE'], '/mcp', (c) => {
    c.header('Allow', 'POST, OPTIONS');
    return c.json(
      {
        detail:
          'Method Not Allowed: this is the MCP door (Streamable HTTP, stateless): POST JSON-RPC messages with ' +
          'Content-Type: application/json and Accept: application/json, text/event-stream. No server-sent stream is offered.',
      },
      405,
    );
  });
}
