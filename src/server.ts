/**
 * The HTTP listener. `listenHttp` binds HOST:PORT first (so `serve` learns of a busy port before
 * it spends time migrating) and answers 503 until `attach` gives it the app; `startHttpServer`
 * does both at once.
 *
 * Every answer keeps the contract's shape, also those Node's own HTTP layer would otherwise send
 * with an empty body: a request the HTTP parser refuses (headers or URL over Node's 16 KB header
 * limit: 431; a bad method, control or non-ASCII bytes in the path, a malformed request line or
 * header: 400; a request that did not arrive in time: 408) and a request node-server cannot turn
 * into a `Request` (backslash in the path, bad Host: 400) get a JSON `{detail}` body with
 * `Api-Version` and `RateLimit-Policy`, like every answer of the app.
 */
import { getRequestListener } from '@hono/node-server';
import { createServer, STATUS_CODES, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Queryable } from './db/database.js';
import { logger } from './log.js';
import { enableProcessMetrics, renderMetrics, setMetricsDatabase } from './metrics.js';
import { createApp } from './doors/http/app.js';
import type { AppContext } from './doors/http/context.js';
import { API_VERSION } from './doors/http/errors.js';
import { policyHeader } from './doors/http/rate-limit.js';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

interface PendingServer extends RunningServer {
  /** Starts answering with the app of `ctx` (until then: 503 JSON). */
  attach(ctx: AppContext): void;
}

/** The listen error of a port that cannot be bound, with a one-line cause. */
export class ListenError extends Error {
  constructor(
    readonly code: string,
    readonly host: string,
    readonly port: number,
    cause: Error,
  ) {
    const why =
      code === 'EADDRINUSE'
        ? 'the address is already in use (another process listens there)'
        : code === 'EACCES'
          ? 'permission denied (ports below 1024 need privileges)'
          : code === 'EADDRNOTAVAIL'
            ? 'the address is not one of this machine'
            : cause.message;
    super(`cannot listen on ${host}:${port}: ${why}`, { cause });
  }
}

/** Headers every answer carries (the default budget's policy: no route was matched). */
function contractHeaders(rate: { rate: number; burst: number }): Record<string, string> {
  return { 'Api-Version': API_VERSION, 'RateLimit-Policy': policyHeader({ name: 'default', ...rate }) };
}

/** Status and `detail` for an error of Node's HTTP parser (`clientError`). */
function clientErrorAnswer(err: NodeJS.ErrnoException): { status: number; detail: string } {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return {
        status: 431,
        detail:
          'Request Header Fields Too Large: the request line and headers (URL included) must fit in 16 KB.',
      };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
    case 'ERR_HTTP_HEADERS_TIMEOUT':
      return { status: 408, detail: 'Request Timeout: the request did not arrive in time.' };
    case 'HPE_INVALID_METHOD':
      return { status: 400, detail: 'Bad Request: unknown HTTP method.' };
    case 'HPE_INVALID_URL':
      return {
        status: 400,
        detail:
          'Bad Request: the request target is not a valid URL path (control or non-ASCII bytes must be percent-encoded).',
      };
    default:
      return { status: 400, detail: 'Bad Request: the request could not be parsed as HTTP/1.1.' };
  }
}

function rawAnswer(status: number, detail: string, headers: Record<string, string>): string {
  const body = JSON.stringify({ detail });
  const lines = [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}`,
    'Content-Type: application/json',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Cache-Control: no-store',
    'Connection: close',
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}

export function listenHttp(
  opts: { host: string; port: number },
  rate: { rate: number; burst: number },
): Promise<PendingServer> {
  const headers = contractHeaders(rate);
  let fetchApp: ((req: Request, env: unknown) => Response | Promise<Response>) | null = null;
  const listener = getRequestListener(
    (req, env) =>
      fetchApp
        ? fetchApp(req, env)
        : new Response(
            JSON.stringify({ detail: 'Service Unavailable: starting up; retry in a few seconds.' }),
            {
              status: 503,
              headers: { ...headers, 'Content-Type': 'application/json', 'Retry-After': '5' },
            },
          ),
    {
      hostname: opts.host,
      // A request node-server cannot build (backslash in the path, bad Host): the contract's 400.
      errorHandler: () =>
        new Response(
          JSON.stringify({ detail: 'Bad Request: the request target or Host header is not valid.' }),
          {
            status: 400,
            headers: { ...headers, 'Content-Type': 'application/json' },
          },
        ),
    },
  );
  const server: Server = createServer(listener);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    // A reset or an already answered socket: nothing to say.
    if (
      err.code === 'ECONNRESET' ||
      !socket.writable ||
      (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent
    ) {
      socket.destroy();
      return;
    }
    const { status, detail } = clientErrorAnswer(err);
    socket.end(rawAnswer(status, detail, headers));
  });
  return new Promise((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(new ListenError(e.code ?? 'EUNKNOWN', opts.host, opts.port, e)),
    );
    server.listen(opts.port, opts.host, () => {
      const info = server.address() as AddressInfo;
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${host}:${info.port}`,
        port: info.port,
        attach(ctx: AppContext) {
          const app = createApp(ctx);
          fetchApp = (req, env) => app.fetch(req, env as never);
        },
        close: () =>
          new Promise<void>((res) => {
            server.close(() => res());
            // Keep-alive sockets would hold close() open.
            server.closeAllConnections();
          }),
      });
    });
  });
}

/** Starts the HTTP listener for an app context; returns its address and a close function. */
export async function startHttpServer(
  ctx: AppContext,
  opts: { host: string; port: number },
): Promise<RunningServer> {
  const pending = await listenHttp(opts, ctx.config.rateLimit);
  pending.attach(ctx);
  return pending;
}

/**
 * The metrics listener (METRICS_PORT): `GET /metrics` in the Prometheus text format, nothing
 * else. A listener of its own, so the public port never exposes it and the public rate limit
 * never counts a scrape.
 */
export function startMetricsServer(opts: {
  host: string;
  port: number;
  db?: Queryable;
}): Promise<RunningServer> {
  if (opts.db) setMetricsDatabase(opts.db);
  enableProcessMetrics();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(path === '/metrics' ? 405 : 404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(path === '/metrics' ? 'GET only\n' : 'Not found: this listener serves GET /metrics only\n');
      return;
    }
    renderMetrics().then(
      ({ contentType, body }) => {
        res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' });
        res.end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        logger('metrics').error({ err }, 'metrics scrape failed');
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
        res.end('metrics unavailable\n');
      },
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      const info = server.address() as AddressInfo;
      const host = info.family === 'IPv6' ? `[${info.address}]` : info.address;
      resolve({
        url: `http://${host}:${info.port}`,
        port: info.port,
        close: () =>
          new Promise<void>((res) => {
            server.close(() => res());
            server.closeAllConnections();
          }),
      });
    });
  });
}
