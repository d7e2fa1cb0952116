/**
 * A `fetch` for the official MCP client (its `StreamableHTTPClientTransport` takes one) that sends
 * every request through the project's safe rules (src/documents/safe-fetch.ts `safeRequest`): the
 * host's addresses checked (no private address unless configured), the connection pinned to the
 * checked address, the answer's body capped, one deadline. Redirects are handed back to the client
 * (whose policy follows only same-origin ones, each through this fetch again, so each is checked).
 * The last failure's code is kept, so a probe can say why it failed (`timeout`, `blocked_address`…).
 */
import { safeRequest, type FetchErrorCode, type FetchLimits } from '../documents/safe-fetch.js';

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** The request body as bytes (the MCP client sends JSON strings). */
function bodyBytes(body: RequestInit['body']): Uint8Array | null {
  if (body === undefined || body === null) return null;
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new TypeError('unsupported request body');
}

const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function safeFetchLike(limits: FetchLimits): FetchLike & { lastError: () => FetchErrorCode | null } {
  let last: FetchErrorCode | null = null;
  const f = async (input: string | URL, init: RequestInit = {}): Promise<Response> => {
    const url = typeof input === 'string' ? input : input.toString();
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((v, k) => {
      headers[k] = v;
    });
    const method = (init.method ?? 'GET').toUpperCase();
    const r = await safeRequest(
      url,
      { method, headers, body: bodyBytes(init.body), signal: init.signal ?? undefined },
      limits,
    );
    if (!r.ok) {
      last = r.code;
      throw new TypeError(`fetch failed: ${r.code}`);
    }
    if (r.status < 200 || r.status > 599) {
      last = 'http_error';
      throw new TypeError(`fetch failed: status ${r.status}`);
    }
    const out = new Headers();
    for (const [k, v] of Object.entries(r.headers)) {
      if (Array.isArray(v)) for (const x of v) out.append(k, x);
      else if (typeof v === 'string') out.set(k, v);
    }
    return new Response(NULL_BODY.has(r.status) || method === 'HEAD' ? null : Buffer.from(r.bytes), {
      status: r.status,
      headers: out,
    });
  };
  return Object.assign(f, { lastError: () => last });
}
