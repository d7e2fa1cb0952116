/**
 * The settlement journal's replay while `serve` runs (issue 30): a process that journaled a
 * settlement it could not record (the database went away between settle and record) records it
 * itself as soon as the database answers again, not only at its next start or reconciliation.
 *
 * A replay is due when the paywall notes an unrecorded settlement (`journal.unrecorded`), and
 * every `scanSeconds` in any case (a note lost, a journal shared with another process). While one
 * is due it is tried every `retryMs` until a pass succeeds: each try reads the journal's pending
 * settlements and records them (`replayJournal`: idempotent, so several replicas recording one
 * settlement at once leave one claim and one receipt; settlements this process is recording right
 * now are left to that write). With the database still away a try fails at once (connection
 * refused) and the next one follows `retryMs` later; nothing is read while no replay is due.
 *
 * The same loop first makes the claim repairs requests noted when they lost the database
 * (claim-repairs.ts: claims never sent to settlement released, claims of unknown outcome marked so),
 * so a buyer's retry after an outage settles at once rather than waiting for the settle timeout.
 */
import type { Config } from '../config.js';
import { isDatabaseUnavailable, type Database } from '../db/database.js';
import { logger } from '../log.js';
import { recordPayment } from '../metrics.js';
import type { ClaimRepairs } from './claim-repairs.js';
import { replayJournal, type SettlementJournal } from './journal.js';

/** How often a due replay is tried (ms). */
export const JOURNAL_REPLAY_RETRY_MS = 1000;
/** How often the journal is read for pending settlements even when no replay was noted due. */
export const JOURNAL_SCAN_SECONDS = 60;

interface JournalReplay {
  /** Stops the timer and waits for a replay in progress. */
  stop(): Promise<void>;
}

export function startJournalReplay(opts: {
  db: Pick<Database, 'transaction' | 'query' | 'exec'>;
  journal: SettlementJournal;
  /** Claims requests left behind when they lost the database (claim-repairs.ts), made first. */
  repairs?: ClaimRepairs;
  config: Pick<Config, 'receiptReuseSeconds'>;
  retryMs?: number;
  scanSeconds?: number;
  now?: () => Date;
}): JournalReplay {
  const { db, journal } = opts;
  const retryMs = opts.retryMs ?? JOURNAL_REPLAY_RETRY_MS;
  const scanMs = (opts.scanSeconds ?? JOURNAL_SCAN_SECONDS) * 1000;
  const now = opts.now ?? (() => new Date());
  const log = logger('payments');
  let due = false;
  let lastPass = Date.now();
  let failing = false;
  let running: Promise<void> | null = null;
  journal.onUnrecorded(() => {
    due = true;
  });
  const repairs = opts.repairs;
  const tick = () => {
    if (running || (!due && !repairs?.size && Date.now() - lastPass < scanMs)) return;
    running = (async () => {
      const repaired = repairs?.size ? await repairs.apply(db) : 0;
      if (repaired > 0) {
        log.info(
          { repaired },
          `repaired ${repaired} payment claim(s) left by requests that lost the database`,
        );
      }
      return replayJournal(db, journal, now(), opts.config.receiptReuseSeconds);
    })()
      .then((n) => {
        due = false;
        lastPass = Date.now();
        if (failing)
          log.info({ journal: journal.path }, 'settlement journal replay: the database answers again');
        failing = false;
        for (let i = 0; i < n; i++) recordPayment('reconciled');
        if (n > 0) {
          log.warn(
            { replayed: n, journal: journal.path, outcome: 'reconciled', source: 'journal' },
            `recorded ${n} settlement(s) from the journal while running`,
          );
        }
      })
      .catch((err: unknown) => {
        // Still due: tried again in retryMs. Said once per outage.
        due = true;
        if (!failing) {
          log.warn(
            { err: (err as Error).message, journal: journal.path, database: isDatabaseUnavailable(err) },
            `settlement journal replay failed: tried again every ${retryMs} ms until it succeeds`,
          );
        }
        failing = true;
      })
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, retryMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
