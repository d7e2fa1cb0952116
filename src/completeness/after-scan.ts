/**
 * What follows the scan of an EVM chain: the warning for registries that never emitted anything,
 * then the census at the checkpoint block, the exact repair of what it found different and a
 * census of those agents again, up to three rounds; the outcome stored on the chain's row with
 * every difference (GET /health, `census_differences`), logged and counted (GET /metrics).
 *
 * Which census (docs/COMPLETENESS.md): FULL (every minted agent) when CENSUS_FULL_EVERY says so
 * (default: every pass), and always while the last census was not a full one that agreed (a
 * mismatch, unchecked, never ran): a chain left degraded is censused in full and repaired on the
 * next pass, whatever the endpoint did before. Between full censuses, a SAMPLE (CENSUS_SAMPLE
 * agents); a sample that disagrees is followed by a full census in the same pass. Without
 * Multicall3 on the chain the census reads with plain eth_calls, and a full census whose plain
 * reads would pass PLAIN_FULL_MAX_READS is replaced by the sample (the health record says which).
 *
 * Repair rounds: the narrow filters of ./repair.ts over the whole scanned range, in windows of
 * the whole span (round 1), then 8 and 64 times narrower than the widest window the scan served
 * (rounds 2 and 3: an endpoint that loses logs in wide windows whatever their count).
 */
import { pad, toHex, type Hex } from 'viem';
import type { ChainConfig } from '../chains.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import type { EvmScanner } from '../indexer/evm-scanner.js';
import { TOPIC } from '../indexer/evm-abi.js';
import { describeError } from '../indexer/rpc-retry.js';
import type { ScanBatch, ScannerLogger } from '../indexer/scanner.js';
import { redactUrls } from '../log.js';
import { recordCensus, recordCensusRepair } from '../metrics.js';
import {
  countCensusPass,
  recordCensus as storeCensus,
  recordConfigWarning,
  storeCensusDifferences,
} from '../store/census.js';
import { readChainPassState, type ChainPassState } from '../store/chain-state.js';
import { batchReader, type BatchReader } from './batch-reads.js';
import { runCensus, type CensusOutcome } from './census.js';
import { agentsOf, countByKind, SHOWN_DIFFERENCES } from './differences.js';
import { repairFromCensus } from './repair.js';

/** Repair rounds after a mismatch (windows: the whole span, then 8 and 64 times narrower). */
const REPAIR_ROUNDS = 3;
/** Plain eth_calls (no Multicall3) a full census may cost at most; above, the sample runs. */
export const PLAIN_FULL_MAX_READS = 5_000;

export interface CensusResult {
  state: 'ok' | 'mismatch' | 'unchecked';
  /** full, sample (no full census this pass or none affordable). */
  scope?: 'full' | 'sample';
  method?: 'multicall3' | 'eth_call';
  /** Repair rounds, and the events they wrote. */
  repairs: number;
  repaired: number;
  differences: number;
  /** eth_call requests of the census (its rechecks included). */
  calls: number;
  error?: string;
}

export interface AfterScanContext {
  db: Database;
  chain: ChainConfig;
  scanner: EvmScanner;
  config: Config;
  log: ScannerLogger;
  now: () => Date;
  /** Writes a repair's batch (the pass's ingest; the checkpoint does not move). */
  write: (batch: ScanBatch) => Promise<void>;
  signal?: AbortSignal | undefined;
}

/** The census record's detail (JSON text): the figures, the counts per kind and the first differences. */
export function censusDetail(o: CensusOutcome, repairs: number, repaired: number, note?: string): string {
  return JSON.stringify({
    scope: o.scope,
    method: o.method,
    minted: o.minted,
    registered: o.registered,
    agents_checked: o.agentsChecked,
    pairs_checked: o.pairsChecked,
    calls: o.requests,
    reads: o.reads,
    ...(o.logCountedPairs > 0 ? { log_counted_pairs: o.logCountedPairs } : {}),
    repairs,
    repaired_events: repaired,
    difference_count: o.differences.length,
    differences_by_kind: countByKind(o.differences),
    differences: o.differences.slice(0, SHOWN_DIFFERENCES),
    ...(o.reverted.length > 0
      ? {
          error: `census function reverted: ${o.reverted.map((r) => `${r.fn} (agent ${r.agent_id})`).join(', ')}`,
          reverted: o.reverted,
        }
      : {}),
    ...(note ? { note } : {}),
  });
}

/** A recheck's outcome folded into the census it follows (it checked every agent that differed). */
function merge(full: CensusOutcome, recheck: CensusOutcome): CensusOutcome {
  const reverted = [...full.reverted];
  for (const r of recheck.reverted) if (!reverted.some((x) => x.fn === r.fn)) reverted.push(r);
  return {
    ...full,
    minted: recheck.minted,
    registered: recheck.registered,
    requests: full.requests + recheck.requests,
    reads: full.reads + recheck.reads,
    logCountedPairs: full.logCountedPairs + recheck.logCountedPairs,
    differences: recheck.differences,
    reverted,
    state: recheck.differences.length > 0 ? 'mismatch' : reverted.length > 0 ? 'unchecked' : 'ok',
  };
}

/** Revocations of one pair counted from its FeedbackRevoked logs over the scanned range. */
function revocationLogs(scanner: EvmScanner, chain: ChainConfig, from: number, to: number) {
  return async (agentId: string, client: string): Promise<number> => {
    const filter = {
      address: (chain.reputationRegistry ?? '').toLowerCase(),
      topics: [
        TOPIC.FeedbackRevoked,
        pad(toHex(BigInt(agentId)), { size: 32 }),
        pad(client.toLowerCase() as Hex, { size: 32 }),
      ],
    };
    const indexes = new Set<string>();
    for await (const b of scanner.scanFiltered(filter, from, to))
      for (const e of b.events) if (e.kind === 'revocation') indexes.add(e.feedbackIndex);
    return indexes.size;
  };
}

/** A chain whose registries never emitted an event over a scanned range gets a loud warning. */
async function warnWithoutEvents(
  ctx: AfterScanContext,
  counts: ChainPassState['events'],
  lower: number,
  block: number,
): Promise<void> {
  const net = ctx.chain.network;
  const warning =
    counts.agents === 0 && counts.ratings === 0
      ? `no agent and no feedback from the configured registries in blocks ${lower}..${block}: if an address is an ` +
        `implementation behind a proxy, or startBlock is after the activity, the index stays empty; configure the proxies' addresses`
      : null;
  if (warning) ctx.log.warn(`[index] ${net}: ${warning}`, { chain: net });
  await recordConfigWarning(ctx.db, net, warning);
}

/**
 * The census (and its repairs) after a chain's scan; its outcome, or undefined when the chain has
 * no checkpoint yet or CENSUS=0. A census that cannot run (the RPC fails) leaves the pass a
 * success: `unchecked` with the error, except after a standing mismatch, which stays on the row
 * (GET /health stays degraded; the next pass runs a full census and repairs).
 */
export async function censusAfterScan(ctx: AfterScanContext): Promise<CensusResult | undefined> {
  const { db, chain, scanner, log } = ctx;
  const net = chain.network;
  // Read again after the scan (it moved the checkpoint, the lowest scanned block, the counters).
  const position = await readChainPassState(db, net);
  const block = position.lastScannedBlock;
  if (block === null) return undefined;
  const lower = position.scannedFrom ?? position.startBlock ?? chain.startBlock ?? 0;
  await warnWithoutEvents(ctx, position.events, lower, block);
  const cfg = ctx.config.census ?? { enabled: true, sample: 16, seed: null };
  if (!cfg.enabled) return undefined;
  const previous = position.census;
  const fullEvery = Math.max(1, cfg.fullEvery ?? 1);
  // A chain whose last census is not `ok` (a mismatch, unchecked, never ran) gets a full one:
  // `ok` after a sample means the full census before it agreed (any disagreement ran a full one).
  const wantFull =
    fullEvery === 1 ||
    previous.state !== 'ok' ||
    previous.fullBlock === null ||
    previous.passesSinceFull + 1 >= fullEvery;
  const seed = cfg.seed ?? Math.floor(Math.random() * 2 ** 32);
  let outcome: CensusOutcome;
  let reader: BatchReader | undefined;
  let repairs = 0;
  let repaired = 0;
  try {
    reader = await batchReader(scanner.reads, block, { maxCalls: cfg.batch ?? 1_000 });
    const common = {
      reader,
      revocationLogs: revocationLogs(scanner, chain, lower, block),
      // Without Multicall3 every read is a request: a full census of a big chain is not affordable.
      plainFullMax: { reads: PLAIN_FULL_MAX_READS, ratings: position.events.ratings },
    };
    const census = (scope: 'full' | 'sample') =>
      runCensus(scanner.reads, db, chain, block, { ...common, scope, sample: cfg.sample, seed });
    outcome = await census(wantFull ? 'full' : 'sample');
    // (a sample that stands in for an unaffordable full census has nothing bigger to call)
    if (outcome.scope === 'sample' && outcome.state === 'mismatch' && !outcome.note) {
      log.warn(`[index] ${net}: the census sample disagrees at block ${block}: a full census follows`, {
        chain: net,
        block,
      });
      outcome = await census('full');
    }
    const widest = Math.max(1, scanner.stats.widest || block - lower + 1);
    const widths = [undefined, Math.max(1, Math.floor(widest / 8)), Math.max(1, Math.floor(widest / 64))];
    while (outcome.state === 'mismatch' && repairs < REPAIR_ROUNDS) {
      const agents = agentsOf(outcome.differences);
      if (agents.length === 0) break; // only the chain's count differs: no agent to repair
      const width = widths[repairs];
      repairs++;
      recordCensusRepair(net);
      log.warn(
        `[index] ${net}: census mismatch at block ${block} (${outcome.differences.length} differences: ${JSON.stringify(countByKind(outcome.differences))}, first: ${JSON.stringify(outcome.differences[0])}); ` +
          `repair ${repairs}: the logs of ${agents.length} agents over ${lower}..${block}${width ? ` in windows of ${width} blocks` : ''}`,
        {
          chain: net,
          block,
          differences: outcome.differences.slice(0, 5),
          repair: repairs,
          agents: agents.length,
          ...(width ? { window: width } : {}),
        },
      );
      const r = await repairFromCensus(
        scanner,
        chain,
        outcome.differences,
        { from: lower, to: block, ...(width ? { width } : {}) },
        ctx.write,
        ctx.signal,
      );
      repaired += r.events;
      if (ctx.signal?.aborted) return undefined; // stopped mid-repair: the stored census stands
      outcome = merge(
        outcome,
        await runCensus(scanner.reads, db, chain, block, { ...common, scope: 'recheck', ids: agents }),
      );
    }
  } catch (e) {
    const error = redactUrls(describeError(e));
    recordCensus(net, 'error');
    log.warn(`[index] ${net}: the census could not run: ${error}`, { chain: net, error });
    // A census that could not run proves nothing: a standing mismatch stays on the chain's row.
    if (previous.state !== 'mismatch')
      await storeCensus(db, net, {
        state: 'unchecked',
        detail: JSON.stringify({ error }),
        block,
        at: ctx.now(),
        scope: null,
        method: reader?.method ?? null,
      });
    else await countCensusPass(db, net);
    return { state: 'unchecked', repairs, repaired, differences: 0, calls: reader?.requests ?? 0, error };
  }
  const scope = outcome.scope === 'sample' ? 'sample' : 'full';
  recordCensus(net, outcome.state);
  await db.transaction(async (tx) => {
    await storeCensus(tx, net, {
      state: outcome.state,
      detail: censusDetail(outcome, repairs, repaired, outcome.note),
      block,
      at: ctx.now(),
      scope,
      method: outcome.method,
    });
    await storeCensusDifferences(tx, net, block, outcome.differences);
  });
  const figures =
    `${scope} census by ${outcome.method}: ${outcome.minted} agents minted, ${outcome.registered} registered in the index, ` +
    `${outcome.agentsChecked} agents and ${outcome.pairsChecked} (agent, client) pairs checked in ${outcome.requests} eth_calls`;
  const fields = {
    chain: net,
    block,
    scope,
    method: outcome.method,
    repairs,
    repaired,
    calls: outcome.requests,
  };
  if (outcome.state === 'ok') {
    log.info(
      `[index] ${net}: census ok at block ${block}${repairs ? ` after ${repairs} repairs (${repaired} events written)` : ''}: ${figures}`,
      fields,
    );
  } else if (outcome.state === 'unchecked') {
    log.warn(
      `[index] ${net}: census UNCHECKED at block ${block}: ${outcome.reverted.map((r) => `${r.fn} reverted (agent ${r.agent_id})`).join(', ')}; ${figures}`,
      { ...fields, reverted: outcome.reverted },
    );
  } else {
    log.warn(
      `[index] ${net}: census MISMATCH at block ${block} after ${repairs} repairs: ${figures}; ` +
        `${outcome.differences.length} differences (${JSON.stringify(countByKind(outcome.differences))}): ${JSON.stringify(outcome.differences.slice(0, 5))}`,
      { ...fields, differences: outcome.differences.slice(0, SHOWN_DIFFERENCES) },
    );
  }
  return {
    state: outcome.state,
    scope,
    method: outcome.method,
    repairs,
    repaired,
    differences: outcome.differences.length,
    calls: outcome.requests,
    ...(outcome.reverted.length > 0
      ? { error: `census function reverted: ${outcome.reverted.map((r) => r.fn).join(', ')}` }
      : {}),
  };
}
