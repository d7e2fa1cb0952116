/**
 * The backfill's bounded pipeline: the scanner reads (and decodes) the next ranges while the
 * previous batch is being written. `readAhead` runs an async iterable ahead of its consumer by at
 * most `depth` items:
 *  - bounded: at most `depth` items wait, and one more is being produced (backpressure: the
 *    producer pauses while the buffer is full);
 *  - in order: items come out exactly as the source yields them, so checkpoints move in order
 *    (the consumer writes each batch with its checkpoint, one transaction at a time);
 *  - failures: a producer error comes out only after every item produced before it (nothing
 *    scanned before the error is lost); a consumer that stops (an error, a break) stops the
 *    producer: the step in flight finishes, the source is closed, nothing else is read.
 * `depth` 0 is no read-ahead at all (the source itself).
 */
import type { ChainConfig } from '../chains.js';
import type { ScanBatch } from './scanner.js';

/** Batches scanned ahead of the write by default. */
const READ_AHEAD = 2;

/**
 * An EVM chain's scan runs ahead of its writes (`depth`, default 2); a Solana walk does not (its
 * scanner reads and writes its own state in the database: cursor, gaps).
 */
export function readAheadFor(chain: ChainConfig, depth: number | undefined): number {
  return chain.kind === 'evm' ? (depth ?? READ_AHEAD) : 0;
}

/** `source`, run ahead of its consumer by at most `depth` items (see the module comment). */
export function readAhead<T>(source: AsyncIterable<T>, depth: number): AsyncIterable<T> {
  return depth < 1 ? source : ahead(source, depth);
}

async function* ahead<T>(source: AsyncIterable<T>, depth: number): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  const buffer: T[] = [];
  let inflight: Promise<void> | null = null;
  let finished = false;
  let failure: { error: unknown } | null = null;
  let stopped = false;
  let wake: (() => void) | null = null;

  const pull = (): void => {
    if (stopped || inflight || finished || failure || buffer.length >= depth) return;
    inflight = it
      .next()
      .then(
        (r) => {
          if (r.done) finished = true;
          else buffer.push(r.value);
        },
        (error: unknown) => {
          failure = { error };
        },
      )
      .finally(() => {
        inflight = null;
        const w = wake;
        wake = null;
        w?.();
        pull();
      });
  };

  try {
    for (;;) {
      pull();
      if (buffer.length > 0) {
        const item = buffer.shift()!;
        pull();
        yield item;
        continue;
      }
      if (failure) throw (failure as { error: unknown }).error;
      if (finished) return;
      await new Promise<void>((resolve) => (wake = resolve));
    }
  } finally {
    stopped = true;
    while (inflight) await inflight;
    if (!finished && !failure) await it.return?.(undefined);
  }
}

/** A deep backfill's writes are coalesced (`coalesce`) when its scan spans at least this many blocks. */
export const COALESCE_MIN_BLOCKS = 10_000;
/** Events a coalesced write holds at most (about one wide window of a dense chain). */
const COALESCE_MAX_EVENTS = 5_000;
/** How long a batch waits for the next one to join it. */
const COALESCE_WAIT_MS = 2_000;

/**
 * A deep backfill through an endpoint with a narrow range cap yields hundreds of small batches, and
 * a write's fixed costs (the transaction, the statement triggers over their transition tables, the
 * checkpoint) are paid per batch. `coalesce` merges consecutive batches into one: a batch waits up
 * to `waitMs` for the next (and the merged one for the one after), until `maxEvents`. Only
 * advancing batches with nothing of their own to persist are merged, and only when contiguous; the
 * merged batch covers exactly its parts' blocks, in order, so the checkpoint (the last part's `to`)
 * moves as before, less often. A batch that cannot join is written on its own, after the merged one;
 * a scan error comes out after the batches scanned before it.
 */
export async function* coalesce(
  source: AsyncIterable<ScanBatch>,
  maxEvents = COALESCE_MAX_EVENTS,
  waitMs = COALESCE_WAIT_MS,
): AsyncGenerator<ScanBatch> {
  const it = source[Symbol.asyncIterator]();
  // the request for the next batch, kept across a wait that ran out (it cannot be taken back)
  let pending: Promise<IteratorResult<ScanBatch>> | null = null;
  const next = () => (pending ??= it.next());
  const mergeable = (b: ScanBatch) => b.advance !== false && !b.persist;
  let held: ScanBatch | null = null;
  try {
    for (;;) {
      if (held === null) {
        const r = await next();
        pending = null;
        if (r.done) return;
        held = r.value;
      }
      let acc: ScanBatch = held;
      held = null;
      if (mergeable(acc)) {
        const deadline = Date.now() + waitMs;
        let events: ScanBatch['events'] | null = null;
        while (acc.events.length < maxEvents) {
          let r: IteratorResult<ScanBatch> | null;
          try {
            r = await within(next(), deadline - Date.now());
          } catch (e) {
            // a scan error comes out after everything scanned before it, as from readAhead
            pending = null;
            yield acc;
            throw e;
          }
          if (r === null) break;
          pending = null;
          if (r.done) {
            yield acc;
            return;
          }
          const b = r.value;
          if (!mergeable(b) || b.from !== acc.to + 1 || acc.events.length + b.events.length > maxEvents) {
            held = b;
            break;
          }
          events ??= [...acc.events];
          for (const e of b.events) events.push(e);
          acc = { from: acc.from, to: b.to, events };
        }
      }
      yield acc;
    }
  } finally {
    if (pending) await (pending as Promise<unknown>).catch(() => undefined);
    await it.return?.(undefined);
  }
}

/** `p`'s result, or null when it does not settle within `ms` (p keeps running). */
async function within<T>(p: Promise<T>, ms: number): Promise<T | null> {
  if (ms <= 0) return null;
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
