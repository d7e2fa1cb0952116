/**
 * The Solana scanner (@solana/kit): slots play the role of blocks.
 *  - scan(from, to) pages `getSignaturesForAddress(programId)` backwards from the newest
 *    finalized signature down to slot `from` (signatures above `to` — inside the confirmation
 *    margin — are left for the next pass), then emits the collected transactions OLDEST FIRST in
 *    contiguous slot-bounded batches, so every batch's checkpoint (its `to` slot) only ever names a
 *    slot whose transactions are all in that batch or an earlier one;
 *  - each transaction is fetched with `getTransaction` (a bounded number in flight), failed ones
 *    (meta.err) are skipped, and this program's own `Program data:` events are decoded
 *    (solana-events.ts); an event that does not decode is skipped with an escaped warning;
 *  - retries with exponential backoff and jitter on 429, 5xx, network and server-side JSON-RPC
 *    errors (bounded attempts), after which the chain fails for this pass.
 * Event identity: tx hash = the signature (base58), log index = the event's stable position among
 * the program's data lines of the transaction (solanaLogIndex), block number = the slot, block
 * time = the transaction's blockTime (null when the node has none).
 */
import {
  address,
  createSolanaRpc,
  createSolanaRpcFromTransport,
  signature as toSignature,
  type Address,
  type Rpc,
  type RpcTransport,
  type Signature,
  type SolanaRpcApi,
} from '@solana/kit';
import type { ChainConfig } from '../chains.js';
import { defaultIndexLogger, describeError, type ScannerLogger } from './evm-scanner.js';
import { recordRpcError } from '../metrics.js';
import { sanitizeText, type ChainScanner, type IndexEvent, type ScanBatch } from './scanner.js';
import { decodeEvent, extractProgramData, solanaLogIndex, toIndexEvents } from './solana-events.js';

export interface SolanaScanOptions {
  /** Signatures per getSignaturesForAddress page (the RPC maximum is 1000). */
  pageLimit: number;
  /** A batch is closed at the first slot boundary after this many transactions. */
  batchTransactions: number;
  /** getTransaction requests in flight. */
  txConcurrency: number;
  /** Attempts per request on retryable errors. */
  maxAttempts: number;
  /** First backoff delay; doubles per attempt, with full jitter, capped at maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * Genesis hash verify() expects; default: mainnet-beta's for the network `solana`, none (any
   * cluster) for other network names. null: do not check.
   */
  expectedGenesisHash?: string | null;
}

export const DEFAULT_SOLANA_SCAN_OPTIONS: SolanaScanOptions = {
  pageLimit: 1000,
  batchTransactions: 500,
  txConcurrency: 8,
  maxAttempts: 5,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
};

export const SOLANA_MAINNET_GENESIS = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';

export interface SolanaScanStats {
  requests: number;
  retries: number;
  signaturePages: number;
  transactions: number;
  failedTransactions: number;
  skippedEvents: number;
}

/** Injection points (tests): a ready RPC, or a transport for createSolanaRpcFromTransport. */
export interface SolanaRpcSource {
  rpc?: Rpc<SolanaRpcApi>;
  transport?: RpcTransport;
}

// ------------------------------------------------------------------ error classification

const FATAL_JSONRPC = new Set([-32600, -32601, -32602, -32700, -32015]);
const FATAL_TEXT_RE = /invalid param|method not found|unsupported transaction version/;

/** 'transient' (retry) or 'fatal' (give up now). */
export function classifySolanaError(err: unknown): 'transient' | 'fatal' {
  let e: unknown = err;
  for (let depth = 0; e && depth < 8; depth++) {
    const o = e as { context?: Record<string, unknown>; status?: unknown; message?: unknown; cause?: unknown };
    const status = typeof o.context?.statusCode === 'number' ? o.context.statusCode : typeof o.status === 'number' ? o.status : null;
    if (status !== null) {
      if (status === 429 || status === 408 || status >= 500) return 'transient';
      if (status >= 400) return 'fatal';
    }
    const code = typeof o.context?.__code === 'number' ? o.context.__code : null;
    if (code !== null && FATAL_JSONRPC.has(code)) return 'fatal';
    if (typeof o.message === 'string' && FATAL_TEXT_RE.test(o.message.toLowerCase())) return 'fatal';
    e = o.cause;
  }
  return 'transient';
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

interface SigInfo {
  signature: string;
  slot: number;
}

/** getTransaction's answer, reduced to what the scanner reads. */
interface TxView {
  slot: bigint | number;
  blockTime: bigint | number | null;
  meta: { err: unknown; logMessages?: readonly string[] | null } | null;
}

// ------------------------------------------------------------------ the scanner

export function createSolanaScanner(
  chain: ChainConfig,
  opts: Partial<SolanaScanOptions> = {},
  log: ScannerLogger = defaultIndexLogger(),
  source: SolanaRpcSource = {},
): ChainScanner & { solanaStats: SolanaScanStats } {
  const o: SolanaScanOptions = { ...DEFAULT_SOLANA_SCAN_OPTIONS, ...opts };
  if (!chain.programId) throw new Error(`chain "${chain.network}" has no programId`);
  const program: Address = address(chain.programId);
  const programId = chain.programId;
  const network = chain.network;
  const rpc: Rpc<SolanaRpcApi> =
    source.rpc ?? (source.transport ? createSolanaRpcFromTransport(source.transport) : createSolanaRpc(chain.rpcUrl));
  const expectedGenesis =
    o.expectedGenesisHash !== undefined ? o.expectedGenesisHash : network === 'solana' ? SOLANA_MAINNET_GENESIS : null;
  const stats: SolanaScanStats = {
    requests: 0,
    retries: 0,
    signaturePages: 0,
    transactions: 0,
    failedTransactions: 0,
    skippedEvents: 0,
  };

  function backoff(attempt: number): number {
    const cap = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (attempt - 1));
    return Math.floor(cap / 2 + Math.random() * (cap / 2));
  }

  async function call<T>(what: string, fn: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      stats.requests++;
      try {
        return await fn();
      } catch (err) {
        const kind = classifySolanaError(err);
        recordRpcError(network, kind);
        if (kind === 'fatal' || attempt >= o.maxAttempts) throw err;
        stats.retries++;
        const delay = backoff(attempt);
        log.debug?.(
          `[index] ${network}: ${what}: ${describeError(err)}; retry ${attempt}/${o.maxAttempts - 1} in ${delay} ms`,
          { chain: network, call: what, attempt, delay_ms: delay, kind },
        );
        await sleep(delay);
      }
    }
  }

  /**
   * Signatures of successful program transactions with from <= slot <= to, newest first (the
   * RPC's order). Pages backwards from the newest finalized signature; `from` = -1: to the end.
   */
  async function signatures(from: number, to: number): Promise<SigInfo[]> {
    const out: SigInfo[] = [];
    let before: Signature | undefined;
    for (;;) {
      const page = await call('getSignaturesForAddress', () =>
        rpc
          .getSignaturesForAddress(program, {
            commitment: 'finalized',
            limit: o.pageLimit,
            ...(before ? { before } : {}),
          })
          .send(),
      );
      stats.signaturePages++;
      let reachedFrom = false;
      for (const s of page) {
        const slot = Number(s.slot);
        if (slot > to) continue;
        if (slot < from) {
          reachedFrom = true;
          break;
        }
        if (s.err !== null && s.err !== undefined) {
          stats.failedTransactions++;
          continue;
        }
        out.push({ signature: s.signature, slot });
      }
      if (reachedFrom || page.length < o.pageLimit || page.length === 0) return out;
      before = page[page.length - 1]!.signature;
    }
  }

  async function fetchTx(sig: string): Promise<TxView> {
    return call(`getTransaction ${sig.slice(0, 16)}…`, async () => {
      const tx = await rpc
        .getTransaction(toSignature(sig), {
          commitment: 'finalized',
          encoding: 'json',
          maxSupportedTransactionVersion: 0,
        })
        .send();
      // A finalized signature the node cannot serve (yet): retry, never skip (it would be lost).
      if (!tx) throw new Error(`transaction ${sig} not available`);
      return tx as unknown as TxView;
    });
  }

  function warnSkip(sig: string, slot: number, index: number, why: string): void {
    stats.skippedEvents++;
    log.warn(
      `[index] ${network}: skipped an undecodable event ${JSON.stringify({
        tx: sanitizeText(sig).slice(0, 100),
        slot,
        index,
        reason: sanitizeText(why).slice(0, 300),
      })}`,
    );
  }

  function decodeTx(sig: string, fallbackSlot: number, tx: TxView): IndexEvent[] {
    stats.transactions++;
    if (!tx.meta || (tx.meta.err !== null && tx.meta.err !== undefined)) {
      if (tx.meta) stats.failedTransactions++;
      return [];
    }
    const slot = Number(tx.slot ?? fallbackSlot);
    const blockTime = tx.blockTime === null || tx.blockTime === undefined ? null : new Date(Number(tx.blockTime) * 1000);
    const logs = tx.meta.logMessages;
    if (!logs) {
      warnSkip(sig, slot, -1, 'transaction has no log messages');
      return [];
    }
    const { items, truncated } = extractProgramData(logs, programId);
    if (truncated) warnSkip(sig, slot, items.length, 'logs truncated by the node: later events are missing');
    const events: IndexEvent[] = [];
    for (const item of items) {
      if (!item.data) {
        warnSkip(sig, slot, item.index, 'malformed base64 in Program data');
        continue;
      }
      const d = decodeEvent(item.data);
      if (!d.ok) {
        if (!d.ignored) warnSkip(sig, slot, item.index, d.reason);
        continue;
      }
      events.push(
        ...toIndexEvents(d.event, {
          network,
          txHash: sig,
          logIndex: solanaLogIndex(item.index),
          blockNumber: slot,
          blockTime,
        }),
      );
    }
    return events;
  }

  /** Fetches and decodes the transactions (in the given order) with bounded concurrency. */
  async function eventsOf(sigs: SigInfo[]): Promise<IndexEvent[]> {
    const results: IndexEvent[][] = new Array(sigs.length);
    let next = 0;
    const worker = async () => {
      while (next < sigs.length) {
        const i = next++;
        const s = sigs[i]!;
        results[i] = decodeTx(s.signature, s.slot, await fetchTx(s.signature));
      }
    };
    await Promise.all(Array.from({ length: Math.min(Math.max(1, o.txConcurrency), sigs.length) }, worker));
    return results.flat();
  }

  return {
    network,
    solanaStats: stats,

    async verify() {
      const genesis = await call('getGenesisHash', () => rpc.getGenesisHash().send());
      if (expectedGenesis && genesis !== expectedGenesis)
        throw new Error(
          `${network}: the RPC endpoint serves genesis ${sanitizeText(String(genesis)).slice(0, 64)}, expected ${expectedGenesis} (wrong cluster?)`,
        );
    },

    async head() {
      return Number(await call('getSlot', () => rpc.getSlot({ commitment: 'finalized' }).send()));
    },

    async discoverStartBlock(head: number) {
      // The program's oldest signature (failed ones count: the program existed).
      let before: Signature | undefined;
      let oldest: number | null = null;
      for (;;) {
        const page = await call('getSignaturesForAddress', () =>
          rpc
            .getSignaturesForAddress(program, {
              commitment: 'finalized',
              limit: o.pageLimit,
              ...(before ? { before } : {}),
            })
            .send(),
        );
        stats.signaturePages++;
        if (page.length) oldest = Number(page[page.length - 1]!.slot);
        if (page.length < o.pageLimit) break;
        before = page[page.length - 1]!.signature;
      }
      return oldest ?? head;
    },

    async *scan(from: number, to: number): AsyncIterable<ScanBatch> {
      if (from > to) return;
      const sigs = (await signatures(from, to)).reverse(); // oldest first
      let batchFrom = from;
      let i = 0;
      while (i < sigs.length) {
        let j = Math.min(i + o.batchTransactions, sigs.length);
        // close the batch at a slot boundary: a slot's transactions never straddle two batches
        while (j < sigs.length && sigs[j]!.slot === sigs[j - 1]!.slot) j++;
        const part = sigs.slice(i, j);
        const events = await eventsOf(part);
        const batchTo = j >= sigs.length ? to : part[part.length - 1]!.slot;
        yield { from: batchFrom, to: batchTo, events };
        batchFrom = batchTo + 1;
        i = j;
      }
      if (batchFrom <= to) yield { from: batchFrom, to, events: [] };
    },
  };
}
