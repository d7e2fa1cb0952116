/**
 * Exact repair from a census: for every agent and every (agent, client) pair the census found
 * different, the registries' logs that concern it, read with narrow topic filters over the whole
 * scanned range and written like any batch (every write is idempotent; the checkpoint does not
 * move). Narrow filters match few logs, so an endpoint that caps or truncates wide answers serves
 * them whole (and the scanner still checks them: ../indexer/log-caps.ts).
 *
 * - an agent whose Registered event, owner or URI differs: every identity event naming it
 *   (`Registered`, `URIUpdated`, `MetadataSet` by agentId; `Transfer` by tokenId);
 * - a pair whose feedback or revocations differ: `NewFeedback`, `FeedbackRevoked` and
 *   `ResponseAppended` by agentId and clientAddress.
 * Up to 100 agents share one identity filter (topic OR-lists); pairs share a reputation filter in
 * groups of at most 50 agents × 50 clients (the filter matches their cross product: other pairs'
 * logs come along and are written idempotently).
 */
import { pad, toHex, type Hex } from 'viem';
import type { ChainConfig } from '../chains.js';
import { TOPIC } from '../indexer/evm-abi.js';
import type { LogFilter } from '../indexer/log-caps.js';
import type { ScanBatch } from '../indexer/scanner.js';
import type { CensusDifference } from './differences.js';

/** Agents per identity filter, and agents × clients per reputation filter. */
const AGENTS_PER_FILTER = 100;
const PAIR_GROUP = 50;

const agentTopic = (id: string): Hex => pad(toHex(BigInt(id)), { size: 32 });
const addressTopic = (a: string): Hex => pad(a.toLowerCase() as Hex, { size: 32 });

/** The narrow filters that fetch every log the differences concern. */
export function repairFilters(chain: ChainConfig, diffs: readonly CensusDifference[]): LogFilter[] {
  const identity = (chain.identityRegistry ?? '').toLowerCase();
  const reputation = (chain.reputationRegistry ?? '').toLowerCase();
  const agents = [
    ...new Set(
      diffs
        .filter((d) => (d.what === 'registered' || d.what === 'owner' || d.what === 'uri') && d.agent_id)
        .map((d) => d.agent_id!),
    ),
  ];
  const filters: LogFilter[] = [];
  for (let i = 0; i < agents.length; i += AGENTS_PER_FILTER) {
    const ids = agents.slice(i, i + AGENTS_PER_FILTER).map(agentTopic);
    filters.push({
      address: identity,
      topics: [[TOPIC.Registered, TOPIC.URIUpdated, TOPIC.MetadataSet], ids],
    });
    filters.push({ address: identity, topics: [TOPIC.Transfer, null, null, ids] });
  }
  const pairs = [
    ...new Map(
      diffs
        .filter((d) => (d.what === 'feedback' || d.what === 'revoked') && d.agent_id && d.client)
        .map((d) => [`${d.agent_id}|${d.client!.toLowerCase()}`, { agent: d.agent_id!, client: d.client! }]),
    ).values(),
  ].sort((a, b) => a.agent.localeCompare(b.agent) || a.client.localeCompare(b.client));
  let groupAgents = new Set<string>();
  let groupClients = new Set<string>();
  const flush = () => {
    if (groupAgents.size === 0) return;
    filters.push({
      address: reputation,
      topics: [
        [TOPIC.NewFeedback, TOPIC.FeedbackRevoked, TOPIC.ResponseAppended],
        [...groupAgents].map(agentTopic),
        [...groupClients].map(addressTopic),
      ],
    });
    groupAgents = new Set();
    groupClients = new Set();
  };
  for (const p of pairs) {
    const agents2 = groupAgents.has(p.agent) ? groupAgents.size : groupAgents.size + 1;
    const clients2 = groupClients.has(p.client) ? groupClients.size : groupClients.size + 1;
    if (agents2 > PAIR_GROUP || clients2 > PAIR_GROUP) flush();
    groupAgents.add(p.agent);
    groupClients.add(p.client);
  }
  flush();
  return filters;
}

/** What the scanner offers a repair: the events of a narrow filter over a range. */
export interface NarrowLogSource {
  scanFiltered(filter: LogFilter, from: number, to: number, width?: number): AsyncIterable<ScanBatch>;
}

export interface RepairOutcome {
  /** Narrow filters asked, batches and events written. */
  filters: number;
  batches: number;
  events: number;
}

/**
 * Reads every log the differences concern over from..to (windows of `width` blocks, or the whole
 * span) and hands each batch to `write` (the caller's ingest, checkpoint untouched). Stops at a
 * batch boundary when `signal` is aborted.
 */
export async function repairFromCensus(
  source: NarrowLogSource,
  chain: ChainConfig,
  diffs: readonly CensusDifference[],
  range: { from: number; to: number; width?: number },
  write: (batch: ScanBatch) => Promise<void>,
  signal?: AbortSignal,
): Promise<RepairOutcome> {
  const out: RepairOutcome = { filters: 0, batches: 0, events: 0 };
  for (const filter of repairFilters(chain, diffs)) {
    out.filters++;
    for await (const batch of source.scanFiltered(filter, range.from, range.to, range.width)) {
      await write(batch);
      out.batches++;
      out.events += batch.events.length;
      if (signal?.aborted) return out;
    }
  }
  return out;
}
