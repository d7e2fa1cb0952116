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
