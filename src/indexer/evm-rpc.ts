/**
 * The EVM scanner's state for one pass and its JSON-RPC calls, each with the retry policy:
 * retries with exponential backoff and jitter on 429, 5xx and network errors (bounded attempts,
 * a 429's Retry-After honoured), after which the chain fails for this pass. viem's own retries
 * are off (`retryCount: 0`): this module owns the retry policy.
 */
import type { Hex, PublicClient } from 'viem';
import type { ChainConfig } from '../chains.js';
import { recordRpcError } from '../metrics.js';
import type { BlockTimeSource } from './evm-block-times.js';
import { hexToNumber, type DecodeContext, type RawLog } from './evm-decode.js';
import { RangeTooWide, type AdaptiveRange, type EvmScanOptions, type EvmScanStats } from './evm-range.js';
import type { CapGuard, LogFilter } from './log-caps.js';
import {
  backOffBeforeRetry,
  classifyEvmError,
  describeError,
  isRevert,
  retryAfterMs,
  sleep,
} from './rpc-retry.js';
import type { ScannerLogger } from './scanner.js';

export function toHex(n: number): Hex {
  return `0x${n.toString(16)}`;
}

export /** One scanner's state for one pass: the chain, its client, the options, the figures, the caches. */
interface EvmScan {
  chain: ChainConfig;
  network: string;
  identity: Hex;
  reputation: Hex;
  client: PublicClient;
  o: EvmScanOptions;
  stats: EvmScanStats;
  log: ScannerLogger;
  /** Block timestamps: the pass's cache and how to fetch a block. */
  blockSource: BlockTimeSource;
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
  /**
   * Hashes of the blocks this pass fetched for their times (at most HASHES_KEPT, the newest): a
   * batch's checkpoint hash is one of them (the window's last block is fetched with its block
   * times), so the write of a batch does not wait for a request of its own.
   */
  hashes: Map<number, string>;
  /**
   * A client that sends concurrent requests as JSON-RPC batches of at most 10 (block times, the
   * census's plain reads).
   */
  batchClient: PublicClient;
}

/**
 * One JSON-RPC call with the retry policy. With `forLogs`, range-class errors (and timeouts
 * while the range can still shrink) are thrown as RangeTooWide for the caller to halve.
 */
export async function rpcCall<T>(
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
export async function getLogs(
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

/**
 * A block by number as the node answers it (null when it has none); through `client` (the
 * scanner's batching client for block times: concurrent requests leave as JSON-RPC batches).
 */
export function getBlock(s: EvmScan, n: number, client: PublicClient = s.client): Promise<unknown> {
  return rpcCall(s, `eth_getBlockByNumber ${n}`, () =>
    client.request({ method: 'eth_getBlockByNumber', params: [toHex(n), false] }),
  );
}

/** Fails when the endpoint serves another chain id than the configured one. */
export async function verifyChainId(s: EvmScan): Promise<void> {
  const id = await rpcCall(s, 'eth_chainId', () => s.client.request({ method: 'eth_chainId' }));
  const n = hexToNumber(id);
  if (s.chain.chainId !== null && n !== s.chain.chainId) {
    throw new Error(
      `${s.chain.rpcUrl} serves chain id ${n ?? String(id)}, but ${s.network} is configured as ${s.chain.chainId}`,
    );
  }
}

/** Block hashes kept per scanner (see EvmScan.hashes). */
const HASHES_KEPT = 4_096;

/** A block's hash from its answer, lower-cased; null when malformed or absent. */
function hashOf(block: unknown): string | null {
  const hash = (block as { hash?: unknown } | null)?.hash;
  return typeof hash === 'string' && /^0x[0-9a-fA-F]{64}$/.test(hash) ? hash.toLowerCase() : null;
}

/** Keeps the hash of a block fetched for its time (see EvmScan.hashes). */
export function rememberHash(s: EvmScan, n: number, block: unknown): void {
  const hash = hashOf(block);
  if (hash === null) return;
  s.hashes.set(n, hash);
  if (s.hashes.size > HASHES_KEPT) s.hashes.delete(s.hashes.keys().next().value!);
}

/**
 * A block's hash, lower-cased (null when the node has no such block): as this pass fetched it
 * with the block's time, else asked now.
 */
export async function blockHashAt(s: EvmScan, block: number): Promise<string | null> {
  return s.hashes.get(block) ?? hashOf(await getBlock(s, block));
}

/** The node's latest block number. */
export async function headBlock(s: EvmScan): Promise<number> {
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
export async function firstBlockWithCode(s: EvmScan, head: number): Promise<number> {
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

export function readsOf(s: EvmScan): EvmReads {
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
