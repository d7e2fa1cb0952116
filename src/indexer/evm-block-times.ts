/**
 * Block timestamps for the events of a batch: the log's own `blockTimestamp` when the node gives
 * one (newer nodes do), else `eth_getBlockByNumber` (a few in parallel), cached per block for the
 * pass; never the indexing time.
 */
import type { IndexEvent } from '../index-events.js';
import { hexToNumber, type RawLog } from './evm-decode.js';

/** Block timestamps seen or fetched during one pass (LRU, at most `max`). */
export class BlockTimes {
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

/** What stamping a batch needs: the cache, how to fetch a block, how many fetches at a time. */
export interface BlockTimeSource {
  times: BlockTimes;
  /** A block by number as the node answers it (counted and retried by the caller). */
  fetchBlock(n: number): Promise<unknown>;
  concurrency: number;
}

/**
 * Sets every event's blockTime: from the logs' own timestamps (`logs`: the raw logs of the
 * events' range), else the cache, else the node (`concurrency` fetches at a time; every time is
 * cached). One Date per block, shared by its events.
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
  const missing: number[] = [];
  for (const e of events) {
    const b = e.blockNumber;
    if (times.has(b)) continue;
    if (src.times.has(b)) times.set(b, src.times.touch(b));
    else {
      times.set(b, null);
      missing.push(b);
    }
  }
  let next = 0;
  const worker = async () => {
    while (next < missing.length) {
      const b = missing[next++]!;
      const block = await src.fetchBlock(b);
      const ts = hexToNumber((block as { timestamp?: unknown } | null)?.timestamp);
      const t = ts === null ? null : new Date(ts * 1000);
      times.set(b, t);
      src.times.remember(b, t);
    }
  };
  await Promise.all(Array.from({ length: Math.min(src.concurrency, missing.length) }, worker));
  for (const e of events) e.blockTime = times.get(e.blockNumber) ?? null;
}
