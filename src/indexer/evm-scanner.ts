/**
 * The EVM scanner: `eth_getLogs` over the identity and reputation registries, one request per
 * block range for both contracts, with
 *  - ADAPTIVE ranges: start at `initialRange`, halve on "range too large" / response-size /
 *    "too many results" errors and on timeouts, double again (up to `maxRange`) after a success
 *    that returned few logs;
 *  - SILENT CAPS at any number: an answer that reaches the largest count seen is checked against
 *    its parts, and a one-block window that reaches it is read from the block's receipts
 *    (./log-caps.ts);
 *  - retries with exponential backoff and jitter on 429, 5xx and network errors (bounded
 *    attempts), after which the chain fails for this pass;
 *  - block timestamps from the chain (the log's own `blockTimestamp` when the node gives one,
 *    else `eth_getBlockByNumber`, cached per block), never the indexing time;
 *  - defensive decoding: a log that does not decode is skipped with a warning; every string is
 *    made storable (sanitizeText) and addresses are lower-cased.
 * viem's own retries are off (`retryCount: 0`): this module owns the retry policy.
 */
import {
  createPublicClient,
  decodeEventLog,
  hexToBytes,
  http,
  type Abi,
  type Hex,
  type Log,
  type PublicClient,
} from 'viem';
import type { ChainConfig } from '../chains.js';
import { recordRpcError } from '../metrics.js';
import { IDENTITY_EVENTS, IDENTITY_TOPICS, REPUTATION_EVENTS, REPUTATION_TOPICS, TOPIC } from './evm-abi.js';
import {
  blockReceiptLogs,
  completeWindow,
  newCapGuard,
  type CapGuard,
  type LogFilter,
  type WindowReader,
} from './log-caps.js';
import {
  backOffBeforeRetry,
  classifyEvmError,
  describeError,
  isRevert,
  rangeHint,
  retryAfterMs,
  sleep,
  type RangeHint,
} from './rpc-retry.js';
import {
  capKeyText,
  defaultIndexLogger,
  sanitizeText,
  scaleDecimal,
  type ChainScanner,
  type ScanBatch,
  type ScannerLogger,
} from './scanner.js';
import type { IndexEvent } from '../index-events.js';

export interface EvmScanOptions {
  /** First getLogs range, in blocks. */
  initialRange: number;
  /** Ranges grow back (x2) up to this after successes. */
  maxRange: number;
  /** Ranges never grow after a response with this many logs or more (keeps batches moderate). */
  growBelowLogs: number;
  /** Attempts per request on retryable errors (429, 5xx, network, timeouts at the minimum range). */
  maxAttempts: number;
  /** First backoff delay; doubles per attempt, with full jitter, capped at maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** Per-request timeout. */
  timeoutMs: number;
  /** Longest wait a 429's Retry-After may impose before a retry. */
  maxRetryAfterMs: number;
  /** Parallel eth_getBlockByNumber requests when logs carry no timestamp. */
  blockConcurrency: number;
  /** Cached block timestamps per scanner (one scanner lives for one pass). */
  blockCacheSize: number;
}

const DEFAULT_EVM_SCAN_OPTIONS: EvmScanOptions = {
  initialRange: 10_000,
  maxRange: 100_000,
  growBelowLogs: 2_000,
  maxAttempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  timeoutMs: 30_000,
  maxRetryAfterMs: 60_000,
  blockConcurrency: 8,
  blockCacheSize: 50_000,
};

/** What the scanner did, for the pass report and tests. */
export interface EvmScanStats {
  requests: number;
  retries: number;
  halvings: number;
  /** Range changes taken from the error's own suggestion (a named range or a named limit). */
  suggested: number;
  /** The width limit a node named ("limited to a 10,000 range"): ranges never grow above it. */
  ceiling: number | null;
  minRange: number;
  lastRange: number;
  /** The widest range the node served (a census repair's later rounds use narrower windows). */
  widest: number;
  skippedLogs: number;
  blockFetches: number;
  /** Answers checked against their parts, answers proven cut, the smallest cut count (./log-caps.ts). */
  capChecks: number;
  truncations: number;
  cap: number | null;
  /** One-block windows read from their receipts. */
  denseBlocks: number;
}

/** Longest metadata key kept (it is part of a primary key; btree entries are limited). */
const MAX_META_KEY_CHARS = 256;

class RangeTooWide extends Error {
  constructor(readonly original: unknown) {
    super('range too wide');
  }
}

// ------------------------------------------------------------------ helpers

function toHex(n: number): Hex {
  return `0x${n.toString(16)}`;
}

function hexToNumber(h: unknown): number | null {
  if (typeof h !== 'string' || !/^0x[0-9a-fA-F]{1,16}$/.test(h)) return null;
  const n = Number.parseInt(h.slice(2), 16);
  return Number.isSafeInteger(n) ? n : null;
}

const utf8Fatal = new TextDecoder('utf-8', { fatal: true });

// eslint-disable-next-line no-control-regex -- control characters mark binary values
const BINARY_RE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/**
 * UTF-8 reading of metadata bytes when they are text: valid UTF-8 without NUL or other control
 * characters (an agentWallet's 20 raw bytes are not text); else null.
 */
function bytesAsText(hex: Hex): string | null {
  try {
    const s = utf8Fatal.decode(hexToBytes(hex));
    return BINARY_RE.test(s) ? null : s;
  } catch {
    return null;
  }
}

/** Raw log as eth_getLogs returns it (plus the optional blockTimestamp newer nodes add). */
type RawLog = Log<Hex, Hex, false> & { blockTimestamp?: Hex };

// ------------------------------------------------------------------ decoding

/** What decoding needs: which registries are ours, and where a skipped or cut log is reported. */
interface DecodeContext {
  network: string;
  identity: Hex;
  reputation: Hex;
  skip(l: RawLog, why: string): void;
  keyCut(l: RawLog, length: number): void;
}

/** Decodes one raw log into a normalized event, or null (skipped, warned). */
function decodeLog(l: RawLog, c: DecodeContext): IndexEvent | null {
  if (l.removed) return null;
  const blockNumber = hexToNumber(l.blockNumber);
  const logIndex = hexToNumber(l.logIndex);
  const tx = typeof l.transactionHash === 'string' ? l.transactionHash.toLowerCase() : '';
  if (blockNumber === null || logIndex === null || !/^0x[0-9a-f]{64}$/.test(tx)) {
    c.skip(l, 'missing or malformed blockNumber/logIndex/transactionHash');
    return null;
  }
  const address = typeof l.address === 'string' ? l.address.toLowerCase() : '';
  const topic0 = typeof l.topics?.[0] === 'string' ? l.topics[0].toLowerCase() : '';
  const fromIdentity = address === c.identity && IDENTITY_TOPICS.includes(topic0 as Hex);
  const fromReputation = address === c.reputation && REPUTATION_TOPICS.includes(topic0 as Hex);
  if (!fromIdentity && !fromReputation) return null; // not ours (a node that ignores filters)
  const base = { network: c.network, txHash: tx, logIndex, blockNumber, blockTime: null as Date | null };
  try {
    const abi: Abi = fromIdentity ? IDENTITY_EVENTS : REPUTATION_EVENTS;
    const d = decodeEventLog({ abi, data: l.data, topics: l.topics as [Hex, ...Hex[]], strict: true });
    const a = d.args as unknown as Record<string, unknown>;
    const str = (k: string) => sanitizeText(String(a[k] ?? ''));
    const addr = (k: string) => String(a[k]).toLowerCase();
    const big = (k: string) => (a[k] as bigint).toString();
    switch (topic0) {
      case TOPIC.Registered:
        return {
          ...base,
          kind: 'registered',
          agentId: big('agentId'),
          agentUri: str('agentURI'),
          minter: addr('owner'),
        };
      case TOPIC.Transfer:
        return { ...base, kind: 'transfer', agentId: big('tokenId'), from: addr('from'), to: addr('to') };
      case TOPIC.URIUpdated:
        return {
          ...base,
          kind: 'uri',
          agentId: big('agentId'),
          uri: str('newURI'),
          updatedBy: addr('updatedBy'),
        };
      case TOPIC.MetadataSet: {
        let key = str('metadataKey');
        if (key.length > MAX_META_KEY_CHARS) {
          c.keyCut(l, key.length);
          key = capKeyText(key, MAX_META_KEY_CHARS);
        }
        const valueHex = String(a.metadataValue).toLowerCase() as Hex;
        return {
          ...base,
          kind: 'metadata',
          agentId: big('agentId'),
          key,
          valueHex,
          valueText: bytesAsText(valueHex),
        };
      }
      case TOPIC.NewFeedback: {
        const raw = a.value as bigint;
        const decimals = Number(a.valueDecimals);
        return {
          ...base,
          kind: 'feedback',
          agentId: big('agentId'),
          rater: addr('clientAddress'),
          feedbackIndex: big('feedbackIndex'),
          valueRaw: raw.toString(),
          valueDecimals: decimals,
          value: scaleDecimal(raw, decimals),
          tag1: str('tag1'),
          tag2: str('tag2'),
          endpoint: str('endpoint'),
          feedbackUri: str('feedbackURI'),
          feedbackHash: typeof a.feedbackHash === 'string' ? a.feedbackHash.toLowerCase() : null,
        };
      }
      case TOPIC.FeedbackRevoked:
        return {
          ...base,
          kind: 'revocation',
          agentId: big('agentId'),
          rater: addr('clientAddress'),
          feedbackIndex: big('feedbackIndex'),
        };
      case TOPIC.ResponseAppended:
        return {
          ...base,
          kind: 'response',
          agentId: big('agentId'),
          rater: addr('clientAddress'),
          feedbackIndex: big('feedbackIndex'),
          responder: addr('responder'),
          responseUri: str('responseURI'),
          responseHash: typeof a.responseHash === 'string' ? a.responseHash.toLowerCase() : null,
        };
    }
    return null;
  } catch (err) {
    c.skip(l, describeError(err));
    return null;
  }
}

// ------------------------------------------------------------------ block times and ranges

/** Block timestamps seen or fetched during one pass (LRU, at most `max`). */
class BlockTimes {
  private readonly times = new Map<number, Date | null>();
  constructor(private readonly max: number) {}

  has(n: number): boolean {
    return this.times.has(n);
  }

  /** The cached time without touching its LRU position. */
  peek(n: number): Date | null | undefined {
    return this.times.get(n);
  }

  /** The cached time, moved to the LRU's newest end. */
  touch(n: number): Date | null {
    const t = this.times.get(n) ?? null;
    this.times.delete(n);
    this.times.set(n, t);
    return t;
  }

  remember(n: number, t: Date | null): void {
    this.times.set(n, t);
    if (this.times.size > this.max) {
      const oldest = this.times.keys().next();
      if (!oldest.done) this.times.delete(oldest.value);
    }
  }
}

/**
 * The getLogs range: when a range is too wide, the range the error suggests (a named range, or a
 * named limit that also becomes a ceiling the range never grows above), else half; doubled again
 * (up to maxRange and the ceiling) after a success with few logs (after a shrink, only after three
 * successes in a row).
 */
class AdaptiveRange {
  width: number;
  private streak = 0;
  private shrunk = false;

  constructor(
    private readonly o: EvmScanOptions,
    private readonly stats: EvmScanStats,
  ) {
    this.width = Math.max(1, Math.min(o.initialRange, o.maxRange));
  }

  /**
   * A request over `span` blocks was too wide: the next one covers what the error suggests when
   * that is narrower, else half. Returns the new width.
   */
  shrink(span: number, hint: RangeHint): number {
    if (hint.limit !== undefined && hint.limit < span) {
      this.stats.ceiling = Math.min(this.stats.ceiling ?? hint.limit, hint.limit);
      return this.set(hint.limit, true);
    }
    if (hint.from !== undefined && hint.to !== undefined && hint.to - hint.from + 1 < span) {
      return this.set(hint.to - hint.from + 1, true);
    }
    this.stats.halvings++;
    return this.set(Math.floor(span / 2), false);
  }

  private set(width: number, suggested: boolean): number {
    const next = Math.max(1, width);
    if (suggested) this.stats.suggested++;
    this.stats.minRange = Math.min(this.stats.minRange, next);
    this.width = next;
    this.stats.lastRange = next;
    this.streak = 0;
    this.shrunk = true;
    return next;
  }

  /** A request succeeded with `logs` logs. */
  succeeded(logs: number): void {
    this.streak++;
    const top = Math.min(this.o.maxRange, this.stats.ceiling ?? Infinity);
    // Behind a proven cap, ranges grow only while answers stay well below it.
    const cap = this.stats.cap;
    const few = logs < this.o.growBelowLogs && (cap === null || logs * 2 < cap);
    if (few && this.width < top && this.streak >= (this.shrunk ? 3 : 1)) {
      this.width = Math.min(top, this.width * 2);
      this.streak = 0;
    }
    this.stats.lastRange = this.width;
  }
}

// ------------------------------------------------------------------ the scanner's steps

/** One scanner's state for one pass: the chain, its client, the options, the figures, the caches. */
interface EvmScan {
  chain: ChainConfig;
  network: string;
  identity: Hex;
  reputation: Hex;
  client: PublicClient;
  o: EvmScanOptions;
  stats: EvmScanStats;
  log: ScannerLogger;
  blockTimes: BlockTimes;
  range: AdaptiveRange;
  decode: DecodeContext;
  /** No call starts before this time (ms since the epoch): set by a 429's Retry-After. */
  pausedUntil: number;
  /** What the endpoint's answers taught about a silent cap (one per scanner: one endpoint, one pass). */
  caps: CapGuard;
  /** False once the node refused eth_getBlockReceipts (then a block's receipts are read one by one). */
  receipts: { blockReceipts: boolean };
  /** The registries' own filter: both contracts, every event the index reads. */
  filter: LogFilter;
  /** A client that sends concurrent requests as JSON-RPC batches of at most 10 (the census's plain reads). */
  batchClient: PublicClient;
}

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

function emptyStats(o: EvmScanOptions): EvmScanStats {
  return {
    requests: 0,
    retries: 0,
    halvings: 0,
    suggested: 0,
    ceiling: null,
    minRange: o.initialRange,
    lastRange: o.initialRange,
    widest: 0,
    skippedLogs: 0,
    blockFetches: 0,
    capChecks: 0,
    truncations: 0,
    cap: null,
    denseBlocks: 0,
  };
}

/** Where decoding reports a skipped log (counted, warned) and a metadata key cut to length. */
function decodeContextFor(
  network: string,
  identity: Hex,
  reputation: Hex,
  stats: EvmScanStats,
  log: ScannerLogger,
): DecodeContext {
  return {
    network,
    identity,
    reputation,
    skip(l, why) {
      stats.skippedLogs++;
      log.warn(
        `[index] ${network}: skipped an undecodable log ${JSON.stringify({
          tx: String(l.transactionHash ?? '').slice(0, 66),
          logIndex: String(l.logIndex ?? ''),
          block: String(l.blockNumber ?? ''),
          topic0: String(l.topics?.[0] ?? '').slice(0, 66),
          reason: sanitizeText(why).slice(0, 300),
        })}`,
      );
    },
    keyCut: (l, length) =>
      log.warn(
        `[index] ${network}: metadata key of ${length} chars cut to ${MAX_META_KEY_CHARS} ${JSON.stringify({
          tx: String(l.transactionHash ?? '').slice(0, 66),
          logIndex: String(l.logIndex ?? ''),
        })}`,
      ),
  };
}

/**
 * One JSON-RPC call with the retry policy. With `forLogs`, range-class errors (and timeouts
 * while the range can still shrink) are thrown as RangeTooWide for the caller to halve.
 */
async function rpcCall<T>(
  s: EvmScan,
  what: string,
  fn: () => Promise<T>,
  forLogs = false,
  canShrink = false,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    // A Retry-After pauses every call of the scanner (parallel block fetches too), not only its own.
    const wait = s.pausedUntil - Date.now();
    if (wait > 0) await sleep(wait);
    s.stats.requests++;
    try {
      return await fn();
    } catch (err) {
      const cls = classifyEvmError(err, forLogs);
      recordRpcError(s.network, cls);
      if (forLogs && canShrink && (cls === 'range' || cls === 'timeout')) throw new RangeTooWide(err);
      if (cls === 'fatal' || attempt >= s.o.maxAttempts) {
        throw new Error(
          `${what} failed${attempt > 1 ? ` after ${attempt} attempts` : ''}: ${describeError(err)}`,
          { cause: err },
        );
      }
      s.stats.retries++;
      // A 429's Retry-After is honoured (bounded by maxDelayMs), never undercut by the backoff.
      const hinted = retryAfterMs(err);
      const atLeast = hinted === null ? 0 : Math.min(hinted, s.o.maxRetryAfterMs);
      if (atLeast > 0) s.pausedUntil = Math.max(s.pausedUntil, Date.now() + atLeast);
      await backOffBeforeRetry(s.log, s.network, what, err, attempt, cls, s.o, atLeast);
    }
  }
}

/** The logs of blocks from..to that a filter matches (default: both registries, every event read). */
async function getLogs(
  s: EvmScan,
  from: number,
  to: number,
  canShrink: boolean,
  filter: LogFilter = s.filter,
): Promise<RawLog[]> {
  const params = { ...filter, fromBlock: toHex(from), toBlock: toHex(to) };
  const logs = await rpcCall(
    s,
    `eth_getLogs ${from}..${to}`,
    () => s.client.request({ method: 'eth_getLogs', params: [params as never] }),
    true,
    canShrink,
  );
  if (!Array.isArray(logs)) throw new Error(`eth_getLogs ${from}..${to}: the node answered with a non-array`);
  return logs as unknown as RawLog[];
}

/** A block by number as the node answers it (null when it has none). */
function getBlock(s: EvmScan, n: number): Promise<unknown> {
  return rpcCall(s, `eth_getBlockByNumber ${n}`, () =>
    s.client.request({ method: 'eth_getBlockByNumber', params: [toHex(n), false] }),
  );
}

/** A block's timestamp, from the cache or the node (cached either way). */
async function blockTime(s: EvmScan, n: number): Promise<Date | null> {
  if (s.blockTimes.has(n)) return s.blockTimes.touch(n);
  s.stats.blockFetches++;
  const block = await getBlock(s, n);
  const ts = hexToNumber((block as { timestamp?: unknown } | null)?.timestamp);
  const t = ts === null ? null : new Date(ts * 1000);
  s.blockTimes.remember(n, t);
  return t;
}

/** Fetches the timestamps of the blocks not cached yet, blockConcurrency at a time. */
async function fillBlockTimes(s: EvmScan, blocks: number[]): Promise<void> {
  const missing = [...new Set(blocks)].filter((b) => !s.blockTimes.has(b));
  let next = 0;
  const worker = async () => {
    while (next < missing.length) {
      const b = missing[next++]!;
      await blockTime(s, b);
    }
  };
  await Promise.all(Array.from({ length: Math.min(s.o.blockConcurrency, missing.length) }, worker));
}

/** Decoded events of a range's logs with their block times, in chain order. */
async function toBatch(s: EvmScan, from: number, to: number, logs: RawLog[]): Promise<ScanBatch> {
  const events: IndexEvent[] = [];
  const stamped = new Map<number, Date>();
  for (const l of logs) {
    const e = decodeLog(l, s.decode);
    if (!e) continue;
    events.push(e);
    const ts = hexToNumber(l.blockTimestamp);
    if (ts !== null && !stamped.has(e.blockNumber)) stamped.set(e.blockNumber, new Date(ts * 1000));
  }
  for (const [b, t] of stamped) if (!s.blockTimes.has(b)) s.blockTimes.remember(b, t);
  await fillBlockTimes(
    s,
    events.map((e) => e.blockNumber),
  );
  for (const e of events)
    e.blockTime = stamped.get(e.blockNumber) ?? s.blockTimes.peek(e.blockNumber) ?? null;
  events.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
  return { from, to, events };
}

/** Fails when the endpoint serves another chain id than the configured one. */
async function verifyChainId(s: EvmScan): Promise<void> {
  const id = await rpcCall(s, 'eth_chainId', () => s.client.request({ method: 'eth_chainId' }));
  const n = hexToNumber(id);
  if (s.chain.chainId !== null && n !== s.chain.chainId) {
    throw new Error(
      `${s.chain.rpcUrl} serves chain id ${n ?? String(id)}, but ${s.network} is configured as ${s.chain.chainId}`,
    );
  }
}

/** A block's hash, lower-cased; null when the node has no such block. */
async function blockHashAt(s: EvmScan, block: number): Promise<string | null> {
  const hash = ((await getBlock(s, block)) as { hash?: unknown } | null)?.hash;
  return typeof hash === 'string' && /^0x[0-9a-fA-F]{64}$/.test(hash) ? hash.toLowerCase() : null;
}

/** The node's latest block number. */
async function headBlock(s: EvmScan): Promise<number> {
  const h = hexToNumber(
    await rpcCall(s, 'eth_blockNumber', () => s.client.request({ method: 'eth_blockNumber' })),
  );
  if (h === null) throw new Error('eth_blockNumber returned a malformed number');
  return h;
}

/** Whether a registry has contract code at block `b`. */
async function registriesHaveCode(s: EvmScan, b: number): Promise<boolean> {
  for (const address of s.identity === s.reputation ? [s.identity] : [s.identity, s.reputation]) {
    const code = await rpcCall(s, `eth_getCode ${address} @${b}`, () =>
      s.client.request({ method: 'eth_getCode', params: [address, toHex(b)] }),
    );
    if (typeof code === 'string' && code !== '0x' && code !== '0x0') return true;
  }
  return false;
}

/** The first block where the registries have code (binary search below `head`). */
async function firstBlockWithCode(s: EvmScan, head: number): Promise<number> {
  if (!(await registriesHaveCode(s, head))) {
    throw new Error(
      `no contract code at the registries (${s.identity}, ${s.reputation}) at block ${head}: wrong addresses, or set startBlock`,
    );
  }
  let lo = 0;
  let hi = head;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (await registriesHaveCode(s, mid)) hi = mid;
    else lo = mid + 1;
  }
  s.log.info(`[index] ${s.network}: registries first have code at block ${lo}`);
  return lo;
}

/**
 * What the configuration checks and the census read from the chain, with the scanner's retry
 * policy: a contract's code, a storage slot, and an eth_call (null when the call reverts).
 */
export interface EvmReads {
  code(address: Hex, block: number): Promise<Hex>;
  storage(address: Hex, slot: Hex, block: number): Promise<Hex>;
  call(to: Hex, data: Hex, block: number): Promise<Hex | null>;
  /** Several eth_calls sent as JSON-RPC batches of at most 10 (each one a request); null: reverted. */
  calls(calls: readonly { to: Hex; data: Hex }[], block: number): Promise<(Hex | null)[]>;
}

/** One eth_call through `client` with the retry policy; null when the contract reverted. */
async function ethCall(
  s: EvmScan,
  client: PublicClient,
  to: Hex,
  data: Hex,
  block: number,
): Promise<Hex | null> {
  try {
    const out = await rpcCall(s, `eth_call ${to} ${data.slice(0, 10)} @${block}`, () =>
      client.request({ method: 'eth_call', params: [{ to, data }, toHex(block)] }),
    );
    return String(out).toLowerCase() as Hex;
  } catch (err) {
    if (isRevert(err)) return null;
    throw err;
  }
}

function readsOf(s: EvmScan): EvmReads {
  return {
    code: async (address, block) =>
      String(
        await rpcCall(s, `eth_getCode ${address} @${block}`, () =>
          s.client.request({ method: 'eth_getCode', params: [address, toHex(block)] }),
        ),
      ).toLowerCase() as Hex,
    storage: async (address, slot, block) =>
      String(
        await rpcCall(s, `eth_getStorageAt ${address} @${block}`, () =>
          s.client.request({ method: 'eth_getStorageAt', params: [address, slot, toHex(block)] }),
        ),
      ).toLowerCase() as Hex,
    call: (to, data, block) => ethCall(s, s.client, to, data, block),
    calls: (calls, block) => Promise.all(calls.map((c) => ethCall(s, s.batchClient, c.to, c.data, block))),
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
): AsyncGenerator<ScanBatch> {
  const reader = windowReader(s, filter);
  let cur = from;
  while (cur <= to) {
    const end = Math.min(to, cur + range.width - 1);
    let logs: RawLog[];
    try {
      logs = await getLogs(s, cur, end, end > cur, filter);
    } catch (err) {
      if (!(err instanceof RangeTooWide)) throw err;
      const next = range.shrink(end - cur + 1, rangeHint(err.original));
      s.log.warn(
        `[index] ${s.network}: ${describeError(err.original)}; range ${end - cur + 1} -> ${next} blocks`,
      );
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
    }
    s.stats.widest = Math.max(s.stats.widest, end - cur + 1);
    yield await toBatch(s, cur, end, checked.logs);
    cur = end + 1;
    range.succeeded(answered);
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
    client: createPublicClient({ transport: http(chain.rpcUrl, { retryCount: 0, timeout: o.timeoutMs }) }),
    o,
    stats,
    log,
    blockTimes: new BlockTimes(o.blockCacheSize),
    range: new AdaptiveRange(o, stats),
    decode: decodeContextFor(network, identity, reputation, stats, log),
    pausedUntil: 0,
    caps: newCapGuard(),
    receipts: { blockReceipts: true },
    filter: {
      address: identity === reputation ? identity : [identity, reputation],
      topics: [[...IDENTITY_TOPICS, ...REPUTATION_TOPICS]],
    },
    batchClient: createPublicClient({
      transport: http(chain.rpcUrl, {
        retryCount: 0,
        timeout: o.timeoutMs,
        batch: { batchSize: 10, wait: 0 },
      }),
    }),
  };
  return {
    network,
    stats,
    verify: () => verifyChainId(s),
    blockHash: (block: number) => blockHashAt(s, block),
    head: () => headBlock(s),
    discoverStartBlock: (head: number) => firstBlockWithCode(s, head),
    scan: (from: number, to: number) => scanRanges(s, from, to),
    scanFiltered: (filter: LogFilter, from: number, to: number, width?: number) =>
      scanFiltered(s, filter, from, to, width),
    reads: readsOf(s),
  };
}
