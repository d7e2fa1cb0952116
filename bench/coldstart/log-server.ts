/**
 * The fast log server of `bench:coldstart`: one Node HTTP JSON-RPC server holding the synthetic
 * history of ./world.ts in typed arrays, serving every chain at its own path (/bsc, /base, …) like
 * a public endpoint: each chain paced to its requests per second (a request waits for its slot;
 * each member of a batch takes one), every Nth request answered 429 with Retry-After: 1, batches of
 * more than 10 refused; in front of each chain, test/helpers/rpc-proxy.ts refuses eth_getLogs wider
 * than the chain's range cap (each chain in the error style of another provider).
 *
 * It measures what the indexer waited: per chain, the time with at least one of its requests in
 * flight (arrival to answer, the pacing wait included), and the same over all chains.
 *
 * It runs as a child process of bench/coldstart.ts (its CPU is not the indexer's): options come in
 * the environment (COLDSTART_SCALE, COLDSTART_SPAN, COLDSTART_SEED, COLDSTART_STAMP,
 * COLDSTART_RPS_FACTOR, COLDSTART_429_EVERY); it sends `ready` with the chains' proxy URLs, and
 * answers a `stats` message with the figures.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PROVIDER_STYLES, startHostileRpc, type HostileRpc } from '../../test/helpers/rpc-proxy.js';
import { IDENTITY_REGISTRY, MULTICALL3, REPUTATION_REGISTRY } from './addresses.js';
import { aggregate3, blockOf, logOf, selfCheck, viewCall } from './encode.js';
import { buildWorld, type ChainWorld } from './world.js';

interface Call {
  id?: unknown;
  method?: string;
  params?: unknown[];
}

interface ChainServing {
  w: ChainWorld;
  rps: number;
  nextSlot: number;
  requests: number;
  calls: Record<string, number>;
  limited: number;
  refusedBatches: number;
  logs: number;
  inflight: number;
  busySince: number;
  busyMs: number;
}

export interface ServerStats {
  chains: Record<
    string,
    {
      http_requests: number;
      calls: Record<string, number>;
      rate_limited: number;
      refused_batches: number;
      range_refused: number;
      logs_served: number;
      busy_ms: number;
    }
  >;
  busy_ms_any: number;
}

const CODE = '0x6080604052348015600f57600080fd5b50';
const num = (h: unknown, head: number): number =>
  h === undefined || h === 'latest' || h === 'safe' || h === 'finalized' || h === 'pending'
    ? head
    : h === 'earliest'
      ? 0
      : Number(BigInt(String(h)));

/** First event at or after block `b` (binary search on the chain order). */
function firstAt(w: ChainWorld, b: number): number {
  let lo = 0;
  let hi = w.evBlock.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (w.evBlock[mid]! < b) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const asList = (x: unknown): string[] | null =>
  x === null || x === undefined ? null : (Array.isArray(x) ? x : [x]).map((s) => String(s).toLowerCase());

function getLogs(c: ChainServing, filter: Record<string, unknown>, stamp: boolean): unknown[] {
  const w = c.w;
  const from = num(filter.fromBlock, w.head);
  const to = num(filter.toBlock, w.head);
  const addresses = asList(filter.address);
  const topics = ((filter.topics as unknown[] | undefined) ?? []).map(asList);
  const out: unknown[] = [];
  for (let e = firstAt(w, from); e < w.evBlock.length && w.evBlock[e]! <= to; e++) {
    const log = logOf(w, e, stamp) as { address: string; topics: string[] };
    if (addresses && !addresses.includes(log.address)) continue;
    if (topics.some((t, i) => t !== null && !t.includes(log.topics[i] ?? ''))) continue;
    out.push(log);
  }
  c.logs += out.length;
  return out;
}

type Answer = { result: unknown } | { error: { code: number; message: string; data?: string } };

function answer(c: ChainServing, call: Call, stamp: boolean): Answer {
  const w = c.w;
  const p = call.params ?? [];
  switch (call.method) {
    case 'eth_chainId':
      return { result: `0x${w.spec.chainId.toString(16)}` };
    case 'eth_blockNumber':
      return { result: `0x${w.head.toString(16)}` };
    case 'eth_getBlockByNumber': {
      const n = num(p[0], w.head);
      return { result: n > w.head || n < 0 ? null : blockOf(w, n) };
    }
    case 'eth_getLogs':
      return { result: getLogs(c, (p[0] ?? {}) as Record<string, unknown>, stamp) };
    case 'eth_getCode': {
      const a = String(p[0]).toLowerCase();
      const has = a === IDENTITY_REGISTRY || a === REPUTATION_REGISTRY || a === MULTICALL3;
      return { result: has && num(p[1], w.head) >= w.spec.start - 1 ? CODE : '0x' };
    }
    case 'eth_getStorageAt':
      return { result: `0x${'0'.repeat(64)}` };
    case 'eth_call': {
      const tx = (p[0] ?? {}) as { to?: string; data?: string; input?: string };
      const to = String(tx.to ?? '').toLowerCase();
      const data = String(tx.data ?? tx.input ?? '0x').slice(2);
      if (to === MULTICALL3 && data.startsWith('82ad56cb')) return { result: aggregate3(w, data) };
      const out = viewCall(w, to, data);
      return out === null
        ? { error: { code: 3, message: 'execution reverted', data: '0x' } }
        : { result: `0x${out}` };
    }
    default:
      return {
        error: { code: -32601, message: `the method ${call.method} does not exist/is not available` },
      };
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

export interface LogServerOptions {
  scale: number;
  span: number;
  seed: number;
  stamp: boolean;
  rpsFactor: number;
  limitEvery: number;
}

export async function startLogServer(o: LogServerOptions) {
  const t0 = performance.now();
  const world = buildWorld({ scale: o.scale, span: o.span, seed: o.seed });
  for (const w of world.chains) selfCheck(w);
  const buildSeconds = (performance.now() - t0) / 1000;
  const serving = new Map<string, ChainServing>(
    world.chains.map((w) => [
      w.spec.network,
      {
        w,
        rps: w.spec.rps * o.rpsFactor,
        nextSlot: 0,
        requests: 0,
        calls: {},
        limited: 0,
        refusedBatches: 0,
        logs: 0,
        inflight: 0,
        busySince: 0,
        busyMs: 0,
      },
    ]),
  );
  const any = { inflight: 0, since: 0, ms: 0 };
  const begin = (c: ChainServing) => {
    if (c.inflight++ === 0) c.busySince = performance.now();
    if (any.inflight++ === 0) any.since = performance.now();
  };
  const end = (c: ChainServing) => {
    if (--c.inflight === 0) c.busyMs += performance.now() - c.busySince;
    if (--any.inflight === 0) any.ms += performance.now() - any.since;
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const c = serving.get((req.url ?? '/').slice(1));
    if (!c) {
      res.writeHead(404).end();
      return;
    }
    begin(c);
    try {
      const text = await readBody(req);
      c.requests++;
      if (o.limitEvery > 0 && c.requests % o.limitEvery === 0) {
        c.limited++;
        res.writeHead(429, { 'Content-Type': 'application/json', 'Retry-After': '1' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32005, message: 'Too Many Requests' },
          }),
        );
        return;
      }
      const parsed = JSON.parse(text) as Call | Call[];
      const calls = Array.isArray(parsed) ? parsed : [parsed];
      if (calls.length > 10) {
        c.refusedBatches++;
        res.writeHead(200, { 'Content-Type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32600, message: `batch size too large: ${calls.length} > 10` },
          }),
        );
        return;
      }
      // Pacing: each call takes the next slot of the chain's rate.
      const now = performance.now();
      const slot = Math.max(now, c.nextSlot);
      c.nextSlot = slot + (1000 / c.rps) * calls.length;
      if (slot > now) await new Promise((r) => setTimeout(r, slot - now));
      const out = calls.map((call) => {
        const m = call.method ?? '?';
        c.calls[m] = (c.calls[m] ?? 0) + 1;
        return { jsonrpc: '2.0', id: call.id ?? null, ...answer(c, call, o.stamp) };
      });
      res
        .writeHead(200, { 'Content-Type': 'application/json' })
        .end(JSON.stringify(Array.isArray(parsed) ? out : out[0]));
    } finally {
      end(c);
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((e: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(e));
    });
  });
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  const styles = PROVIDER_STYLES.filter((s) => s !== 'infura'); // (infura's answer names a count, not a range)
  const proxies = new Map<string, HostileRpc>();
  for (const [i, w] of world.chains.entries()) {
    proxies.set(
      w.spec.network,
      await startHostileRpc(`http://127.0.0.1:${port}/${w.spec.network}`, {
        kind: 'range-error',
        above: w.spec.rangeCap,
        style: styles[i % styles.length]!,
      }),
    );
  }
  const stats = (): ServerStats => ({
    chains: Object.fromEntries(
      [...serving].map(([n, c]) => [
        n,
        {
          http_requests: c.requests,
          calls: c.calls,
          rate_limited: c.limited,
          refused_batches: c.refusedBatches,
          range_refused: proxies.get(n)!.spoiled,
          logs_served: c.logs,
          busy_ms: Math.round(c.busyMs + (c.inflight > 0 ? performance.now() - c.busySince : 0)),
        },
      ]),
    ),
    busy_ms_any: Math.round(any.ms + (any.inflight > 0 ? performance.now() - any.since : 0)),
  });
  return {
    world,
    buildSeconds,
    chains: world.chains.map((w) => ({
      network: w.spec.network,
      chainId: w.spec.chainId,
      start: w.spec.start,
      head: w.head,
      rangeCap: w.spec.rangeCap,
      rps: w.spec.rps * o.rpsFactor,
      agents: w.agents,
      feedback: w.fbAgent.length,
      events: w.evKind.length,
      url: proxies.get(w.spec.network)!.url,
    })),
    stats,
    close: async () => {
      for (const p of proxies.values()) await p.close();
      await new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      });
    },
  };
}

export type ServedChain = Awaited<ReturnType<typeof startLogServer>>['chains'][number];

async function child(): Promise<void> {
  const env = process.env;
  const s = await startLogServer({
    scale: Number(env.COLDSTART_SCALE ?? 1),
    span: Number(env.COLDSTART_SPAN ?? 2_000_000),
    seed: Number(env.COLDSTART_SEED ?? 34),
    stamp: env.COLDSTART_STAMP !== '0',
    rpsFactor: Number(env.COLDSTART_RPS_FACTOR ?? 1),
    limitEvery: Number(env.COLDSTART_429_EVERY ?? 50),
  });
  const rss = process.memoryUsage().rss;
  process.send!({ type: 'ready', chains: s.chains, buildSeconds: s.buildSeconds, rss });
  process.on('message', (m: { type?: string }) => {
    if (m.type === 'stats') process.send!({ type: 'stats', stats: s.stats() });
    if (m.type === 'close') void s.close().then(() => process.exit(0));
  });
}

if (process.send && process.env.COLDSTART_CHILD === '1') void child();
