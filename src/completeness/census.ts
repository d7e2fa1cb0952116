/**
 * The completeness census of an EVM chain at one block (the checkpoint, so the chain and the index
 * describe the same moment): the registries' own view of every agent (or of a sample, or of the
 * agents a repair touched) against what the index holds, and the exact list of what differs.
 *
 * Per agent: `ownerOf`, `tokenURI` and `getClients` (one round of reads); per (agent, client) of
 * the chain: `getLastIndex` (feedback given, revoked or not; a second round); per agent, the
 * revocations: `getSummary(agent, clients, "", "")` counts the feedback not revoked (a third round,
 * its client lists cut so that one call walks at most SUMMARY_FEEDBACK feedback), and where a
 * group's count differs from the index, `getSummary(agent, [client], "", "")` per pair (a fourth).
 * A pair with more feedback than one call may walk has its revocations counted from its own
 * `FeedbackRevoked` logs (the caller's narrow log reader). The minted agents are counted first
 * (ids are consecutive: the first id without an owner, found with up to 64 probes per read).
 *
 * Reads go through ./batch-reads.ts (Multicall3 where the chain has it, else plain eth_calls).
 * The index side is read per chunk of CHUNK agents (two queries: their rows, their (agent, rater)
 * counts), so memory stays bounded at any size. A census function that reverts (a registry that
 * lacks it) makes the census `unchecked`, naming the function, never a mismatch by itself.
 */
import type { Hex } from 'viem';
import type { ChainConfig } from '../chains.js';
import type { Queryable } from '../db/database.js';
import { sanitizeText } from '../indexer/scanner.js';
import type { EvmReads } from '../indexer/evm-scanner.js';
import { seededRandom } from '../seeded-random.js';
import {
  countRegistered,
  indexedAgents,
  indexedPairs,
  type IndexedAgent,
  type IndexedPair,
} from '../store/census.js';
import {
  addressWord,
  decodeAddress,
  decodeAddresses,
  decodeString,
  decodeUint,
  encodeGetSummary,
  encodeStatic,
  SELECTOR,
  uintWord,
} from './abi-codec.js';
import {
  batchReader,
  type BatchMethod,
  type BatchReader,
  type BatchReaderOptions,
  type Read,
} from './batch-reads.js';
import type { CensusDifference } from './differences.js';

/** Which agents a census checks. */
export type CensusScope = 'full' | 'sample' | 'recheck';

export interface CensusOptions {
  scope: CensusScope;
  /** sample: how many agents, drawn with `seed`; recheck: these agent ids. */
  sample?: number;
  seed?: number;
  ids?: readonly string[];
  /** A reader to reuse (a recheck reads the way its census did); else chosen at the block. */
  reader?: BatchReader;
  batch?: Partial<BatchReaderOptions>;
  /** Revocations of one pair counted from its FeedbackRevoked logs (pairs too long for getSummary). */
  revocationLogs?: (agentId: string, client: string) => Promise<number>;
  /**
   * Without Multicall3 every read is a request: a full census whose plain reads would pass this
   * (about 5 per minted agent, plus the index's ratings) checks the sample instead (`note` says so).
   */
  plainFullMax?: { reads: number; ratings: number };
}

/** A census function that reverted, and the first agent it reverted for. */
export interface RevertedRead {
  fn: string;
  agent_id: string;
}

export interface CensusOutcome {
  state: 'ok' | 'mismatch' | 'unchecked';
  scope: CensusScope;
  method: BatchMethod;
  block: number;
  /** Agents minted on the chain at the block (ids first..first+minted−1), Registered rows of the index. */
  minted: number;
  first: number;
  registered: number;
  /** Agents and (agent, client) pairs compared. */
  agentsChecked: number;
  pairsChecked: number;
  /** eth_call requests, reads inside them, getLogs-counted pairs. */
  requests: number;
  reads: number;
  logCountedPairs: number;
  /** Every difference found. */
  differences: CensusDifference[];
  reverted: RevertedRead[];
  /** Why a full census asked for checked a sample instead (no Multicall3 and too many plain calls). */
  note?: string;
}

/** Agents whose index side is read and checked together. */
const CHUNK = 10_000;
/** Feedback one getSummary call may walk (about 4 k gas each: ~16 M gas at most). */
const SUMMARY_FEEDBACK = 4_000;
/** Probes of the minted count per Multicall3 read (a binary search over plain eth_calls). */
const MINTED_PROBES = 64;

// Gas estimates for packing, from measured cold costs inside aggregate3 (ownerOf 5.5 k, a short
// tokenURI 6.5 k, getClients of 5 clients 17 k, getLastIndex 6 k, getSummary of 5 pairs 44 k) plus
// about a third; a read that lacked gas anyway is asked again in a smaller batch.
const GAS_CALL = 8_000;
const GAS_SLOT = 2_500;
const GAS_FEEDBACK = 6_000;

const zeroAddress = /^0x0{40}$/i;

interface Ctx {
  reader: BatchReader;
  identity: Hex;
  reputation: Hex;
  network: string;
  block: number;
  db: Queryable;
  diffs: CensusDifference[];
  reverted: Map<string, RevertedRead>;
  pairs: number;
  logCounted: number;
  revocationLogs?: (agentId: string, client: string) => Promise<number>;
}

const idRead = (
  c: Ctx,
  fn: 'ownerOf' | 'tokenURI',
  id: number | string,
  gas = GAS_CALL + GAS_SLOT,
): Read => ({
  to: c.identity,
  data: encodeStatic(SELECTOR[fn], uintWord(id)),
  gas,
});

function revertedFor(c: Ctx, fn: string, agent: string): void {
  if (!c.reverted.has(fn)) c.reverted.set(fn, { fn, agent_id: agent });
}

// ------------------------------------------------------------------ minted agents

/** Which of `ids` have an owner (ownerOf answers a non-zero address). */
async function owned(c: Ctx, ids: readonly number[]): Promise<boolean[]> {
  const out = await c.reader.read(ids.map((id) => ({ ...idRead(c, 'ownerOf', id), final: true })));
  return out.map((d) => {
    const o = decodeAddress(d);
    return o !== null && !zeroAddress.test(o);
  });
}

/**
 * Agents minted at the block: ids are consecutive from 0 (or 1), so the count is the first id
 * without an owner: a doubling search, then probes spread over the interval left (64 per
 * Multicall3 read, one per plain eth_call: a binary search).
 */
async function mintedAgents(c: Ctx): Promise<{ first: number; count: number }> {
  const [o0, o1] = await owned(c, [0, 1]);
  if (!o0 && !o1) return { first: 0, count: 0 };
  const first = o0 ? 0 : 1;
  const width = c.reader.method === 'multicall3' ? MINTED_PROBES : 1;
  // lo has an owner, hi has none.
  let lo = first;
  let hi: number;
  if (width > 1) {
    const steps = Array.from({ length: 48 }, (_, k) => first + 2 ** k);
    const have = await owned(c, steps);
    const k = have.indexOf(false);
    hi = steps[k]!;
    if (k > 0) lo = steps[k - 1]!;
  } else {
    let step = 1;
    hi = first + step;
    while ((await owned(c, [hi]))[0]) {
      lo = hi;
      step *= 2;
      hi = first + step;
    }
  }
  while (hi - lo > 1) {
    const n = Math.min(width, hi - lo - 1);
    const probes = Array.from({ length: n }, (_, i) => lo + Math.floor(((i + 1) * (hi - lo)) / (n + 1)));
    const have = await owned(c, probes);
    for (const [i, p] of probes.entries()) {
      if (have[i]) lo = Math.max(lo, p);
      else {
        hi = Math.min(hi, p);
        break;
      }
    }
  }
  return { first, count: hi - first };
}

/** `k` distinct integers of [first, first + n), drawn with `rand` (all of them when n ≤ k). */
export function sampleIds(first: number, n: number, k: number, rand: () => number): number[] {
  if (n <= k) return Array.from({ length: n }, (_, i) => first + i);
  const picked = new Set<number>();
  while (picked.size < k) picked.add(first + Math.floor(rand() * n));
  return [...picked].sort((a, b) => a - b);
}

// ------------------------------------------------------------------ one chunk of agents

interface AgentView {
  id: string;
  row: IndexedAgent | undefined;
  pairs: Map<string, IndexedPair>;
  /** The chain's clients (null: getClients reverted). */
  clients: string[] | null;
  /** The chain's getLastIndex per client. */
  last: Map<string, number>;
}

/** Round one: owner, URI and clients of each agent, compared with its row. */
async function identityRound(c: Ctx, views: AgentView[]): Promise<void> {
  const reads: Read[] = [];
  for (const v of views) {
    const id = v.id;
    const uriSlots = Math.ceil(((v.row?.agent_uri?.length ?? 64) + 1) / 32) + 1;
    reads.push(idRead(c, 'ownerOf', id));
    reads.push(idRead(c, 'tokenURI', id, GAS_CALL + GAS_SLOT * uriSlots));
    reads.push({
      to: c.reputation,
      data: encodeStatic(SELECTOR.getClients, uintWord(id)),
      gas: GAS_CALL + GAS_SLOT * (v.pairs.size + 2),
    });
  }
  const out = await c.reader.read(reads);
  for (const [k, v] of views.entries()) {
    const o = decodeAddress(out[3 * k]!);
    const owner = o === null || zeroAddress.test(o) ? null : o;
    if (v.row?.registered !== true)
      c.diffs.push({ what: 'registered', agent_id: v.id, chain: 'minted', index: 'no Registered event' });
    if ((v.row?.owner ?? null) !== owner)
      c.diffs.push({ what: 'owner', agent_id: v.id, chain: owner ?? 'none', index: v.row?.owner ?? 'none' });
    const uri = decodeString(out[3 * k + 1]!);
    if (uri !== null && (v.row?.agent_uri ?? '') !== sanitizeText(uri))
      c.diffs.push({
        what: 'uri',
        agent_id: v.id,
        chain: uri.slice(0, 200),
        index: (v.row?.agent_uri ?? 'none').slice(0, 200),
      });
    const clients = decodeAddresses(out[3 * k + 2]!);
    if (clients === null) revertedFor(c, 'getClients', v.id);
    v.clients = clients;
  }
}

/** Round two: getLastIndex of every (agent, client) of the chain, against the ratings held. */
async function feedbackRound(c: Ctx, views: AgentView[]): Promise<void> {
  const asked: { v: AgentView; client: string }[] = [];
  for (const v of views) for (const client of v.clients ?? []) asked.push({ v, client });
  const out = await c.reader.read(
    asked.map(({ v, client }) => ({
      to: c.reputation,
      data: encodeStatic(SELECTOR.getLastIndex, uintWord(v.id), addressWord(client)),
      gas: GAS_CALL + GAS_SLOT,
    })),
  );
  for (const [k, { v, client }] of asked.entries()) {
    const last = decodeUint(out[k]!);
    if (last === null) {
      revertedFor(c, 'getLastIndex', v.id);
      continue;
    }
    v.last.set(client, Number(last));
  }
  for (const v of views) {
    if (v.clients === null) continue;
    c.pairs += v.clients.length;
    for (const client of v.clients) {
      const chain = v.last.get(client);
      const held = v.pairs.get(client)?.n ?? 0;
      if (chain !== undefined && chain !== held)
        c.diffs.push({ what: 'feedback', agent_id: v.id, client, chain: String(chain), index: String(held) });
    }
    // A rater the index holds that is no client on the chain: feedback the chain does not have.
    const onChain = new Set(v.clients);
    for (const [rater, p] of v.pairs)
      if (!onChain.has(rater))
        c.diffs.push({ what: 'feedback', agent_id: v.id, client: rater, chain: '0', index: String(p.n) });
  }
}

const summaryRead = (c: Ctx, id: string, clients: readonly string[], feedback: number): Read => ({
  to: c.reputation,
  data: encodeGetSummary(id, clients),
  gas: GAS_CALL + GAS_SLOT * clients.length + GAS_FEEDBACK * feedback,
});

/** Round three (and four): the feedback not revoked, per group of clients, then per pair where a group differs. */
async function revocationRound(c: Ctx, views: AgentView[]): Promise<void> {
  interface Group {
    v: AgentView;
    clients: string[];
  }
  const groups: Group[] = [];
  const long: { v: AgentView; client: string }[] = [];
  for (const v of views) {
    let cur: Group | null = null;
    let walked = 0;
    for (const client of v.clients ?? []) {
      const last = v.last.get(client) ?? 0;
      // Only pairs whose count agrees (a short pair is a difference already; repaired, then checked again).
      if (last === 0 || last !== (v.pairs.get(client)?.n ?? 0)) continue;
      if (last > SUMMARY_FEEDBACK) {
        long.push({ v, client });
        continue;
      }
      if (!cur || walked + last > SUMMARY_FEEDBACK) {
        cur = { v, clients: [] };
        groups.push(cur);
        walked = 0;
      }
      cur.clients.push(client);
      walked += last;
    }
  }
  const walkedOf = (g: Group) => g.clients.reduce((n, cl) => n + (g.v.last.get(cl) ?? 0), 0);
  const notRevoked = (v: AgentView, client: string) => {
    const p = v.pairs.get(client);
    return (p?.n ?? 0) - (p?.revoked ?? 0);
  };
  const out = await c.reader.read(groups.map((g) => summaryRead(c, g.v.id, g.clients, walkedOf(g))));
  const drill: { v: AgentView; client: string }[] = [];
  for (const [k, g] of groups.entries()) {
    const count = decodeUint(out[k]!);
    if (count === null) {
      revertedFor(c, 'getSummary', g.v.id);
      continue;
    }
    const held = g.clients.reduce((n, cl) => n + notRevoked(g.v, cl), 0);
    if (Number(count) === held) continue;
    if (g.clients.length === 1) {
      pushRevoked(c, g.v, g.clients[0]!, Number(count));
      continue;
    }
    for (const client of g.clients) drill.push({ v: g.v, client });
  }
  if (drill.length > 0) {
    const per = await c.reader.read(
      drill.map(({ v, client }) => summaryRead(c, v.id, [client], v.last.get(client) ?? 0)),
    );
    for (const [k, { v, client }] of drill.entries()) {
      const count = decodeUint(per[k]!);
      if (count === null) revertedFor(c, 'getSummary', v.id);
      else if (Number(count) !== notRevoked(v, client)) pushRevoked(c, v, client, Number(count));
    }
  }
  for (const { v, client } of long) {
    if (!c.revocationLogs) {
      revertedFor(c, 'getSummary (history too long, no log reader)', v.id);
      continue;
    }
    c.logCounted++;
    const revoked = await c.revocationLogs(v.id, client);
    const held = v.pairs.get(client)?.revoked ?? 0;
    if (revoked !== held)
      c.diffs.push({ what: 'revoked', agent_id: v.id, client, chain: String(revoked), index: String(held) });
  }
}

function pushRevoked(c: Ctx, v: AgentView, client: string, notRevokedOnChain: number): void {
  const last = v.last.get(client) ?? 0;
  c.diffs.push({
    what: 'revoked',
    agent_id: v.id,
    client,
    chain: String(last - notRevokedOnChain),
    index: String(v.pairs.get(client)?.revoked ?? 0),
  });
}

/** Checks one chunk of agents: their index side in two queries, then the rounds of reads. */
async function checkChunk(c: Ctx, ids: readonly string[]): Promise<void> {
  const views = new Map<string, AgentView>(
    ids.map((id) => [id, { id, row: undefined, pairs: new Map(), clients: null, last: new Map() }]),
  );
  for (const row of await indexedAgents(c.db, c.network, ids, c.block)) views.get(row.agent_id)!.row = row;
  for (const p of await indexedPairs(c.db, c.network, ids, c.block))
    views.get(p.agent_id)!.pairs.set(p.rater, p);
  const list = [...views.values()];
  await identityRound(c, list);
  await feedbackRound(c, list);
  await revocationRound(c, list);
}

// ------------------------------------------------------------------ the census

/** Runs a census of an EVM chain at `block`. Throws when the RPC fails (the caller records unchecked). */
export async function runCensus(
  reads: EvmReads,
  db: Queryable,
  chain: ChainConfig,
  block: number,
  o: CensusOptions,
): Promise<CensusOutcome> {
  const reader = o.reader ?? (await batchReader(reads, block, o.batch));
  const requests0 = reader.requests;
  const reads0 = reader.reads;
  const c: Ctx = {
    reader,
    identity: (chain.identityRegistry ?? '').toLowerCase() as Hex,
    reputation: (chain.reputationRegistry ?? '').toLowerCase() as Hex,
    network: chain.network,
    block,
    db,
    diffs: [],
    reverted: new Map(),
    pairs: 0,
    logCounted: 0,
    ...(o.revocationLogs ? { revocationLogs: o.revocationLogs } : {}),
  };
  const minted = await mintedAgents(c);
  const registered = await countRegistered(db, chain.network, block);
  if (minted.count !== registered)
    c.diffs.push({ what: 'agents', chain: String(minted.count), index: String(registered) });
  let scope = o.scope;
  let note: string | undefined;
  if (scope === 'full' && reader.method === 'eth_call' && o.plainFullMax) {
    const reads = 5 * minted.count + o.plainFullMax.ratings;
    if (reads > o.plainFullMax.reads) {
      scope = 'sample';
      note = `no Multicall3 at block ${block} and about ${reads} plain eth_calls for a full census (more than ${o.plainFullMax.reads}): a sample of ${o.sample ?? 16} agents instead`;
    }
  }
  let ids: string[];
  if (scope === 'recheck') ids = [...new Set(o.ids ?? [])];
  else if (scope === 'sample')
    ids = sampleIds(minted.first, minted.count, Math.max(0, o.sample ?? 16), seededRandom(o.seed ?? 0)).map(
      String,
    );
  else ids = [];
  const all = scope === 'full';
  const total = all ? minted.count : ids.length;
  for (let start = 0; start < total; start += CHUNK) {
    const chunk = all
      ? Array.from({ length: Math.min(CHUNK, total - start) }, (_, i) => String(minted.first + start + i))
      : ids.slice(start, start + CHUNK);
    await checkChunk(c, chunk);
  }
  const reverted = [...c.reverted.values()];
  return {
    state: c.diffs.length > 0 ? 'mismatch' : reverted.length > 0 ? 'unchecked' : 'ok',
    scope,
    method: reader.method,
    block,
    minted: minted.count,
    first: minted.first,
    registered,
    agentsChecked: total,
    pairsChecked: c.pairs,
    requests: reader.requests - requests0,
    reads: reader.reads - reads0,
    logCountedPairs: c.logCounted,
    differences: c.diffs,
    reverted,
    ...(note ? { note } : {}),
  };
}
