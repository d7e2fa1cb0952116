/**
 * Runs an index pass at start and then every `config.indexerPeriodSeconds` (0 disables the
 * scheduler entirely). Passes never overlap: the next one is timed from the end of the previous
 * one, and runNow() while a pass runs returns that pass. Errors are logged, never thrown.
 * stop() cancels the timer and stops a running pass at its next batch boundary (every batch
 * written so far stays committed with its checkpoint), then waits for it.
 */
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { defaultIndexLogger } from './scanner.js';
import { runIndexPass, type IndexLogger, type PassReport, type RunIndexPassOptions } from './pass.js';

interface IndexSchedulerOptions {
  db: Database;
  config: Config;
  /** Overrides config.indexerPeriodSeconds. */
  periodSeconds?: number;
  /** Run a pass right away (default true). */
  runAtStart?: boolean;
  log?: IndexLogger;
  /** Extra options for every pass (scanner tuning, hooks, afterPass). */
  pass?: Omit<RunIndexPassOptions, 'db' | 'config'>;
}

interface IndexScheduler {
  /** Runs a pass now (or joins the running one); null when it threw or the scheduler is stopped. */
  runNow(): Promise<PassReport | null>;
  stop(): Promise<void>;
  /** True while a pass runs. */
  readonly running: boolean;
}

export function startIndexScheduler(opts: IndexSchedulerOptions): IndexScheduler {
  const period = opts.periodSeconds ?? opts.config.indexerPeriodSeconds;
  const log: IndexLogger = opts.log ?? defaultIndexLogger();
  const abort = new AbortController();
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<PassReport | null> | null = null;
  let stopped = false;

  const schedule = () => {
    if (stopped || period <= 0) return;
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = null;
      void runNow();
    }, period * 1000);
    timer.unref();
  };

  const runNow = (): Promise<PassReport | null> => {
    if (current) return current;
    if (stopped) return Promise.resolve(null);
    if (timer) {
      clearTimeout(timer);
      timer = null;
    }
    current = (async () => {
      try {
        return await runIndexPass({
          log: opts.log,
          ...opts.pass,
          db: opts.db,
          config: opts.config,
          signal: abort.signal,
        });
      } catch (e) {
        log.warn(`[index] pass failed: ${(e as Error)?.message ?? String(e)}`, {
          err: (e as Error)?.stack ?? String(e),
        });
        return null;
      } finally {
        current = null;
        schedule();
      }
    })();
    return current;
  };

  if (period > 0) {
    log.info(`[index] scheduler: a pass every ${period} s`);
    if (opts.runAtStart === false) schedule();
    else void runNow();
  } else {
    log.info('[index] scheduler disabled (INDEXER_PERIOD_SECONDS=0)');
  }

  return {
    runNow,
    get running() {
      return current !== null;
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      timer = null;
      abort.abort();
      if (current) await current;
    },
  };
}
