/**
 * The machinery every durable off-chain queue shares (feedback documents, src/documents/fetcher.ts;
 * registration files, src/registrations/fetcher.ts): one round works through the jobs a lease
 * returned with a bounded number of workers, politely (one job at a time per host: off-chain hosts
 * are concentrated, and other hosts' jobs go first meanwhile), and finishes each job with its
 * outcome; a periodic worker repeats a drain on a timer without ever overlapping itself. The
 * leases, outcomes and SQL are each queue's own.
 */
import { logger } from '../log.js';

export interface QueueRound<J, O> {
  jobs: readonly J[];
  /** Jobs processed at once. */
  concurrency: number;
  /** The host a job talks to (null: none, e.g. a data: URI); one job per host at a time. */
  host(job: J): string | null;
  /** Works one job; a throw becomes `onError`'s outcome. */
  process(job: J): Promise<O>;
  onError(job: J, e: Error): O;
  /** Stores the outcome (the host is free again already). */
  finish(job: J, outcome: O): Promise<void>;
}

/** Processes the round's jobs (never more than `concurrency` at once, one per host) and finishes each. */
export async function runQueueRound<J, O>(r: QueueRound<J, O>): Promise<void> {
  const pending = [...r.jobs];
  const busy = new Set<string>();
  const waiters: (() => void)[] = [];
  const take = async (): Promise<J | null> => {
    for (;;) {
      if (pending.length === 0) return null;
      const i = pending.findIndex((j) => {
        const h = r.host(j);
        return h === null || !busy.has(h);
      });
      if (i >= 0) {
        const job = pending.splice(i, 1)[0]!;
        const h = r.host(job);
        if (h !== null) busy.add(h);
        return job;
      }
      await new Promise<void>((w) => waiters.push(w));
    }
  };
  const release = (job: J) => {
    const h = r.host(job);
    if (h !== null) busy.delete(h);
    for (const w of waiters.splice(0)) w();
  };
  const worker = async () => {
    for (let job = await take(); job !== null; job = await take()) {
      let outcome: O;
      try {
        outcome = await r.process(job);
      } catch (e) {
        outcome = r.onError(job, e as Error);
      } finally {
        release(job);
      }
      await r.finish(job, outcome);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(r.concurrency, r.jobs.length)) }, worker));
}

export interface PeriodicWorker<R> {
  /** Runs now (or joins the run in progress). */
  runNow(): Promise<R | null>;
  stop(): Promise<void>;
}

/**
 * Runs `run` at start and then every `periodSeconds` after the previous run ended; never overlaps
 * itself; a failed run is logged (under `component`) and the next one is scheduled all the same.
 * `stop()` aborts the signal `run` is given (a run that waits may end early) and awaits it.
 */
export function startPeriodic<R>(
  component: string,
  periodSeconds: number,
  run: (signal: AbortSignal) => Promise<R>,
  failure: string,
): PeriodicWorker<R> {
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<R | null> | null = null;
  let stopped = false;
  const abort = new AbortController();
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void runNow(), periodSeconds * 1000);
    timer.unref();
  };
  const runNow = (): Promise<R | null> => {
    if (current) return current;
    if (stopped) return Promise.resolve(null);
    if (timer) clearTimeout(timer);
    current = (async () => {
      try {
        return await run(abort.signal);
      } catch (e) {
        logger(component).warn({ err: (e as Error).message.slice(0, 300) }, failure);
        return null;
      } finally {
        current = null;
        schedule();
      }
    })();
    return current;
  };
  void runNow();
  return {
    runNow,
    async stop() {
      stopped = true;
      abort.abort();
      if (timer) clearTimeout(timer);
      if (current) await current;
    },
  };
}
