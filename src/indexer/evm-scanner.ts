/**
 * The EVM scanner: `eth_getLogs` over the identity and reputation registries, one request per
 * block range for both contracts, with
 *  - ADAPTIVE ranges (./evm-range.ts): start at `initialRange`, narrow on "range too large" /
 *    response-size / "too many results" errors and on timeouts (an answer refused for a size
 *    the node declared: straight to the share that fits), grow again after a success that
 *    returned few logs;
 *  - SILENT CAPS at any number: an answer that reaches the largest count seen is checked against
 *    its parts, and a one-block window that reaches it is read from the block's receipts
 *    (./log-caps.ts); after a check that found the answer whole the next windows are narrower,
 *    so that windows of a steady count are not all checked;
 *  - the next window asked while the current one's batch is decoded and taken;
 *  - retries with backoff (./evm-rpc.ts), after which the chain fails for this pass;
 *  - block timestamps from the chain (./evm-block-times.ts), never the indexing time;
 *  - defensive decoding (./evm-decode.ts): a log that does not decode is skipped with a warning.
 * Files: this one is the scan loop and the scanner's assembly.
 */
import { createPublicClient, http, type Hex } from 'viem';
import type { ChainConfig } from '../chains.js';
import type { IndexEvent } from '../index-events.js';
import { IDENTITY_TOPICS, REPUTATION_TOPICS } from './evm-abi.js';
import { BlockTimes, fetchBlockTimes, prefetchBlockTimes, stampBlockTimes } from './evm-block-times.js';
import { decodeContextFor, decodeLog, type RawLog } from './evm-decode.js';
import {
  AdaptiveRange,
  DEFAULT_EVM_SCAN_OPTIONS,
  emptyStats,
  RangeTooWide,
  sizeHint,
  type EvmScanOptions,
  type EvmScanStats,
} from './evm-range.js';
import {
  blockHashAt,
  firstBlockWithCode,
  getBlock,
  getLogs,
  headBlock,
  readsOf,
  rememberHash,
  rpcCall,
  verifyChainId,
  type EvmReads,
  type EvmScan,
} from './evm-rpc.js';
import {
  blockReceiptLogs,
  completeWindow,
  newCapGuard,
  type LogFilter,
  type WindowReader,
} from './log-caps.js';
import { describeError, rangeHint } from './rpc-retry.js';
import { defaultIndexLogger, type ChainScanner, type ScanBatch, type ScannerLogger } from './scanner.js';

export type { EvmScanOptions, EvmScanStats } from './evm-range.js';
export type { EvmReads } from './evm-rpc.js';

/** The chain's registries, checked and lower-cased (an EVM chain with both registries set). */
function registriesOf(chain: ChainConfig): { identity: Hex; reputation: Hex } {
  if (chain.kind !== 'evm') throw new Error(`${chain.network}: not an EVM chain`);
  if (!chain.identityRegistry || !chain.reputationRegistry) {
    throw new Error(`${chain.network}: identityRegistry and reputationRegistry must be configured`);
  }
  return {
    identity: chain.identityRegistry.toLowerCase() as Hex,
    reputation: chain.reputationRegistry.toLowerCase() as Hex,
  };
}

/** How log-caps.ts reads the parts of a window and a block's receipts, with this filter. */
function windowReader(s: EvmScan, filter: LogFilter): WindowReader<RawLog> {
  return {
    logs: (from, to) => getLogs(s, from, to, false, filter),
    blockLogs: async (n) =>
      (await blockReceiptLogs(
        (method, params) => rpcCall(s, `${method} ${n}`, () => s.client.request({ method, params } as never)),
        n,
        filter,
        s.receipts,
      )) as RawLog[],
  };
}

/**
 * Batches of blocks from..to, one per getLogs range (the scanner's own ranges, or `range` for a
 * narrow filter's scan); a range too wide is narrowed and asked again; an answer that may have
 * been cut silently is completed from its parts (./log-caps.ts).
 */
async function* scanRanges(
  s: EvmScan,
  from: number,
  to: number,
  range: AdaptiveRange = s.range,
  filter: LogFilter = s.filter,
  opening: number | null = null,
): AsyncGenerator<ScanBatch> {
  const reader = windowReader(s, filter);
  if (opening !== null && to - from + 1 > 8 * opening && range.width > opening) {
    if (await probeRangeLimit(s, from, to, range, filter)) range.open(opening);
  }
  // A window's block times are fetched as soon as its answer arrives (./evm-block-times.ts).
  const ask = (a: number, b: number): Promise<RawLog[]> =>
    getLogs(s, a, b, b > a, filter).then((logs) => {
      prefetchBlockTimes(s.blockSource, logs);
      return logs;
    });
  /** The next window's answer, asked while the current one is decoded and handed on. */
  let ahead: { from: number; to: number; answer: Promise<RawLog[]> } | null = null;
  let cur = from;
  while (cur <= to) {
    const end = Math.min(to, cur + range.width - 1);
    const asked = ahead?.from === cur && ahead.to === end ? ahead.answer : null;
    ahead = null;
    let logs: RawLog[];
    try {
      logs = await (asked ?? ask(cur, end));
    } catch (err) {
      if (!(err instanceof RangeTooWide)) throw err;
      const span = end - cur + 1;
      const next = range.shrink(span, sizeHint(err.original, cur, span) ?? rangeHint(err.original));
      s.log.warn(`[index] ${s.network}: ${describeError(err.original)}; range ${span} -> ${next} blocks`);
      continue;
    }
    const answered = logs.length;
    const checked = await completeWindow(s.caps, reader, cur, end, logs);
    syncCapStats(s);
    if (checked.truncated) {
      const next = end > cur ? range.shrink(end - cur + 1, {}) : range.width;
      s.log.warn(
        `[index] ${s.network}: eth_getLogs ${cur}..${end} answered ${answered} logs of ${checked.logs.length} (a silent cap); ` +
          `completed from narrower windows${end > cur ? `, range ${end - cur + 1} -> ${next} blocks` : ' and the block receipts'}`,
        { chain: s.network, from: cur, to: end, answered, complete: checked.logs.length, cap: s.caps.cap },
      );
    } else if (checked.checked) {
      // A whole answer that needed a check: the next windows hold fewer logs (./evm-range.ts).
      range.trimAfterCheck(end - cur + 1, answered);
    }
    s.stats.widest = Math.max(s.stats.widest, end - cur + 1);
    // The window's last block (its batch's checkpoint) with the block times: its hash is kept.
    if (range === s.range) fetchBlockTimes(s.blockSource, [end]);
    range.succeeded(answered);
    // The next window is asked now (its range is known), so the node builds its answer while
    // this one's block times are read and its batch is decoded and taken. Its failure surfaces
    // when it is awaited; a consumer that stops leaves it unread.
    if (end < to) {
      const next = Math.min(to, end + range.width);
      ahead = { from: end + 1, to: next, answer: ask(end + 1, next) };
      ahead.answer.catch(() => undefined);
    }
    yield await toBatch(s, cur, end, checked.logs);
    cur = end + 1;
  }
}

/** A topic no event has (no signature hashes to zero): a filter that matches nothing. */
const NO_TOPIC = `0x${'0'.repeat(64)}`;

/**
 * Before a deep scan opens narrow: does the node serve a window wider than the scan's first one?
 * Asked with a filter that matches nothing, so the node builds no answer worth the name. A
 * range-capped endpoint (every public one) refuses it as it would the scan's first window, and
 * the range is narrowed as then (the limit it names, the range it suggests, else half): the scan
 * goes on exactly as without an opening, the probe standing for the first window's refusal. A
 * node that serves it (a node of one's own, without a range limit) may build an answer of the
 * whole window for a dense chain, so the scan opens narrow there (true). One block wider than the
 * first window, so that an endpoint capped at exactly that width (10,000 is common) refuses it
 * and names its limit instead of a later, doubled window.
 */
async function probeRangeLimit(
  s: EvmScan,
  from: number,
  to: number,
  range: AdaptiveRange,
  filter: LogFilter,
): Promise<boolean> {
  const span = Math.min(to - from + 1, range.width + 1);
  try {
    await getLogs(s, from, from + span - 1, span > 1, { address: filter.address, topics: [NO_TOPIC] });
    return true;
  } catch (err) {
    if (!(err instanceof RangeTooWide)) throw err;
    const next = range.shrink(span, rangeHint(err.original));
    s.log.warn(`[index] ${s.network}: ${describeError(err.original)}; range ${span} -> ${next} blocks`);
    return false;
  }
}

function syncCapStats(s: EvmScan): void {
  s.stats.capChecks = s.caps.checks;
  s.stats.truncations = s.caps.truncations;
  s.stats.cap = s.caps.cap;
  s.stats.denseBlocks = s.caps.denseBlocks;
}

/**
 * The events of a narrow filter (one registry, topics by agent, client or token) over from..to, as
 * non-advancing batches: ranges start at the whole span (or the node's named limit), since a
 * narrow filter matches few logs; `width` forces narrower ones (a repair that distrusts wide
 * answers). Range errors, silent caps and dense blocks are handled as in the scan.
 */
async function* scanFiltered(
  s: EvmScan,
  filter: LogFilter,
  from: number,
  to: number,
  width?: number,
): AsyncGenerator<ScanBatch> {
  const span = to - from + 1;
  const first = Math.max(1, Math.min(width ?? span, s.stats.ceiling ?? span));
  const range = new AdaptiveRange({ ...s.o, initialRange: first, maxRange: first }, s.stats);
  for await (const batch of scanRanges(s, from, to, range, filter))
    if (batch.events.length > 0) yield { ...batch, advance: false };
}

/** Decoded events of a range's logs with their block times, in chain order. */
async function toBatch(s: EvmScan, from: number, to: number, logs: RawLog[]): Promise<ScanBatch> {
  const events: IndexEvent[] = [];
  for (const l of logs) {
    const e = decodeLog(l, s.decode);
    if (e) events.push(e);
  }
  await stampBlockTimes(s.blockSource, logs, events);
  events.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  return { from, to, events };
}

// ------------------------------------------------------------------ the scanner

export type EvmScanner = ChainScanner & {
  readonly stats: EvmScanStats;
  readonly reads: EvmReads;
  /** Events a narrow filter matches over from..to (non-advancing batches); see scanFiltered. */
  scanFiltered(filter: LogFilter, from: number, to: number, width?: number): AsyncIterable<ScanBatch>;
};

export function createEvmScanner(
  chain: ChainConfig,
  opts: Partial<EvmScanOptions> = {},
  log: ScannerLogger = defaultIndexLogger(),
): EvmScanner {
  const { identity, reputation } = registriesOf(chain);
  const o: EvmScanOptions = { ...DEFAULT_EVM_SCAN_OPTIONS, ...opts };
  const network = chain.network;
  const stats = emptyStats(o);
  const s: EvmScan = {
    chain,
    network,
    identity,
    reputation,
    client: createPublicClient({
      transport: http(chain.rpcUrl, {
        retryCount: 0,
        timeout: o.timeoutMs,
        maxResponseBodySize: o.maxResponseBytes,
      }),
    }),
    o,
    stats,
    log,
    blockSource: {
      times: new BlockTimes(o.blockCacheSize),
      fetchBlock: async (n) => {
        stats.blockFetches++;
        const block = await getBlock(s, n, s.batchClient);
        rememberHash(s, n, block);
        return block;
      },
      concurrency: o.blockConcurrency,
    },
    range: new AdaptiveRange(o, stats),
    decode: decodeContextFor(network, identity, reputation, stats, log),
    pausedUntil: 0,
    caps: newCapGuard(),
    receipts: { blockReceipts: true },
    hashes: new Map(),
    filter: {
      address: identity === reputation ? identity : [identity, reputation],
      topics: [[...IDENTITY_TOPICS, ...REPUTATION_TOPICS]],
    },
    batchClient: createPublicClient({
      transport: http(chain.rpcUrl, {
        retryCount: 0,
        timeout: o.timeoutMs,
        maxResponseBodySize: o.maxResponseBytes,
        batch: { batchSize: 10, wait: 0 },
      }),
    }),
  };
  let opened = false;
  return {
    network,
    stats,
    verify: () => verifyChainId(s),
    blockHash: (block: number) => blockHashAt(s, block),
    head: () => headBlock(s),
    discoverStartBlock: (head: number) => firstBlockWithCode(s, head),
    scan: (from: number, to: number) => {
      // The scanner's first scan may open narrow (scanRanges); later ones go on at its width.
      const opening = opened ? null : o.openingRange;
      opened = true;
      return scanRanges(s, from, to, s.range, s.filter, opening);
    },
    scanFiltered: (filter: LogFilter, from: number, to: number, width?: number) =>
      scanFiltered(s, filter, from, to, width),
    reads: readsOf(s),
  };
}
