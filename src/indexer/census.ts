/**
 * The completeness census of an EVM chain, after its pass, at the checkpoint block (so the chain
 * and the index describe the same moment). Cheap on a public RPC: about 2·log2(agents) calls to
 * count the minted agents (a binary search on `ownerOf`), then for a seeded sample of agents their
 * `ownerOf` and `tokenURI`, their `getClients`, each client's `getLastIndex` and (for short
 * histories, within a budget) `readFeedback`'s revoked flags; each compared with what the index
 * holds. A node that silently truncated or emptied an `eth_getLogs` answer shows up here: missing
 * Registered rows, a stale owner, missing clients or feedback, missing revocations.
 */
import { decodeFunctionResult, encodeFunctionData, parseAbi, type Abi, type Hex } from 'viem';
import type { ChainConfig } from '../chains.js';
import type { Queryable } from '../db/database.js';
import {
  countRegistered,
  indexedAgents,
  indexedPairs,
  type IndexedAgent,
  type IndexedPair,
} from '../store/census.js';
import type { EvmReads } from './evm-scanner.js';
import { sanitizeText } from './scanner.js';
import { seededRandom } from '../seeded-random.js';

const identityAbi = parseAbi([
  'function ownerOf(uint256 agentId) view returns (address)',
  'function tokenURI(uint256 agentId) view returns (string)',
]);
const reputationAbi = parseAbi([
  'function getClients(uint256 agentId) view returns (address[])',
  'function getLastIndex(uint256 agentId, address clientAddress) view returns (uint64)',
  'function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex) view returns (int128 value, uint8 valueDecimals, string tag1, string tag2, bool isRevoked)',
]);

export interface CensusOptions {
  /** Agents sampled (their owner, URI, clients and feedback counts are compared). */
  sample: number;
  /** Seed of the sample (the caller draws one when CENSUS_SEED is unset). */
  seed: number;
}

/** One thing the chain and the index disagree on. */
export interface CensusDifference {
  what: 'agents' | 'owner' | 'uri' | 'clients' | 'feedback' | 'revoked';
  agent_id?: string;
  client?: string;
  chain: string;
  index: string;
}

export interface CensusOutcome {
  state: 'ok' | 'mismatch';
  block: number;
  /** Agents minted on the chain at the block, and Registered rows of the index. */
  minted: number;
  registered: number;
  /** Agents and (agent, client) pairs compared. */
  sampledAgents: number;
  sampledPairs: number;
  /** RPC calls the census made. */
  calls: number;
  /** Every difference found, and the first MAX_KEPT of them. */
  differenceCount: number;
  differences: CensusDifference[];
}

/** Differences kept in the record (`differenceCount` counts them all). */
const MAX_KEPT = 20;
/** Clients per sampled agent whose feedback count is compared (a sample of them, when more). */
const CLIENTS_PER_AGENT = 16;
/** readFeedback calls per census, per sampled agent. */
const REVOKED_BUDGET_PER_AGENT = 4;
/** Histories up to this length get their revoked flags compared. */
const SHORT_HISTORY = 8;

/** `k` distinct integers of [first, first + n), drawn with `rand` (all of them when n ≤ k). */
export function sampleIds(first: number, n: number, k: number, rand: () => number): number[] {
  if (n <= k) return Array.from({ length: n }, (_, i) => first + i);
  const picked = new Set<number>();
  while (picked.size < k) picked.add(first + Math.floor(rand() * n));
  return [...picked].sort((a, b) => a - b);
}

interface Ctx {
  reads: EvmReads;
  identity: Hex;
  reputation: Hex;
  block: number;
  calls: number;
}

/** One eth_call at the census block, decoded; null when it reverts or answers nothing. */
async function ethCall(c: Ctx, to: Hex, abi: Abi, fn: string, args: readonly unknown[]): Promise<unknown> {
  c.calls++;
  const out = await c.reads.call(to, encodeFunctionData({ abi, functionName: fn, args }), c.block);
  if (out === null || out === '0x') return null;
  return decodeFunctionResult({ abi, functionName: fn, data: out });
}

const call = (c: Ctx, fn: 'ownerOf' | 'tokenURI', id: bigint) =>
  ethCall(c, c.identity, identityAbi, fn, [id]);
const repCall = (c: Ctx, fn: 'getClients' | 'getLastIndex' | 'readFeedback', args: readonly unknown[]) =>
  ethCall(c, c.reputation, reputationAbi, fn, args);

/** The current owner of an agent, or null when it does not exist (ownerOf reverts or answers zero). */
async function ownerOf(c: Ctx, id: bigint): Promise<string | null> {
  const o = (await call(c, 'ownerOf', id)) as string | null;
  return o === null || /^0x0{40}$/i.test(o) ? null : o.toLowerCase();
}

/**
 * Agents minted at the block: ids are consecutive from 0 (or 1), so the count is the first id
 * without an owner, found by doubling then bisecting (about 2·log2(n) calls).
 */
export async function mintedAgents(c: Ctx): Promise<{ first: number; count: number }> {
  let first = 0;
  if ((await ownerOf(c, 0n)) === null) {
    if ((await ownerOf(c, 1n)) === null) return { first: 0, count: 0 };
    first = 1;
  }
  let lo = first; // exists
  let step = 1;
  let hi = first + step; // unknown
  while ((await ownerOf(c, BigInt(hi))) !== null) {
    lo = hi;
    step *= 2;
    hi = first + step;
  }
  // lo exists, hi does not
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if ((await ownerOf(c, BigInt(mid))) !== null) lo = mid;
    else hi = mid;
  }
  return { first, count: hi - first };
}

/** What the index holds for one sampled agent: its row (absent: not indexed) and its raters. */
interface IndexedSide {
  row: IndexedAgent | undefined;
  pairs: Map<string, IndexedPair>;
}

/**
 * The index side of every sampled agent, read before any RPC call: two queries for the whole
 * sample (agents once, (agent, rater) pairs once), whatever its size.
 */
async function readIndexedSide(
  db: Queryable,
  network: string,
  ids: number[],
  block: number,
): Promise<Map<string, IndexedSide>> {
  const agents = ids.map(String);
  const side = new Map<string, IndexedSide>(agents.map((a) => [a, { row: undefined, pairs: new Map() }]));
  if (agents.length === 0) return side;
  for (const row of await indexedAgents(db, network, agents)) side.get(row.agent_id)!.row = row;
  for (const p of await indexedPairs(db, network, agents, block)) side.get(p.agent_id)!.pairs.set(p.rater, p);
  return side;
}

/** Compares one sampled agent with what the index holds for it; returns the pairs compared. */
async function compareAgent(
  c: Ctx,
  indexed: IndexedSide,
  id: number,
  diffs: CensusDifference[],
  rand: () => number,
): Promise<number> {
  const agent = String(id);
  const { row, pairs } = indexed;
  const owner = await ownerOf(c, BigInt(id));
  if ((row?.owner ?? null) !== owner)
    diffs.push({ what: 'owner', agent_id: agent, chain: owner ?? 'none', index: row?.owner ?? 'none' });
  const uri = (await call(c, 'tokenURI', BigInt(id))) as string | null;
  if (uri !== null && (row?.agent_uri ?? '') !== sanitizeText(uri))
    diffs.push({
      what: 'uri',
      agent_id: agent,
      chain: uri.slice(0, 200),
      index: (row?.agent_uri ?? 'none').slice(0, 200),
    });

  const clients = (((await repCall(c, 'getClients', [BigInt(id)])) as readonly string[] | null) ?? []).map(
    (a) => a.toLowerCase(),
  );
  const missing = clients.filter((a) => !pairs.has(a));
  const extra = [...pairs.keys()].filter((a) => !clients.includes(a));
  if (missing.length || extra.length)
    diffs.push({
      what: 'clients',
      agent_id: agent,
      chain: `${clients.length} clients${missing.length ? `; not indexed: ${missing.slice(0, 5).join(', ')}` : ''}`,
      index: `${pairs.size} raters${extra.length ? `; not clients on chain: ${extra.slice(0, 5).join(', ')}` : ''}`,
    });
  let budget = REVOKED_BUDGET_PER_AGENT;
  // One getLastIndex call per client: an agent with thousands of clients has a sample of them.
  const compared = sampleIds(0, clients.length, CLIENTS_PER_AGENT, rand).map((i) => clients[i]!);
  for (const client of compared) {
    const last = Number(((await repCall(c, 'getLastIndex', [BigInt(id), client])) as bigint | null) ?? 0n);
    const held = pairs.get(client);
    if ((held?.n ?? 0) !== last) {
      diffs.push({
        what: 'feedback',
        agent_id: agent,
        client,
        chain: String(last),
        index: String(held?.n ?? 0),
      });
      continue;
    }
    if (last === 0 || last > SHORT_HISTORY || budget < last) continue;
    budget -= last;
    let revoked = 0;
    for (let i = 1; i <= last; i++) {
      const fb = (await repCall(c, 'readFeedback', [BigInt(id), client, BigInt(i)])) as
        readonly unknown[] | null;
      if (fb?.[4] === true) revoked++;
    }
    if ((held?.revoked ?? 0) !== revoked)
      diffs.push({
        what: 'revoked',
        agent_id: agent,
        client,
        chain: String(revoked),
        index: String(held?.revoked ?? 0),
      });
  }
  return clients.length;
}

/** Runs the census of an EVM chain at `block` (the checkpoint). Throws on RPC failures. */
export async function runCensus(
  reads: EvmReads,
  db: Queryable,
  chain: ChainConfig,
  block: number,
  o: CensusOptions,
): Promise<CensusOutcome> {
  const c: Ctx = {
    reads,
    identity: (chain.identityRegistry ?? '').toLowerCase() as Hex,
    reputation: (chain.reputationRegistry ?? '').toLowerCase() as Hex,
    block,
    calls: 0,
  };
  const diffs: CensusDifference[] = [];
  const minted = await mintedAgents(c);
  const registered = await countRegistered(db, chain.network, block);
  if (minted.count !== registered)
    diffs.push({ what: 'agents', chain: String(minted.count), index: String(registered) });
  const rand = seededRandom(o.seed);
  const ids = sampleIds(minted.first, minted.count, Math.max(0, o.sample), rand);
  const indexed = await readIndexedSide(db, chain.network, ids, block);
  let pairs = 0;
  for (const id of ids) pairs += await compareAgent(c, indexed.get(String(id))!, id, diffs, rand);
  return {
    state: diffs.length === 0 ? 'ok' : 'mismatch',
    block,
    minted: minted.count,
    registered,
    sampledAgents: ids.length,
    sampledPairs: pairs,
    calls: c.calls,
    differenceCount: diffs.length,
    differences: diffs.slice(0, MAX_KEPT),
  };
}

/** The census outcome as stored (JSON text): the figures and the first differences. */
export function censusDetail(r: CensusOutcome, rescans = 0): string {
  return JSON.stringify({
    minted: r.minted,
    registered: r.registered,
    sampled_agents: r.sampledAgents,
    sampled_pairs: r.sampledPairs,
    calls: r.calls,
    rescans,
    difference_count: r.differenceCount,
    differences: r.differences,
  });
}
