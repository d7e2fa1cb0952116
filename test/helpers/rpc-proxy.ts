/**
 * A hostile-RPC proxy: an HTTP JSON-RPC server in front of a real node (the local EDR node of the
 * tests and the demo) that behaves like one public endpoint or another. Modes:
 *  - `well-behaved`: passes everything through (a JSON-RPC batch without eth_getLogs in one
 *    request, as a node answers it);
 *  - `truncate`: eth_getLogs over more than `above` blocks answers HTTP 200 with every 5th log
 *    dropped (about 20 %, as one public Celo endpoint did above ~2,000 blocks);
 *  - `empty`: eth_getLogs over more than `above` blocks answers `[]`;
 *  - `cap-results`: eth_getLogs answers at most `max` logs (the first ones), silently;
 *  - `drop-wide`: the logs of the given transactions are left out of every eth_getLogs answer
 *    to a WIDE filter (no topic beyond topic0: a scan), silently; a narrow filter (an agent, a
 *    client, a token) gets them (a node that loses logs under load, not by topic);
 *  - `range-error`: eth_getLogs over more than `above` blocks is refused with the error of one
 *    provider (`style`), some of which name the range or the limit they would accept, or with a
 *    bare error (-32005) of the given `message`, which names none;
 *  - `slow-range`: eth_getLogs over more than `above` blocks is held `ms` before it is forwarded
 *    (a node that times out on wide ranges); a client that gave up meanwhile gets nothing;
 *  - `batch-cap`: a JSON-RPC batch of more than `max` calls is refused;
 *  - `rate-limit`: `times` requests (every `every`-th) answer HTTP 429, with a Retry-After of
 *    `retryAfterSeconds` when given; a request arriving before that Retry-After ran out (and more
 *    than 100 ms after the 429, so not one already in flight) is counted as `early`;
 *  - `fail-first`: the first `times` requests, of any method, answer HTTP `status` with a plain
 *    text body (a node that is down or overloaded: 429 without Retry-After, 502, 503);
 *  - `fail-call`: every eth_call (to the contract `to` only, when given) answers HTTP 503 with a
 *    JSON-RPC error, while every other method is served (a node whose state reads fail: the
 *    census cannot run; the configuration check's own eth_call goes to the reputation registry).
 * With any mode, `delayMs` (the third argument) holds every other request that long first (a slow
 * node), and `blockReceipts` serves `eth_getBlockReceipts` (built from the node's block and
 * receipts: EDR lacks the method, most production clients have it). It imports nothing but Node's own modules, so the demo can put it in front of its node too.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Providers whose "range too large" answers the proxy imitates. */
export const PROVIDER_STYLES = [
  'alchemy',
  'infura',
  'infura-range',
  'quicknode',
  'reth',
  'tenderly',
  'zksync',
  'ankr-like',
] as const;
export type ProviderStyle = (typeof PROVIDER_STYLES)[number];

export type ProxyMode =
  | { kind: 'well-behaved' }
  | { kind: 'truncate'; above: number }
  | { kind: 'empty'; above: number }
  | { kind: 'cap-results'; max: number }
  | { kind: 'drop-wide'; txHashes: string[] }
  | { kind: 'range-error'; above: number; style: ProviderStyle }
  | { kind: 'range-error'; above: number; message: string }
  | { kind: 'slow-range'; above: number; ms: number }
  | { kind: 'batch-cap'; max: number }
  | { kind: 'rate-limit'; every: number; times: number; retryAfterSeconds?: number }
  | { kind: 'fail-first'; times: number; status: number }
  | { kind: 'fail-call'; to?: string };

export interface ProxyOptions {
  /** Hold every request this long before handling it (a slow node); `fail-first` answers at once. */
  delayMs?: number;
  /** Serve eth_getBlockReceipts from the node's block and its transactions' receipts. */
  blockReceipts?: boolean;
}

export interface HostileRpc {
  url: string;
  /** Requests per JSON-RPC method (batch members counted one by one). */
  readonly calls: Record<string, number>;
  /** Widths of the eth_getLogs ranges asked for, in order. */
  readonly logRanges: number[];
  /** Widths of the eth_getLogs ranges forwarded to the node at once (neither refused nor held), in order. */
  readonly servedRanges: number[];
  /** The eth_getLogs filters asked for, in order (a benchmark replays them against the node). */
  readonly logQueries: Record<string, unknown>[];
  /** eth_getLogs answers the proxy spoiled (refused, held, truncated or emptied). */
  readonly spoiled: number;
  /** Logs dropped by `truncate` / `empty`. */
  readonly droppedLogs: number;
  /** Batches refused by `batch-cap`. */
  readonly refusedBatches: number;
  /** 429 answers, and requests that came before the Retry-After of the last one ran out. */
  readonly rateLimited: number;
  readonly early: number;
  /** Requests answered with an HTTP error by `fail-first`, eth_calls refused by `fail-call`. */
  readonly failed: number;
  close(): Promise<void>;
}

interface RpcRequest {
  jsonrpc?: string;
  id?: unknown;
  method?: string;
  params?: unknown[];
}

const hex = (n: number) => `0x${n.toString(16)}`;

/** The JSON-RPC error (and HTTP status) a provider answers for a getLogs range it will not serve. */
function rangeError(
  style: ProviderStyle,
  from: number,
  span: number,
  above: number,
): { status: number; error: Record<string, unknown> } {
  const to = from + above - 1;
  switch (style) {
    case 'alchemy':
      return {
        status: 200,
        error: {
          code: -32602,
          message:
            'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on ' +
            'the response size, or you can request any block range with a cap of 10K logs in the response. Based on ' +
            `your parameters, this block range should work: [${hex(from)}, ${hex(to)}]`,
        },
      };
    case 'infura':
      return {
        status: 200,
        error: {
          code: -32005,
          message: 'query returned more than 10000 results',
          data: { from: hex(from), to: hex(to), limit: 10000 },
        },
      };
    case 'infura-range':
      return { status: 200, error: { code: -32602, message: `range ${span} exceeds limit of ${above}` } };
    case 'quicknode':
      return {
        status: 413,
        error: {
          code: -32614,
          message: `eth_getLogs is limited to a ${above.toLocaleString('en-US')} range`,
        },
      };
    case 'reth':
      return { status: 200, error: { code: -32602, message: `query exceeds max block range ${above}` } };
    case 'tenderly':
      return {
        status: 200,
        error: {
          code: -32602,
          message: 'invalid params',
          data: { error_id: '4ed94073', payload: `range ${span} is bigger than range limit ${above}` },
        },
      };
    case 'zksync':
      return {
        status: 200,
        error: {
          code: -32602,
          message: `Query returned more than 10000 results. Try with this block range [${hex(from)}, ${hex(to)}].`,
        },
      };
    case 'ankr-like':
      return { status: 200, error: { code: -32600, message: 'block range is too wide' } };
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  // With its length, as reth and most providers send it (a client may refuse a large answer unread).
  const text = JSON.stringify(body);
  res
    .writeHead(status, {
      'Content-Type': 'application/json',
      'Content-Length': String(Buffer.byteLength(text)),
      ...headers,
    })
    .end(text);
}

export async function startHostileRpc(
  upstream: string,
  mode: ProxyMode,
  opts: ProxyOptions = {},
): Promise<HostileRpc> {
  const st = {
    calls: {} as Record<string, number>,
    logRanges: [] as number[],
    servedRanges: [] as number[],
    logQueries: [] as Record<string, unknown>[],
    spoiled: 0,
    droppedLogs: 0,
    refusedBatches: 0,
    rateLimited: 0,
    early: 0,
    failed: 0,
    requests: 0,
    notBefore: 0,
    limitedAt: 0,
  };

  async function forward(call: RpcRequest): Promise<{ status: number; body: unknown }> {
    const up = await fetch(upstream, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(call),
    });
    return { status: up.status, body: await up.json() };
  }

  /** eth_getBlockReceipts made of the node's block and its transactions' receipts. */
  async function blockReceipts(call: RpcRequest): Promise<{ status: number; body: unknown }> {
    const block = await forward({
      jsonrpc: '2.0',
      id: 1,
      method: 'eth_getBlockByNumber',
      params: [call.params?.[0], false],
    });
    const txs = ((block.body as { result?: { transactions?: unknown[] } }).result?.transactions ??
      []) as string[];
    const receipts = [];
    for (const h of txs) {
      const r = await forward({ jsonrpc: '2.0', id: 1, method: 'eth_getTransactionReceipt', params: [h] });
      receipts.push((r.body as { result?: unknown }).result);
    }
    return { status: 200, body: { jsonrpc: '2.0', id: call.id ?? null, result: receipts } };
  }

  /** One call, spoiled as the mode says; null when the client gave up while it was held. */
  async function one(
    call: RpcRequest,
    gone: () => boolean,
  ): Promise<{ status: number; body: unknown } | null> {
    const method = typeof call.method === 'string' ? call.method : '?';
    st.calls[method] = (st.calls[method] ?? 0) + 1;
    if (mode.kind === 'fail-call' && method === 'eth_call') {
      const to = (call.params?.[0] as { to?: unknown } | undefined)?.to;
      if (mode.to === undefined || (typeof to === 'string' && to.toLowerCase() === mode.to.toLowerCase())) {
        st.failed++;
        return {
          status: 503,
          body: {
            jsonrpc: '2.0',
            id: call.id ?? null,
            error: { code: -32603, message: 'injected eth_call failure' },
          },
        };
      }
    }
    if (method === 'eth_getBlockReceipts' && opts.blockReceipts) return blockReceipts(call);
    const filter =
      method === 'eth_getLogs' ? (call.params?.[0] as Record<string, string> | undefined) : undefined;
    if (!filter) return forward(call);
    const from = Number(BigInt(filter.fromBlock ?? '0x0'));
    const span = Number(BigInt(filter.toBlock ?? '0x0')) - from + 1;
    st.logRanges.push(span);
    st.logQueries.push(filter);
    if (mode.kind === 'range-error' && span > mode.above) {
      st.spoiled++;
      const { status, error } =
        'message' in mode
          ? { status: 200, error: { code: -32005, message: mode.message } }
          : rangeError(mode.style, from, span, mode.above);
      return { status, body: { jsonrpc: '2.0', id: call.id ?? null, error } };
    }
    if (mode.kind === 'slow-range' && span > mode.above) {
      st.spoiled++;
      await new Promise((r) => setTimeout(r, mode.ms));
      return gone() ? null : forward(call);
    }
    st.servedRanges.push(span);
    const answer = await forward(call);
    const logs = (answer.body as { result?: unknown }).result;
    if (!Array.isArray(logs) || logs.length === 0) return answer;
    if (mode.kind === 'truncate' && span > mode.above) {
      const kept = logs.filter((_, i) => i % 5 !== 4);
      st.droppedLogs += logs.length - kept.length;
      if (kept.length < logs.length) st.spoiled++;
      return { status: 200, body: { ...(answer.body as object), result: kept } };
    }
    if (mode.kind === 'cap-results' && logs.length > mode.max) {
      st.droppedLogs += logs.length - mode.max;
      st.spoiled++;
      return { status: 200, body: { ...(answer.body as object), result: logs.slice(0, mode.max) } };
    }
    if (mode.kind === 'drop-wide') {
      const topics = (filter as unknown as { topics?: unknown[] }).topics ?? [];
      const wide = topics.slice(1).every((t) => t === null || t === undefined);
      const drop = new Set(mode.txHashes.map((h) => h.toLowerCase()));
      const kept = wide
        ? logs.filter(
            (l) => !drop.has(String((l as { transactionHash?: unknown }).transactionHash).toLowerCase()),
          )
        : logs;
      if (kept.length < logs.length) {
        st.droppedLogs += logs.length - kept.length;
        st.spoiled++;
      }
      return { status: 200, body: { ...(answer.body as object), result: kept } };
    }
    if (mode.kind === 'empty' && span > mode.above) {
      st.droppedLogs += logs.length;
      st.spoiled++;
      return { status: 200, body: { ...(answer.body as object), result: [] } };
    }
    return answer;
  }

  /** A call the proxy passes through untouched in its well-behaved mode (a batch of them goes whole). */
  const plainCall = (call: RpcRequest): boolean =>
    typeof call === 'object' &&
    call !== null &&
    call.method !== 'eth_getLogs' &&
    !(call.method === 'eth_getBlockReceipts' && opts.blockReceipts);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let closed = false;
    res.on('close', () => (closed = true));
    const gone = () => closed;
    const text = await readBody(req);
    const now = Date.now();
    // (requests already in flight when the 429 left, arriving within 100 ms of it, are not early)
    if (now < st.notBefore && now > st.limitedAt + 100) st.early++;
    st.requests++;
    if (mode.kind === 'rate-limit' && st.rateLimited < mode.times && st.requests % mode.every === 0) {
      st.rateLimited++;
      const headers: Record<string, string> = {};
      if (mode.retryAfterSeconds !== undefined) {
        headers['Retry-After'] = String(mode.retryAfterSeconds);
        st.notBefore = now + mode.retryAfterSeconds * 1000;
        st.limitedAt = now;
      }
      send(
        res,
        429,
        { jsonrpc: '2.0', id: null, error: { code: -32005, message: 'Too Many Requests' } },
        headers,
      );
      return;
    }
    if (mode.kind === 'fail-first' && st.failed < mode.times) {
      st.failed++;
      res.writeHead(mode.status, { 'Content-Type': 'text/plain' }).end('injected failure');
      return;
    }
    if (opts.delayMs) await new Promise((r) => setTimeout(r, opts.delayMs));
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      send(res, 200, { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      return;
    }
    if (Array.isArray(parsed)) {
      if (mode.kind === 'batch-cap' && parsed.length > mode.max) {
        st.refusedBatches++;
        send(res, 200, {
          jsonrpc: '2.0',
          id: null,
          error: { code: -32600, message: `batch size too large: ${parsed.length} > ${mode.max}` },
        });
        return;
      }
      const calls = parsed as RpcRequest[];
      if (mode.kind === 'well-behaved' && !opts.delayMs && calls.every(plainCall)) {
        // A node answers a batch in one go: forwarded whole (each member still counted).
        for (const call of calls) {
          const method = typeof call.method === 'string' ? call.method : '?';
          st.calls[method] = (st.calls[method] ?? 0) + 1;
        }
        const up = await fetch(upstream, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: text,
        });
        send(res, up.status, await up.json());
        return;
      }
      const answers = [];
      for (const call of calls) {
        const answer = await one(call, gone);
        if (!answer) return;
        answers.push(answer.body);
      }
      send(res, 200, answers);
      return;
    }
    const answer = await one(parsed as RpcRequest, gone);
    if (answer) send(res, answer.status, answer.body);
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent)
        send(res, 502, { jsonrpc: '2.0', id: null, error: { code: -32603, message: String(e) } });
    });
  });
  server.keepAliveTimeout = 500;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get calls() {
      return st.calls;
    },
    get logRanges() {
      return st.logRanges;
    },
    get logQueries() {
      return st.logQueries;
    },
    get servedRanges() {
      return st.servedRanges;
    },
    get spoiled() {
      return st.spoiled;
    },
    get droppedLogs() {
      return st.droppedLogs;
    },
    get refusedBatches() {
      return st.refusedBatches;
    },
    get rateLimited() {
      return st.rateLimited;
    },
    get early() {
      return st.early;
    },
    get failed() {
      return st.failed;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** Runs `fn` with a hostile proxy in front of `upstream`; the proxy is closed afterwards, whatever happens. */
export async function withHostileRpc<T>(
  upstream: string,
  mode: ProxyMode,
  fn: (p: HostileRpc) => Promise<T>,
  opts: ProxyOptions = {},
): Promise<T> {
  const p = await startHostileRpc(upstream, mode, opts);
  try {
    return await fn(p);
  } finally {
    await p.close();
  }
}
