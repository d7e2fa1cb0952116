/**
 * Block timestamps for the events of a batch: the log's own `blockTimestamp` when the node gives
 * one (newer nodes do), else `eth_getBlockByNumber` (a few in parallel, as JSON-RPC batches),
 * cached per block for the pass; never the indexing time. The fetches of a window's blocks start
 * as soon as its answer arrives (`prefetchBlockTimes`), while the window is checked, the batch
 * before it decoded and written; stamping then waits only for what is still in flight.
 */
import type { IndexEvent } from '../index-events.js';
import { hexToNumber, type RawLog } from './evm-decode.js';

/** Block timestamps seen or fetched during one pass (LRU, at most `max`). */
export class BlockTimes {
  private readonly times = new Map<number, Date | null>();
  /** Blocks being fetched: their time when it arrives (a failure rejects, once retries are spent). */
  readonly inflight = new Map<number, Promise<Date | null>>();
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

/** What stamping a batch needs: the cache, how to fetch a block, how many fetches at a time. */
export interface BlockTimeSource {
  times: BlockTimes;
  /** A block by number as the node answers it (counted and retried by the caller). */
  fetchBlock(n: number): Promise<unknown>;
  concurrency: number;
}

/**
 * Starts fetching the times of `blocks` that are neither cached nor in flight (`concurrency`
 * fetches at a time); each lands in the cache and in `inflight` until it arrives. A failure is
 * seen by whoever waits for that block (stampBlockTimes), never unhandled.
 */
export function fetchBlockTimes(src: BlockTimeSource, blocks: Iterable<number>): void {
  const todo: number[] = [];
  const settle = new Map<number, { ok: (t: Date | null) => void; fail: (e: unknown) => void }>();
  for (const b of blocks) {
    if (src.times.has(b) || src.times.inflight.has(b) || settle.has(b)) continue;
    const p = new Promise<Date | null>((ok, fail) => settle.set(b, { ok, fail }));
    p.catch(() => undefined);
    src.times.inflight.set(b, p);
    todo.push(b);
  }
  let next = 0;
  const worker = async () => {
    while (next < todo.length) {
      const b = todo[next++]!;
      const s = settle.get(b)!;
      try {
        const block = await src.fetchBlock(b);
        const ts = hexToNumber((block as { timestamp?: unknown } | null)?.timestamp);
        const t = ts === null ? null : new Date(ts * 1000);
        src.times.remember(b, t);
        s.ok(t);
      } catch (e) {
        s.fail(e);
      } finally {
        src.times.inflight.delete(b);
      }
    }
  };
  for (let i = 0; i < Math.min(src.concurrency, todo.length); i++) void worker();
}

/** The blocks of `logs` whose logs carry no timestamp of their own. */
function blocksWithoutTime(logs: readonly RawLog[]): Set<number> {
  const out = new Set<number>();
  for (const l of logs) {
    if (l.blockTimestamp !== undefined && hexToNumber(l.blockTimestamp) !== null) continue;
    const b = hexToNumber(l.blockNumber);
    if (b !== null) out.add(b);
  }
  return out;
}

/** Starts fetching the times of the blocks of a window's answer (see fetchBlockTimes). */
export function prefetchBlockTimes(src: BlockTimeSource, logs: readonly RawLog[]): void {
  fetchBlockTimes(src, blocksWithoutTime(logs));
}

/**
 * Sets every event's blockTime: from the logs' own timestamps (`logs`: the raw logs of the
 * events' range), else the cache, else the node (fetches already in flight awaited, the others
 * started, `concurrency` at a time; every time is cached). One Date per block, shared by its
 * events.
 */
export async function stampBlockTimes(
  src: BlockTimeSource,
  logs: readonly RawLog[],
  events: IndexEvent[],
): Promise<void> {
  const times = new Map<number, Date | null>();
  for (const l of logs) {
    if (l.blockTimestamp === undefined) continue;
    const b = hexToNumber(l.blockNumber);
    if (b === null || times.has(b)) continue;
    const ts = hexToNumber(l.blockTimestamp);
    if (ts === null) continue;
    const t = new Date(ts * 1000);
    times.set(b, t);
    if (!src.times.has(b)) src.times.remember(b, t);
  }
  const missing = new Set<number>();
  for (const e of events) {
    const b = e.blockNumber;
    if (times.has(b)) continue;
    if (src.times.has(b)) times.set(b, src.times.touch(b));
    else missing.add(b);
  }
  fetchBlockTimes(src, missing);
  const waits = [...missing].map(
    (b) => [b, src.times.inflight.get(b) ?? Promise.resolve(src.times.peek(b) ?? null)] as const,
  );
  for (const [b, t] of waits) times.set(b, await t);
  for (const e of events) e.blockTime = times.get(e.blockNumber) ?? null;
}
