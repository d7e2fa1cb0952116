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
 * The tools re-implement no query: they call this same app in process (`app.request`), metered
 * tools with their `payment` as `X-PAYMENT`. Each of those calls spends one token from the bucket
 * of the client that sent the POST (one client, one bucket, whatever the door): a tool calling
 * three routes costs what the three direct HTTP calls would, plus the POST itself.
 *
 * A JSON-RPC batch (a JSON array) is refused with 400 and a `-32600` envelope: the contract says
 * each MCP message is its own POST (and a batch would multiply the work one POST can start).
 *
 * A `tools/call` of a name that is not one of the 14 answers the SDK's tool error with the list
 * of valid names (`unknownToolText`).
 *
 * Registered with plain Hono methods: not in the OpenAPI document. `GET` (and PUT, PATCH, DELETE:
 * there are no sessions to delete) answer 405 `{detail}`. The CORS preflight and
 * `access-control-allow-origin: *` come from the door middleware `useDoorCors` (src/doors/http/app.ts).
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { bodyLimit } from 'hono/body-limit';
import type { App, AppContext } from '../context.js';
import { API_VERSION } from '../errors.js';
import { inProcessCaller } from '../../mcp/results.js';
import { buildMcpServer, TOOL_NAMES } from '../../mcp/tools.js';
import { refuseOtherMethods } from '../../in-process.js';

/** Longest request body read; a `tools/call` fits in a few kilobytes (a payment header included). */
const MCP_MAX_BODY_BYTES = 64 * 1024;

const MCP_SERVER_INFO = Object.freeze({ name: 'repindex', version: API_VERSION });

function jsonRpcError(status: 400 | 413, code: number, message: string): Response {
  return new Response(JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null }), {
    status,
    headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
  });
}

export function registerMcpRoutes(app: App, ctx: AppContext): void {
  // Hono's bodyLimit refuses a body over MCP_MAX_BODY_BYTES unread (declared) or as soon as the
  // stream passes it, with the door's own JSON-RPC envelope.
  const withinBodyLimit = bodyLimit({
    maxSize: MCP_MAX_BODY_BYTES,
    onError: () =>
      jsonRpcError(413, -32000, `Payload Too Large: the body is over ${MCP_MAX_BODY_BYTES} bytes`),
  });

  app.post('/mcp', withinBodyLimit, async (c) => {
    let text: string;
    try {
      text = await c.req.text();
    } catch {
      return jsonRpcError(400, -32700, 'Parse error: the body could not be read');
    }
    if (/^\s*\[/.test(text)) {
      return jsonRpcError(
        400,
        -32600,
        'Invalid Request: batches are not served; send each JSON-RPC message as its own POST',
      );
    }
    const call = inProcessCaller(app, c.get('client'));
    const server = buildMcpServer({ call, treasury: ctx.config.treasuryAddress }, { ...MCP_SERVER_INFO });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MCP_MAX_BODY_BYTES,
    });
    try {
      await server.connect(transport);
      // The body was read above: the transport gets a copy of the request with the same text.
      const req = new Request(c.req.raw.url, { method: 'POST', headers: c.req.raw.headers, body: text });
      listToolsOnUnknownName(transport);
      const res = await transport.handleRequest(req);
      res.headers.set('Cache-Control', 'no-store');
      return res;
    } finally {
      await transport.close().catch(() => undefined);
      await server.close().catch(() => undefined);
    }
  });

  refuseOtherMethods(
    app,
    '/mcp',
    'Method Not Allowed: this is the MCP door (Streamable HTTP, stateless): POST JSON-RPC messages with ' +
      'Content-Type: application/json and Accept: application/json, text/event-stream. No server-sent stream is offered.',
  );
}

/** The error text of a `tools/call` whose name is not a tool of this server. */
function unknownToolText(name: string): string {
  return (
    `Tool ${JSON.stringify(name.slice(0, 100))} not found. The ${TOOL_NAMES.length} tools of this server are: ` +
    `${TOOL_NAMES.join(', ')} (tools/list describes each).`
  );
}

type Message = Parameters<WebStandardStreamableHTTPServerTransport['send']>[0];

/**
 * Watches `tools/call` requests for names that are not tools (the SDK answers those with a bare
 * "Tool … not found") and rewrites that answer's text to list the valid names. Uses only the
 * transport's public `onmessage`/`send` (set by `connect`, called per message).
 */
function listToolsOnUnknownName(transport: WebStandardStreamableHTTPServerTransport): void {
  const unknown = new Map<string | number, string>();
  const onmessage = transport.onmessage;
  transport.onmessage = (message, extra) => {
    const m = message as { method?: unknown; id?: unknown; params?: { name?: unknown } };
    if (m.method === 'tools/call' && (typeof m.id === 'string' || typeof m.id === 'number')) {
      const name = m.params?.name;
      if (typeof name === 'string' && !TOOL_NAMES.includes(name)) unknown.set(m.id, name);
    }
    onmessage?.(message, extra);
  };
  const send = transport.send.bind(transport);
  transport.send = (message: Message, options?: Parameters<typeof send>[1]) => {
    const m = message as { id?: unknown; result?: { isError?: unknown }; error?: { message?: unknown } };
    const id = m.id as string | number | undefined;
    const name = id === undefined ? undefined : unknown.get(id);
    if (name !== undefined) {
      unknown.delete(id!);
      if (m.result && m.result.isError === true) {
        message = {
          ...m,
          result: { ...m.result, content: [{ type: 'text', text: unknownToolText(name) }] },
        } as unknown as Message;
      } else if (m.error && typeof m.error.message === 'string') {
        message = { ...m, error: { ...m.error, message: unknownToolText(name) } } as unknown as Message;
      }
    }
    return send(message, options);
  };
}
