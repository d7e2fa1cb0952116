/**
 * The EVM scanner: `eth_getLogs` over the identity and reputation registries, one request per
 * block range for both contracts, with
 *  - ADAPTIVE ranges: start at `initialRange`, halve on "range too large" / response-size /
 *    "too many results" errors and on timeouts, double again (up to `maxRange`) after a success
 *    that returned few logs;
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
import { backoffDelay, classifyEvmError, describeError, sleep } from './rpc-retry.js';
import {
  capKeyText,
  defaultIndexLogger,
  sanitizeText,
  scaleDecimal,
  type ChainScanner,
  type IndexEvent,
  type ScanBatch,
  type ScannerLogger,
} from './scanner.js';

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
  blockConcurrency: 8,
  blockCacheSize: 50_000,
};

/** What the scanner did, for the pass report and tests. */
export interface EvmScanStats {
  requests: number;
  retries: number;
  halvings: number;
  minRange: number;
  lastRange: number;
  skippedLogs: number;
  blockFetches: number;
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
 * The getLogs range: halved when a range is too wide; doubled again (up to maxRange) after a
 * success with few logs (after a halving, only after three successes in a row).
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

  /** A request over `span` blocks was too wide: the next one covers half. Returns the new width. */
  halve(span: number): number {
    const next = Math.max(1, Math.floor(span / 2));
    this.stats.halvings++;
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
    if (logs < this.o.growBelowLogs && this.width < this.o.maxRange && this.streak >= (this.shrunk ? 3 : 1)) {
      this.width = Math.min(this.o.maxRange, this.width * 2);
      this.streak = 0;
    }
    this.stats.lastRange = this.width;
  }
}

// ------------------------------------------------------------------ the scanner

export function createEvmScanner(
  chain: ChainConfig,
  opts: Partial<EvmScanOptions> = {},
  log: ScannerLogger = defaultIndexLogger(),
): ChainScanner & { readonly stats: EvmScanStats } {
  if (chain.kind !== 'evm') throw new Error(`${chain.network}: not an EVM chain`);
  if (!chain.identityRegistry || !chain.reputationRegistry) {
    throw new Error(`${chain.network}: identityRegistry and reputationRegistry must be configured`);
  }
  const o: EvmScanOptions = { ...DEFAULT_EVM_SCAN_OPTIONS, ...opts };
  const network = chain.network;
  const identity = chain.identityRegistry.toLowerCase() as Hex;
  const reputation = chain.reputationRegistry.toLowerCase() as Hex;
  const client: PublicClient = createPublicClient({
    transport: http(chain.rpcUrl, { retryCount: 0, timeout: o.timeoutMs }),
  });
  const stats: EvmScanStats = {
    requests: 0,
    retries: 0,
    halvings: 0,
    minRange: o.initialRange,
    lastRange: o.initialRange,
    skippedLogs: 0,
    blockFetches: 0,
  };
  const blockTimes = new BlockTimes(o.blockCacheSize);
  const range = new AdaptiveRange(o, stats);

  const backoff = (attempt: number) => backoffDelay(attempt, o);

  /**
   * One JSON-RPC call with the retry policy. With `forLogs`, range-class errors (and timeouts
   * while the range can still shrink) are thrown as RangeTooWide for the caller to halve.
   */
  async function call<T>(what: string, fn: () => Promise<T>, forLogs = false, canShrink = false): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      stats.requests++;
      try {
        return await fn();
      } catch (err) {
        const cls = classifyEvmError(err, forLogs);
        recordRpcError(network, cls);
        if (forLogs && canShrink && (cls === 'range' || cls === 'timeout')) throw new RangeTooWide(err);
        if (cls === 'fatal' || attempt >= o.maxAttempts) {
          throw new Error(
            `${what} failed${attempt > 1 ? ` after ${attempt} attempts` : ''}: ${describeError(err)}`,
            {
              cause: err,
            },
          );
        }
        stats.retries++;
        const delay = backoff(attempt);
        log.debug?.(
          `[index] ${network}: ${what}: ${describeError(err)}; retry ${attempt}/${o.maxAttempts - 1} in ${delay} ms`,
          { chain: network, call: what, attempt, delay_ms: delay, kind: cls },
        );
        await sleep(delay);
      }
    }
  }

  async function getLogs(from: number, to: number, canShrink: boolean): Promise<RawLog[]> {
    const params = {
      address: identity === reputation ? identity : [identity, reputation],
      topics: [[...IDENTITY_TOPICS, ...REPUTATION_TOPICS]],
      fromBlock: toHex(from),
      toBlock: toHex(to),
    };
    const logs = await call(
      `eth_getLogs ${from}..${to}`,
      () => client.request({ method: 'eth_getLogs', params: [params as never] }),
      true,
      canShrink,
    );
    if (!Array.isArray(logs))
      throw new Error(`eth_getLogs ${from}..${to}: the node answered with a non-array`);
    return logs as unknown as RawLog[];
  }

  async function blockTime(n: number): Promise<Date | null> {
    if (blockTimes.has(n)) return blockTimes.touch(n);
    stats.blockFetches++;
    const block = await call(`eth_getBlockByNumber ${n}`, () =>
      client.request({ method: 'eth_getBlockByNumber', params: [toHex(n), false] }),
    );
    const ts = hexToNumber((block as { timestamp?: unknown } | null)?.timestamp);
    const t = ts === null ? null : new Date(ts * 1000);
    blockTimes.remember(n, t);
    return t;
  }

  async function fillBlockTimes(blocks: number[]): Promise<void> {
    const missing = [...new Set(blocks)].filter((b) => !blockTimes.has(b));
    let next = 0;
    const worker = async () => {
      while (next < missing.length) {
        const b = missing[next++]!;
        await blockTime(b);
      }
    };
    await Promise.all(Array.from({ length: Math.min(o.blockConcurrency, missing.length) }, worker));
  }

  function warnSkip(l: RawLog, why: string): void {
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
  }

  const decodeContext: DecodeContext = {
    network,
    identity,
    reputation,
    skip: warnSkip,
    keyCut: (l, length) =>
      log.warn(
        `[index] ${network}: metadata key of ${length} chars cut to ${MAX_META_KEY_CHARS} ${JSON.stringify({
          tx: String(l.transactionHash ?? '').slice(0, 66),
          logIndex: String(l.logIndex ?? ''),
        })}`,
      ),
  };

  async function toBatch(from: number, to: number, logs: RawLog[]): Promise<ScanBatch> {
    const events: IndexEvent[] = [];
    const stamped = new Map<number, Date>();
    for (const l of logs) {
      const e = decodeLog(l, decodeContext);
      if (!e) continue;
      events.push(e);
      const ts = hexToNumber(l.blockTimestamp);
      if (ts !== null && !stamped.has(e.blockNumber)) stamped.set(e.blockNumber, new Date(ts * 1000));
    }
    for (const [b, t] of stamped) if (!blockTimes.has(b)) blockTimes.remember(b, t);
    await fillBlockTimes(events.map((e) => e.blockNumber));
    for (const e of events)
      e.blockTime = stamped.get(e.blockNumber) ?? blockTimes.peek(e.blockNumber) ?? null;
    events.sort((a, b) => a.blockNumber - b.blockNumber || a.logIndex - b.logIndex);
    return { from, to, events };
  }

  return {
    network,
    stats,
    async verify() {
      const id = await call('eth_chainId', () => client.request({ method: 'eth_chainId' }));
      const n = hexToNumber(id);
      if (chain.chainId !== null && n !== chain.chainId) {
        throw new Error(
          `${chain.rpcUrl} serves chain id ${n ?? String(id)}, but ${network} is configured as ${chain.chainId}`,
        );
      }
    },
    async blockHash(block: number) {
      const b = await call(`eth_getBlockByNumber ${block}`, () =>
        client.request({ method: 'eth_getBlockByNumber', params: [toHex(block), false] }),
      );
      const hash = (b as { hash?: unknown } | null)?.hash;
      return typeof hash === 'string' && /^0x[0-9a-fA-F]{64}$/.test(hash) ? hash.toLowerCase() : null;
    },
    async head() {
      const h = hexToNumber(
        await call('eth_blockNumber', () => client.request({ method: 'eth_blockNumber' })),
      );
      if (h === null) throw new Error('eth_blockNumber returned a malformed number');
      return h;
    },
    async discoverStartBlock(head: number) {
      const hasCode = async (b: number) => {
        for (const address of identity === reputation ? [identity] : [identity, reputation]) {
          const code = await call(`eth_getCode ${address} @${b}`, () =>
            client.request({ method: 'eth_getCode', params: [address, toHex(b)] }),
          );
          if (typeof code === 'string' && code !== '0x' && code !== '0x0') return true;
        }
        return false;
      };
      if (!(await hasCode(head))) {
        throw new Error(
          `no contract code at the registries (${identity}, ${reputation}) at block ${head}: wrong addresses, or set startBlock`,
        );
      }
      let lo = 0;
      let hi = head;
      while (lo < hi) {
        const mid = Math.floor((lo + hi) / 2);
        if (await hasCode(mid)) hi = mid;
        else lo = mid + 1;
      }
      log.info(`[index] ${network}: registries first have code at block ${lo}`);
      return lo;
    },
    async *scan(from: number, to: number) {
      let cur = from;
      while (cur <= to) {
        const end = Math.min(to, cur + range.width - 1);
        let logs: RawLog[];
        try {
          logs = await getLogs(cur, end, end > cur);
        } catch (err) {
          if (!(err instanceof RangeTooWide)) throw err;
          const next = range.halve(end - cur + 1);
          log.warn(
            `[index] ${network}: ${describeError(err.original)}; range ${end - cur + 1} -> ${next} blocks`,
          );
          continue;
        }
        const batch = await toBatch(cur, end, logs);
        yield batch;
        cur = end + 1;
        range.succeeded(logs.length);
      }
    },
  };
}
