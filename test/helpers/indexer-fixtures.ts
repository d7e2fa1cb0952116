/**
 * Shared fixtures of the indexer tests: a local chain with the registries deployed, a Config that
 * points chosen networks at local nodes (every other chain disabled), an RPC address where nothing
 * listens, a quiet logger and a dump of every indexed row. The JSON-RPC proxy that spoils a node's
 * answers (wide getLogs ranges refused or held, 429s, 5xx, …) is test/helpers/rpc-proxy.ts.
 */
import { createServer } from 'node:http';
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
