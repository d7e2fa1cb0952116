/**
 * Shared fixtures of the indexer tests: a local chain with the registries deployed, a Config that
 * points chosen networks at local nodes (every other chain disabled), a JSON-RPC proxy that can
 * refuse wide getLogs ranges or answer 429, a quiet logger and a dump of every indexed row.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startLocalNode, type LocalNode } from '../../src/demo/local-node.js';
import { deployRegistries, type Registries } from '../../src/demo/registries.js';
import { loadConfig, type Config } from '../../src/config.js';
import type { Queryable } from '../../src/db/database.js';
import type { IndexLogger } from '../../src/indexer/pass.js';
import type { IndexEvent } from '../../src/index-events.js';

export interface LocalChain {
  network: string;
  node: LocalNode;
  reg: Registries;
  close(): Promise<void>;
}

export async function startLocalChain(network: string, chainId: number): Promise<LocalChain> {
  const node = await startLocalNode({ chainId });
  const reg = await deployRegistries(node.rpcUrl, node.privateKeys[0]!);
  return { network, node, reg, close: () => node.close() };
}

export interface ChainTarget {
  network: string;
  chainId: number;
  rpcUrl: string;
  reg: Pick<Registries, 'identityRegistry' | 'reputationRegistry'>;
  startBlock?: number | null;
  confirmations?: number;
}

/** Built-in defaults with the given networks on local nodes and every other chain disabled. */
export function configFor(targets: ChainTarget[], over: Partial<Config> = {}): Config {
  const base = loadConfig({});
  return {
    ...base,
    ...over,
    chains: base.chains.map((c) => {
      const t = targets.find((x) => x.network === c.network);
      if (!t) return { ...c, enabled: false };
      return {
        ...c,
        kind: 'evm' as const,
        chainId: t.chainId,
        rpcUrl: t.rpcUrl,
        identityRegistry: t.reg.identityRegistry,
        reputationRegistry: t.reg.reputationRegistry,
        startBlock: t.startBlock === undefined ? null : t.startBlock,
        confirmations: t.confirmations ?? 0,
        enabled: true,
      };
    }),
  };
}

export function target(chain: LocalChain, extra: Partial<ChainTarget> = {}): ChainTarget {
  return {
    network: chain.network,
    chainId: chain.node.chainId,
    rpcUrl: chain.node.rpcUrl,
    reg: chain.reg,
    ...extra,
  };
}

export interface CollectingLogger extends IndexLogger {
  lines: string[];
  warnings: string[];
  /** Debug lines (retries). */
  debugs: string[];
}

export function quietLogger(): CollectingLogger {
  const lines: string[] = [];
  const warnings: string[] = [];
  const debugs: string[] = [];
  return {
    lines,
    warnings,
    debugs,
    info: (l) => lines.push(l),
    warn: (l) => warnings.push(l),
    debug: (l) => debugs.push(l),
  };
}

/** dumpIndex of one network without the network column: compares two networks' rows. */
export async function dumpNetwork(db: Queryable, network: string): Promise<Record<string, unknown[]>> {
  const d = await dumpIndex(db, [network]);
  for (const rows of Object.values(d)) for (const r of rows as Record<string, unknown>[]) delete r.network;
  return d;
}

/** Every indexed row, in a stable order: equal dumps = the same index. */
export async function dumpIndex(db: Queryable, networks?: string[]): Promise<Record<string, unknown[]>> {
  const where = networks ? `WHERE network = ANY($1::text[])` : '';
  const params = networks ? [networks] : [];
  const out: Record<string, unknown[]> = {};
  const order: Record<string, string> = {
    agents: 'network, agent_id',
    ratings: 'network, tx_hash, log_index',
    revocations: 'network, tx_hash, log_index',
    ownership_transfers: 'network, tx_hash, log_index',
    agent_metadata: 'network, agent_id, meta_key',
    rating_responses: 'network, tx_hash, log_index',
    feedback_documents: 'network, tx_hash, log_index',
  };
  // The queue's own clock columns (created, updated, next try) are not part of the index.
  const columns: Record<string, string> = {
    feedback_documents: 'network, tx_hash, log_index, agent_id, rater, block_number, uri, feedback_hash',
  };
  for (const [t, o] of Object.entries(order))
    out[t] = await db.query(`SELECT ${columns[t] ?? '*'} FROM ${t} ${where} ORDER BY ${o}`, params);
  return out;
}

// ------------------------------------------------------------------ JSON-RPC proxy

export interface RpcProxy {
  url: string;
  /** getLogs ranges (toBlock − fromBlock + 1) the upstream actually served. */
  servedRanges: number[];
  /** getLogs requests refused as too wide. */
  refused: number;
  /** Requests answered with an injected HTTP error. */
  injected: number;
  close(): Promise<void>;
}

export interface RpcProxyOptions {
  /** Refuse eth_getLogs spanning more than this many blocks with a JSON-RPC error. */
  maxLogRange?: number;
  /** The error message of a refused range. */
  rangeMessage?: string;
  /** Answer the first N requests (of any method) with this HTTP status. */
  failFirst?: { count: number; status: number };
  /** Delay every request by this many ms (a slow node). */
  delayAllMs?: number;
  /** Hold eth_getLogs spanning more than `range` blocks for `ms` before answering (timeouts). */
  delayAbove?: { range: number; ms: number };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startRpcProxy(upstream: string, opts: RpcProxyOptions): Promise<RpcProxy> {
  const state = { servedRanges: [] as number[], refused: 0, injected: 0 };
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      if (opts.failFirst && state.injected < opts.failFirst.count) {
        state.injected++;
        res.writeHead(opts.failFirst.status, { 'Content-Type': 'text/plain' }).end('injected failure');
        return;
      }
      if (opts.delayAllMs) await new Promise((r) => setTimeout(r, opts.delayAllMs));
      const msg = JSON.parse(body) as {
        id: unknown;
        method: string;
        params?: { fromBlock: string; toBlock: string }[];
      };
      if (!Array.isArray(msg) && msg.method === 'eth_getLogs' && msg.params?.[0]) {
        const p = msg.params[0];
        const span = Number(BigInt(p.toBlock) - BigInt(p.fromBlock)) + 1;
        if (opts.maxLogRange !== undefined && span > opts.maxLogRange) {
          state.refused++;
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: msg.id,
              error: { code: -32005, message: opts.rangeMessage ?? 'query returned more than 10000 results' },
            }),
          );
          return;
        }
        if (opts.delayAbove && span > opts.delayAbove.range) {
          state.refused++;
          await new Promise((r) => setTimeout(r, opts.delayAbove!.ms));
          if (!res.writable) return;
        } else {
          state.servedRanges.push(span);
        }
      }
      const up = await fetch(upstream, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      res.writeHead(up.status, { 'Content-Type': 'application/json' }).end(await up.text());
    })().catch((e: unknown) => {
      res.writeHead(500).end(String(e));
    });
  });
  server.keepAliveTimeout = 500;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get servedRanges() {
      return state.servedRanges;
    },
    get refused() {
      return state.refused;
    },
    get injected() {
      return state.injected;
    },
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** A 127.0.0.1 URL where nothing listens (a server bound then closed). */
export async function deadRpcUrl(): Promise<string> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return `http://127.0.0.1:${port}`;
}

/**
 * Agent 1 on `network` minted to `owner` and rated `value` (integer, no decimals) once by `rater`,
 * at block 5: the two events a scanner hands the ingest, for tests that need a small live index.
 */
export function ownedAndRated(network: string, owner: string, rater: string, value: string): IndexEvent[] {
  const at = { network, logIndex: 0, blockNumber: 5, blockTime: new Date('2026-10-01T00:00:00Z') };
  return [
    {
      ...at,
      kind: 'transfer',
      txHash: `0x${network}01`,
      agentId: '1',
      from: '0x0000000000000000000000000000000000000000',
      to: owner,
    },
    {
      ...at,
      kind: 'feedback',
      txHash: `0x${network}02`,
      agentId: '1',
      rater,
      feedbackIndex: '1',
      valueRaw: value,
      valueDecimals: 0,
      value,
      tag1: '',
      tag2: '',
      endpoint: '',
      feedbackUri: '',
      feedbackHash: null,
    },
  ];
}
