/**
 * The rater-evidence job of a process: drain the due account-history lookups (rate-limited), then
 * recompute the evidence when its inputs moved. `serve` runs it on a timer
 * (`RATER_EVIDENCE_PERIOD_SECONDS`), `repindex index --once` and the demo once after their pass;
 * `RATER_EVIDENCE=0` turns it off (the weighting then reads no evidence, only the live breadth).
 * It never runs inside an index pass and never overlaps itself.
 */
import type { Config } from '../config.js';
import { raterEvidenceConfig } from '../config.js';
import type { Database } from '../db/database.js';
import { logger } from '../log.js';
import { refreshRaterEvidence, type EvidenceRefreshReport } from './refresh.js';
import {
  chainTransactions,
  drainTxLookups,
  lookupNetworks,
  type TxLookupContext,
  type TxRoundReport,
  type TxSource,
} from './transactions.js';
import type { ValuedToken } from './valued-tokens.js';

export interface RaterEvidenceContext {
  db: Database;
  lookups: TxLookupContext;
  knownRelayers: readonly string[];
  valuedTokens: readonly ValuedToken[];
  clock?: () => Date;
}

export interface RaterEvidenceReport {
  lookups: TxRoundReport;
  refresh: EvidenceRefreshReport;
}

/** The job's context for a process: the configured chains' transactions and limits. */
export function raterEvidenceContextFor(
  db: Database,
  config: Config,
  over: { source?: TxSource; clock?: () => Date } = {},
): RaterEvidenceContext {
  const r = raterEvidenceConfig(config);
  return {
    db,
    lookups: {
      db,
      source: over.source ?? chainTransactions(config.chains),
      ...(over.clock ? { clock: over.clock } : {}),
      options: {
        networks: lookupNetworks(config.chains),
        batch: r.txBatch,
        ratePerSecond: r.txRatePerSecond,
        maxAttempts: r.txMaxAttempts,
        retryBaseSeconds: 60,
        leaseSeconds: 120,
      },
    },
    knownRelayers: config.knownRelayers,
    valuedTokens: r.valuedTokens,
    ...(over.clock ? { clock: over.clock } : {}),
  };
}

/** One run: the due lookups (at most `maxRounds` batches), then the evidence when its inputs moved. */
export async function runRaterEvidence(
  ctx: RaterEvidenceContext,
  o: { maxRounds?: number; force?: boolean } = {},
): Promise<RaterEvidenceReport> {
  const lookups = await drainTxLookups(ctx.lookups, o.maxRounds ?? 50);
  const refresh = await refreshRaterEvidence(ctx.db, {
    knownRelayers: ctx.knownRelayers,
    valuedTokens: ctx.valuedTokens,
    ...(ctx.clock ? { now: ctx.clock } : {}),
    ...(o.force ? { force: true } : {}),
  });
  return { lookups, refresh };
}

export interface RaterEvidenceJob {
  runNow(): Promise<RaterEvidenceReport | null>;
  stop(): Promise<void>;
}

/** Runs the job every `periodSeconds` (and at start); never overlaps itself; errors are logged. */
export function startRaterEvidence(ctx: RaterEvidenceContext, periodSeconds: number): RaterEvidenceJob {
  let timer: NodeJS.Timeout | null = null;
  let current: Promise<RaterEvidenceReport | null> | null = null;
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => void runNow(), periodSeconds * 1000);
    timer.unref();
  };
  const runNow = (): Promise<RaterEvidenceReport | null> => {
    if (current) return current;
    if (stopped) return Promise.resolve(null);
    if (timer) clearTimeout(timer);
    current = (async () => {
      try {
        const r = await runRaterEvidence(ctx);
        if (r.lookups.leased > 0 || !r.refresh.skipped) logger('raters').info(r, 'rater evidence');
        return r;
      } catch (e) {
        logger('raters').warn({ err: (e as Error).message.slice(0, 300) }, 'rater evidence run failed');
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
      if (timer) clearTimeout(timer);
      if (current) await current;
    },
  };
}
