/**
 * The Solana scanner (@solana/kit): slots play the role of blocks.
 *
 * Backfill (scan(from, to)) is a bounded WALK over `getSignaturesForAddress(programId)`, newest to
 * oldest, one page (pageLimit signatures) at a time: each page's complete slots are fetched
 * (`getTransaction`, a bounded and adaptive number in flight), decoded and handed over as one
 * batch together with the walk's cursor (table solana_scan_cursor: the oldest signature written),
 * so the pass commits them in one transaction. Such batches do not move the chain's checkpoint;
 * the last one (the walk reached `from`, or the start of the program's history) moves it to `to`
 * and deletes the cursor. Memory holds one page, never the history; a crash resumes the walk
 * below the cursor's signature; a first pass lists the history once (no start-block discovery).
 *
 * Order inside a slot: `getSignaturesForAddress` lists a slot's transactions in block order
 * (newest first). A page's trailing slot may continue on the next page, so it is held back until
 * the slot is complete; then every transaction gets its index among the program's transactions of
 * the slot (oldest first, failed ones counted), and every event the position
 * (slot, tx index, event index) packed by solanaLogIndex.
 *
 * Faults that heal:
 *  - every call has a timeout (timeoutMs, AbortSignal) and is retried with exponential backoff and
 *    jitter on timeouts, 5xx, network and server-side JSON-RPC errors (maxAttempts);
 *  - HTTP 429: Retry-After is honoured (all calls pause), the number of calls in flight halves
 *    (AIMD: it grows back by one after a window of successes), and 429s do not use up maxAttempts
 *    (maxRateLimitedAttempts bounds them): a pass over a limited endpoint slows down;
 *  - `getTransaction` → null for a listed signature (nullAttempts times): recorded as a gap
 *    (scan_gaps, with its position), the checkpoint moves on, later passes retry the gaps first;
 *  - "Log truncated": the events before the cut are kept and the transaction is recorded in
 *    incomplete_transactions.
 * Failed transactions (err) are skipped; an event that does not decode is skipped with an escaped
 * warning. Event identity: tx hash = the signature (base58), block number = the slot, block time =
 * the transaction's blockTime (null when the node has none).
 *
 * Responses (ResponseAppended): every batch writes its agent wallet changes (WalletUpdated,
 * WalletResetOnOwnerSync) and classes its responses, and the later responses of the agents it
 * transfers or changes the wallet of, by history (`owner`: the agent's owner at the response's
 * position, `operator`: the agent wallet in force there, else `third_party`), since the walk writes
 * a response before the older transfers and wallet changes that decide its class.
 * Only finalized slots are read: there is no reorg to roll back.
 */
import {
  address,
  createSolanaRpc,
  createSolanaRpcFromTransport,
  signature as toSignature,
  type Address,
  type Rpc,
  type RpcTransport,
  type SolanaRpcApi,
} from '@solana/kit';
import type { ChainConfig } from '../chains.js';
import type { Queryable } from '../db/database.js';
import { recordRpcError } from '../metrics.js';
import { raiseStartBlock } from '../store/chain-state.js';
import { insertAgentWallets, reclassRespondersByHistory } from '../store/responses.js';
import {
  clearScanGaps,
  clearWalkCursor,
  readScanGaps,
  readWalkCursor,
  recordIncompleteTransactions,
  recordScanGaps,
  saveWalkCursor,
  type IncompleteTransaction,
  type ScanGap,
} from '../store/solana-scan.js';
import {
  backOffBeforeRetry,
  backoffDelay,
  classifySolanaError,
  retryAfterMs,
  sleep,
  withTimeout,
} from './rpc-retry.js';
import {
  defaultIndexLogger,
  sanitizeText,
  type ChainScanner,
  type ScanBatch,
  type ScannerLogger,
} from './scanner.js';
import type { AgentWalletEvent, IndexEvent } from '../index-events.js';
import { toAgentWallet, toIndexEvents } from './solana/normalize.js';
import { decodeEvent } from './solana/program-events.js';
import { extractProgramData } from './solana/program-logs.js';
import { SOLANA_MAX_EVENTS_PER_TX, SOLANA_MAX_TX_INDEX, solanaLogIndex } from './solana/slot-order.js';

export interface SolanaScanOptions {
  /** Signatures per getSignaturesForAddress page (the RPC maximum is 1000): one committed batch. */
  pageLimit: number;
  /** Most requests in flight (SOLANA_RPC_CONCURRENCY); a rate-limited endpoint lowers it for a while. */
  txConcurrency: number;
  /** Timeout of every RPC call (SOLANA_RPC_TIMEOUT_MS). */
  timeoutMs: number;
  /** Attempts per request on retryable errors (timeouts, 5xx, network); 429s are not counted here. */
  maxAttempts: number;
  /** Answers 429 a request may get before the pass gives up on it. */
  maxRateLimitedAttempts: number;
  /** Longest Retry-After honoured (longer ones are capped). */
  maxRetryAfterMs: number;
  /** First backoff delay; doubles per attempt, with full jitter, capped at maxDelayMs. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** getTransaction answers of null for a listed signature before it is recorded as a gap. */
  nullAttempts: number;
  /** Gaps retried at the start of each pass (oldest first). */
  gapRetryLimit: number;
  /**
   * Genesis hash verify() expects; default: mainnet-beta's for the network `solana`, none (any
   * cluster) for other network names. null: do not check.
   */
  expectedGenesisHash?: string | null;
}

const DEFAULT_SOLANA_SCAN_OPTIONS: SolanaScanOptions = {
  pageLimit: 1000,
  txConcurrency: 8,
  timeoutMs: 30_000,
  maxAttempts: 5,
  maxRateLimitedAttempts: 40,
  maxRetryAfterMs: 60_000,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  nullAttempts: 3,
  gapRetryLimit: 200,
};

const SOLANA_MAINNET_GENESIS = '5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d';

export interface SolanaScanStats {
  requests: number;
  retries: number;
  signaturePages: number;
  transactions: number;
  failedTransactions: number;
  skippedEvents: number;
  /** Answers 429 received. */
  rateLimited: number;
  timeouts: number;
  /** Lowest in-flight limit the AIMD control reached (txConcurrency when never limited). */
  minConcurrency: number;
  /** Signatures recorded as gaps this pass, and gaps healed this pass. */
  gaps: number;
  gapsHealed: number;
  /** Transactions recorded as incomplete this pass. */
  incomplete: number;
  /** Most signatures held in memory at once (one page plus a held-back slot). */
  peakSignatures: number;
}

/** Injection points: a ready RPC or a transport (tests), and the database for the walk's state. */
export interface SolanaRpcSource {
  rpc?: Rpc<SolanaRpcApi>;
  transport?: RpcTransport;
}

interface SolanaScannerDeps extends SolanaRpcSource {
  /** Where the cursor, gaps and incomplete transactions are read (without it: no resume, no gap retries). */
  db?: Queryable;
}

/**
 * Calls in flight: at most `limit` (1..max); halved on a 429 (with a pause of Retry-After for
 * every caller), grown by one after `limit` successes in a row (AIMD).
 */
class Limiter {
  inFlight = 0;
  limit: number;
  minLimit: number;
  private pausedUntil = 0;
  private streak = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly max: number) {
    this.limit = Math.max(1, max);
    this.minLimit = this.limit;
  }

  async acquire(): Promise<void> {
    for (;;) {
      const wait = this.pausedUntil - Date.now();
      if (wait > 0) {
        await sleep(wait);
        continue;
      }
      if (this.inFlight < this.limit) {
        this.inFlight++;
        return;
      }
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }

  release(): void {
    this.inFlight--;
    const w = this.waiters;
    this.waiters = [];
    for (const wake of w) wake();
  }

  succeeded(): void {
    if (this.limit >= this.max) return;
    if (++this.streak >= this.limit) {
      this.streak = 0;
      this.limit++;
    }
  }

  limited(pauseMs: number): void {
    this.limit = Math.max(1, Math.floor(this.limit / 2));
    this.minLimit = Math.min(this.minLimit, this.limit);
    this.streak = 0;
    this.pausedUntil = Math.max(this.pausedUntil, Date.now() + pauseMs);
  }
}

interface SigInfo {
  signature: string;
  slot: number;
  failed: boolean;
}

/** A signature with its position: the transaction's index among the program's ones of its slot. */
interface PositionedSig {
  signature: string;
  slot: number;
  txIndex: number;
}

/** getTransaction's answer, reduced to what the scanner reads. */
interface TxView {
  slot: bigint | number;
  blockTime: bigint | number | null;
  meta: { err: unknown; logMessages?: readonly string[] | null } | null;
}

type Gap = ScanGap;
type Incomplete = IncompleteTransaction;

/** What one page of transactions gave: events, and the state to write with them. */
interface Fetched {
  events: IndexEvent[];
  /** Agent wallet changes (written by persistFetched, not by the shared ingest). */
  wallets: AgentWalletEvent[];
  gaps: Gap[];
  healed: string[];
  incomplete: Incomplete[];
}

// ------------------------------------------------------------------ calls and decoding

/** A Solana RPC call: `call(what, fn)` runs fn under the limiter, the timeout and the retry policy. */
type SolanaCall = <T>(what: string, fn: (signal: AbortSignal) => Promise<T>) => Promise<T>;

/**
 * The retry policy of every Solana call: fatal errors at once; 429s pause every caller
 * (Retry-After, else backoff), halve the calls in flight and count against maxRateLimitedAttempts
 * only; other errors back off with jitter up to maxAttempts.
 */
function solanaCaller(
  network: string,
  o: SolanaScanOptions,
  limiter: Limiter,
  stats: SolanaScanStats,
  log: ScannerLogger,
): SolanaCall {
  return async function call<T>(what: string, fn: (signal: AbortSignal) => Promise<T>): Promise<T> {
    let attempt = 0;
    let limitedCount = 0;
    for (;;) {
      await limiter.acquire();
      stats.requests++;
      let err: unknown;
      try {
        const v = await withTimeout(what, o.timeoutMs, fn);
        limiter.succeeded();
        return v;
      } catch (e) {
        err = e;
      } finally {
        limiter.release();
      }
      const kind = classifySolanaError(err);
      recordRpcError(network, kind);
      if (kind === 'fatal') throw err;
      if (kind === 'rate_limited') {
        stats.rateLimited++;
        if (++limitedCount >= o.maxRateLimitedAttempts) throw err;
        const hinted = retryAfterMs(err);
        const pause = Math.min(o.maxRetryAfterMs, hinted ?? backoffDelay(Math.min(limitedCount, 10), o));
        limiter.limited(pause);
        stats.minConcurrency = Math.min(stats.minConcurrency, limiter.minLimit);
        stats.retries++;
        log.debug?.(
          `[index] ${network}: ${what}: rate limited (429); pausing ${pause} ms${hinted !== null ? ' (Retry-After)' : ''}, ` +
            `${limiter.limit} in flight from now`,
          { chain: network, call: what, pause_ms: pause, in_flight_limit: limiter.limit, kind },
        );
        continue; // acquire() waits out the pause
      }
      if (kind === 'timeout') stats.timeouts++;
      if (++attempt >= o.maxAttempts) throw err;
      stats.retries++;
      await backOffBeforeRetry(log, network, what, err, attempt, kind, o);
    }
  };
}

/**
 * Positions a page's complete slots: each transaction's index among the program's transactions
 * of its slot (oldest first, failed ones counted but skipped).
 */
function positionSignatures(sigs: readonly SigInfo[], stats: SolanaScanStats): PositionedSig[] {
  const out: PositionedSig[] = [];
  let i = 0;
  while (i < sigs.length) {
    let j = i;
    while (j < sigs.length && sigs[j]!.slot === sigs[i]!.slot) j++;
    const n = j - i;
    for (let k = i; k < j; k++) {
      const s = sigs[k]!;
      if (s.failed) {
        stats.failedTransactions++;
        continue;
      }
      const txIndex = n - 1 - (k - i);
      if (txIndex > SOLANA_MAX_TX_INDEX)
        throw new Error(`slot ${s.slot} has more than ${SOLANA_MAX_TX_INDEX + 1} program transactions`);
      out.push({ signature: s.signature, slot: s.slot, txIndex });
    }
    i = j;
  }
  return out;
}

/**
 * One page of the walk (newest first) added to the signatures held back from the previous page:
 * those inside [from, to], split into the complete slots (`ready`) and the lowest slot, which may
 * continue on the next page (`held`), unless the walk is done (the page was the last one, or it
 * reached below `from`).
 */
function completeSlots(
  page: readonly SigInfo[],
  held: SigInfo[],
  from: number,
  to: number,
  pageLimit: number,
): { ready: SigInfo[]; held: SigInfo[]; done: boolean; ended: boolean; reachedFrom: boolean; seen: number } {
  const ended = page.length < pageLimit;
  let reachedFrom = false;
  const fresh: SigInfo[] = held;
  for (const s of page) {
    if (s.slot > to) continue;
    if (s.slot < from) {
      reachedFrom = true;
      break;
    }
    fresh.push(s);
  }
  const done = ended || reachedFrom;
  if (done) return { ready: fresh, held: [], done, ended, reachedFrom, seen: fresh.length };
  const lowest = fresh.length ? fresh[fresh.length - 1]!.slot : null;
  const cut = lowest === null ? 0 : fresh.findIndex((s) => s.slot === lowest);
  return { ready: fresh.slice(0, cut), held: fresh.slice(cut), done, ended, reachedFrom, seen: fresh.length };
}

/** What decoding a transaction needs: the chain, the program, the figures, where skips are reported. */
interface DecodeContext {
  network: string;
  programId: string;
  stats: SolanaScanStats;
  skip(sig: string, slot: number, index: number, why: string): void;
}

/** Events of one transaction, its agent wallet changes, and why it is incomplete (null: complete). */
type Decoded = { events: IndexEvent[]; wallets: AgentWalletEvent[]; incomplete: string | null };

function decodeTransaction(p: PositionedSig, tx: TxView, c: DecodeContext): Decoded {
  const { stats, network } = c;
  stats.transactions++;
  if (!tx.meta || (tx.meta.err !== null && tx.meta.err !== undefined)) {
    if (tx.meta) stats.failedTransactions++;
    return { events: [], wallets: [], incomplete: null };
  }
  const slot = Number(tx.slot ?? p.slot);
  const blockTime =
    tx.blockTime === null || tx.blockTime === undefined ? null : new Date(Number(tx.blockTime) * 1000);
  const logs = tx.meta.logMessages;
  if (!logs) return { events: [], wallets: [], incomplete: 'the node returned no log messages' };
  const { items, truncated } = extractProgramData(logs, c.programId);
  let incomplete: string | null = truncated
    ? 'logs truncated by the node ("Log truncated"): later events are missing'
    : null;
  const events: IndexEvent[] = [];
  const wallets: AgentWalletEvent[] = [];
  for (const item of items) {
    if (item.index >= SOLANA_MAX_EVENTS_PER_TX) {
      incomplete = `more than ${SOLANA_MAX_EVENTS_PER_TX} events in one transaction`;
      break;
    }
    if (!item.data) {
      c.skip(p.signature, slot, item.index, 'malformed base64 in Program data');
      continue;
    }
    const d = decodeEvent(item.data);
    if (!d.ok) {
      if (!d.ignored) c.skip(p.signature, slot, item.index, d.reason);
      continue;
    }
    const pos = {
      network,
      txHash: p.signature,
      logIndex: solanaLogIndex(p.txIndex, item.index),
      blockNumber: slot,
      blockTime,
    };
    events.push(...toIndexEvents(d.event, pos));
    const wallet = toAgentWallet(d.event, pos);
    if (wallet) wallets.push(wallet);
  }
  return { events, wallets, incomplete };
}

// ------------------------------------------------------------------ the scanner's steps

/** One scanner's state: the chain, its RPC and the policy of its calls, the figures, the database. */
interface SolanaScan {
  network: string;
  program: Address;
  rpc: Rpc<SolanaRpcApi>;
  call: SolanaCall;
  o: SolanaScanOptions;
  stats: SolanaScanStats;
  log: ScannerLogger;
  /** Where the cursor, gaps and incomplete transactions are read (null: no resume, no gap retries). */
  db: Queryable | null;
  decode: DecodeContext;
  /** The genesis hash verify() expects (null: any cluster). */
  expectedGenesis: string | null;
}

/** The options given over the defaults (an undefined value keeps the default). */
function solanaOptions(opts: Partial<SolanaScanOptions>): SolanaScanOptions {
  const o: SolanaScanOptions = { ...DEFAULT_SOLANA_SCAN_OPTIONS };
  for (const [k, v] of Object.entries(opts))
    if (v !== undefined) (o as unknown as Record<string, unknown>)[k] = v;
  return o;
}

/** The genesis hash to expect: the option's, else mainnet-beta's for `solana`, else none. */
function expectedGenesisOf(network: string, o: SolanaScanOptions): string | null {
  if (o.expectedGenesisHash !== undefined) return o.expectedGenesisHash;
  return network === 'solana' ? SOLANA_MAINNET_GENESIS : null;
}

function emptyStats(minConcurrency: number): SolanaScanStats {
  return {
    requests: 0,
    retries: 0,
    signaturePages: 0,
    transactions: 0,
    failedTransactions: 0,
    skippedEvents: 0,
    rateLimited: 0,
    timeouts: 0,
    minConcurrency,
    gaps: 0,
    gapsHealed: 0,
    incomplete: 0,
    peakSignatures: 0,
  };
}

/** Where decoding reports an event it skips (counted, warned with the hostile text escaped). */
function decodeContextFor(
  network: string,
  programId: string,
  stats: SolanaScanStats,
  log: ScannerLogger,
): DecodeContext {
  return {
    network,
    programId,
    stats,
    skip(sig, slot, index, why) {
      stats.skippedEvents++;
      log.warn(
        `[index] ${network}: skipped an undecodable event ${JSON.stringify({
          tx: sanitizeText(sig).slice(0, 100),
          slot,
          index,
          reason: sanitizeText(why).slice(0, 300),
        })}`,
      );
    },
  };
}

/** One page of the program's signatures (newest first), below `before` when given. */
async function signaturePage(s: SolanaScan, before: string | undefined): Promise<SigInfo[]> {
  const page = await s.call('getSignaturesForAddress', (abortSignal) =>
    s.rpc
      .getSignaturesForAddress(s.program, {
        commitment: 'finalized',
        limit: s.o.pageLimit,
        ...(before ? { before: toSignature(before) } : {}),
      })
      .send({ abortSignal }),
  );
  s.stats.signaturePages++;
  return page.map((x) => ({
    signature: x.signature as string,
    slot: Number(x.slot),
    failed: x.err !== null && x.err !== undefined,
  }));
}

/** The transaction, or null when the node does not serve it after `tries` answers of null. */
async function fetchTx(s: SolanaScan, sig: string, tries: number): Promise<TxView | null> {
  for (let attempt = 1; ; attempt++) {
    const tx = await s.call(`getTransaction ${sig.slice(0, 16)}…`, (abortSignal) =>
      s.rpc
        .getTransaction(toSignature(sig), {
          commitment: 'finalized',
          encoding: 'json',
          maxSupportedTransactionVersion: 0,
        })
        .send({ abortSignal }),
    );
    if (tx) return tx as unknown as TxView;
    if (attempt >= tries) return null;
    await sleep(backoffDelay(attempt, s.o));
  }
}

/** Fetches and decodes positioned transactions, in order (null: not served), txConcurrency at a time. */
async function fetchAndDecode(
  s: SolanaScan,
  sigs: readonly PositionedSig[],
  tries: number,
): Promise<(Decoded | null)[]> {
  const results: (Decoded | null)[] = new Array(sigs.length);
  let next = 0;
  const worker = async () => {
    while (next < sigs.length) {
      const i = next++;
      const sig = sigs[i]!;
      const tx = await fetchTx(s, sig.signature, tries);
      results[i] = tx ? decodeTransaction(sig, tx, s.decode) : null;
    }
  };
  await Promise.all(Array.from({ length: Math.min(Math.max(1, s.o.txConcurrency), sigs.length) }, worker));
  return results;
}

/** Sorts decoded transactions into events, gaps (not served), healed signatures and incomplete ones. */
function collectFetched(s: SolanaScan, sigs: readonly PositionedSig[], results: (Decoded | null)[]): Fetched {
  const out: Fetched = { events: [], wallets: [], gaps: [], healed: [], incomplete: [] };
  for (const [i, r] of results.entries()) {
    const sig = sigs[i]!;
    if (!r) {
      out.gaps.push({ signature: sig.signature, slot: sig.slot, txIndex: sig.txIndex });
      continue;
    }
    out.healed.push(sig.signature);
    for (const e of r.events) out.events.push(e);
    for (const w of r.wallets) out.wallets.push(w);
    if (r.incomplete) {
      s.stats.incomplete++;
      out.incomplete.push({
        signature: sig.signature,
        slot: sig.slot,
        reason: r.incomplete,
        eventsKept: r.events.length,
      });
      s.log.warn(
        `[index] ${s.network}: transaction ${sig.signature} (slot ${sig.slot}) is incomplete: ${r.incomplete}; ` +
          `${r.events.length} events kept, recorded in incomplete_transactions`,
        {
          chain: s.network,
          tx: sig.signature,
          slot: sig.slot,
          reason: r.incomplete,
          events_kept: r.events.length,
        },
      );
    }
  }
  return out;
}

async function fetchAll(s: SolanaScan, sigs: readonly PositionedSig[], tries: number): Promise<Fetched> {
  return collectFetched(s, sigs, await fetchAndDecode(s, sigs, tries));
}

/**
 * Writes the gaps, the healed gaps, the incomplete transactions and the agent wallet changes of a
 * batch, and (after the batch's events were written) classes by the ownership and wallet history
 * its responses and the responses its transfers and wallet changes can change: the walk runs newest
 * to oldest, so the transfers and wallet changes before a response often arrive in a later batch.
 */
async function persistFetched(s: SolanaScan, tx: Queryable, f: Fetched): Promise<void> {
  await recordScanGaps(tx, s.network, f.gaps);
  if (s.db) await clearScanGaps(tx, s.network, f.healed);
  await recordIncompleteTransactions(tx, s.network, f.incomplete);
  await insertAgentWallets(tx, f.wallets);
  await reclassRespondersByHistory(
    tx,
    s.network,
    f.events.filter((e) => e.kind === 'response'),
    [...f.events.filter((e) => e.kind === 'transfer'), ...f.wallets],
  );
}

/** Gaps of earlier passes, tried again (oldest first): one non-advancing batch. */
async function* retryGaps(s: SolanaScan): AsyncGenerator<ScanBatch> {
  if (!s.db || s.o.gapRetryLimit <= 0) return;
  const sigs = await readScanGaps(s.db, s.network, s.o.gapRetryLimit);
  if (sigs.length === 0) return;
  const f = await fetchAll(s, sigs, 1);
  s.stats.gapsHealed += f.healed.length;
  if (f.healed.length)
    s.log.info(`[index] ${s.network}: ${f.healed.length} of ${sigs.length} gaps served now and indexed`, {
      chain: s.network,
      healed: f.healed.length,
      tried: sigs.length,
    });
  yield {
    from: sigs[0]!.slot,
    to: sigs[sigs.length - 1]!.slot,
    events: f.events,
    advance: false,
    persist: (tx) => persistFetched(s, tx, f),
  };
}

/** Fetches a page's complete slots; the transactions not served are counted and warned as gaps. */
async function fetchPage(s: SolanaScan, ready: readonly SigInfo[]): Promise<Fetched> {
  const f = await fetchAll(s, positionSignatures(ready, s.stats), s.o.nullAttempts);
  s.stats.gaps += f.gaps.length;
  for (const g of f.gaps)
    s.log.warn(
      `[index] ${s.network}: the node did not serve transaction ${g.signature} (slot ${g.slot}); recorded as a gap, retried on later passes`,
      { chain: s.network, tx: g.signature, slot: g.slot },
    );
  return f;
}

/**
 * The walk's last batch: moves the checkpoint to `to`, deletes the cursor and, when the walk
 * reached the start of the program's history, records its oldest slot as the start block.
 */
function finalWalkBatch(
  s: SolanaScan,
  from: number,
  to: number,
  f: Fetched,
  oldestOfHistory: number | null,
): ScanBatch {
  return {
    from,
    to,
    events: f.events,
    persist: async (tx) => {
      await persistFetched(s, tx, f);
      if (s.db) await clearWalkCursor(tx, s.network);
      if (oldestOfHistory !== null) await raiseStartBlock(tx, s.network, oldestOfHistory);
    },
  };
}

/** A batch in the middle of the walk: does not advance the checkpoint, saves the cursor at `low`. */
function midWalkBatch(s: SolanaScan, from: number, to: number, f: Fetched, low: SigInfo): ScanBatch {
  return {
    from: low.slot,
    to,
    events: f.events,
    advance: false,
    persist: async (tx) => {
      await persistFetched(s, tx, f);
      if (s.db)
        await saveWalkCursor(tx, s.network, {
          fromSlot: from,
          toSlot: to,
          beforeSignature: low.signature,
          lowSlot: low.slot,
        });
    },
  };
}

/**
 * The walk over [from, to], newest to oldest, starting below `before` (undefined: at the newest
 * signature). Yields one non-advancing batch per page of complete slots and, last, the batch
 * that moves the checkpoint to `to` and ends the walk.
 */
async function* walk(
  s: SolanaScan,
  from: number,
  to: number,
  before: string | undefined,
): AsyncGenerator<ScanBatch> {
  let cursor = before;
  // Signatures of the lowest slot seen so far, which may continue on the next page (newest first).
  let held: SigInfo[] = [];
  for (;;) {
    const page = await signaturePage(s, cursor);
    if (page.length) cursor = page[page.length - 1]!.signature;
    const step = completeSlots(page, held, from, to, s.o.pageLimit);
    s.stats.peakSignatures = Math.max(s.stats.peakSignatures, step.seen);
    const { ready, done, ended, reachedFrom } = step;
    held = step.held;
    if (!done && ready.length === 0) continue;
    const f = await fetchPage(s, ready);
    const oldest = ready.length ? ready[ready.length - 1]! : null;
    if (done) {
      yield finalWalkBatch(s, from, to, f, ended && !reachedFrom && oldest ? oldest.slot : null);
      return;
    }
    yield midWalkBatch(s, from, to, f, oldest!);
  }
}

/**
 * The walk over [from, to]: an interrupted walk over [from, c.toSlot] with c.toSlot ≤ to is
 * finished below its cursor first, then the rest is walked; any other cursor is dropped.
 */
async function* walkOrResume(s: SolanaScan, from: number, to: number): AsyncGenerator<ScanBatch> {
  let start = from;
  if (s.db) {
    const c = await readWalkCursor(s.db, s.network);
    if (c && c.fromSlot === from && c.toSlot <= to) {
      const resumeTo = c.toSlot;
      s.log.info(
        `[index] ${s.network}: resuming the walk over slots ${from}..${resumeTo} below slot ${c.lowSlot}`,
        {
          chain: s.network,
          from,
          to: resumeTo,
          low_slot: c.lowSlot,
        },
      );
      yield* walk(s, from, resumeTo, c.beforeSignature);
      start = resumeTo + 1;
    } else if (c) {
      await clearWalkCursor(s.db, s.network);
    }
  }
  if (start <= to) yield* walk(s, start, to, undefined);
}

/** Fails when the endpoint serves another cluster than the expected one. */
async function verifyGenesis(s: SolanaScan): Promise<void> {
  const genesis = await s.call('getGenesisHash', (abortSignal) =>
    s.rpc.getGenesisHash().send({ abortSignal }),
  );
  if (s.expectedGenesis && genesis !== s.expectedGenesis)
    throw new Error(
      `${s.network}: the RPC endpoint serves genesis ${sanitizeText(String(genesis)).slice(0, 64)}, expected ${s.expectedGenesis} (wrong cluster?)`,
    );
}

/** The latest finalized slot. */
async function finalizedSlot(s: SolanaScan): Promise<number> {
  return Number(
    await s.call('getSlot', (abortSignal) =>
      s.rpc.getSlot({ commitment: 'finalized' }).send({ abortSignal }),
    ),
  );
}

// ------------------------------------------------------------------ the scanner

export function createSolanaScanner(
  chain: ChainConfig,
  opts: Partial<SolanaScanOptions> = {},
  log: ScannerLogger = defaultIndexLogger(),
  deps: SolanaScannerDeps = {},
): ChainScanner & { solanaStats: SolanaScanStats } {
  const o = solanaOptions(opts);
  if (!chain.programId) throw new Error(`chain "${chain.network}" has no programId`);
  const network = chain.network;
  const limiter = new Limiter(o.txConcurrency);
  const stats = emptyStats(limiter.limit);
  const s: SolanaScan = {
    network,
    program: address(chain.programId),
    rpc:
      deps.rpc ??
      (deps.transport ? createSolanaRpcFromTransport(deps.transport) : createSolanaRpc(chain.rpcUrl)),
    call: solanaCaller(network, o, limiter, stats, log),
    o,
    stats,
    log,
    db: deps.db ?? null,
    decode: decodeContextFor(network, chain.programId, stats, log),
    expectedGenesis: expectedGenesisOf(network, o),
  };
  return {
    network,
    solanaStats: stats,
    verify: () => verifyGenesis(s),
    head: () => finalizedSlot(s),
    /**
     * No listing here: the walk of the first pass goes down to the program's oldest signature
     * itself (and records it as the start block), so the history is listed once.
     */
    discoverStartBlock: async () => 0,
    async *scan(from: number, to: number): AsyncIterable<ScanBatch> {
      if (from > to) return;
      yield* retryGaps(s);
      yield* walkOrResume(s, from, to);
    },
  };
}
