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
import { startPeriodic, type PeriodicWorker } from '../documents/queue.js';
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

export type RaterEvidenceJob = PeriodicWorker<RaterEvidenceReport>;

/** Runs the job every `periodSeconds` (and at start); never overlaps itself; errors are logged. */
export function startRaterEvidence(ctx: RaterEvidenceContext, periodSeconds: number): RaterEvidenceJob {
  return startPeriodic(
    'raters',
    periodSeconds,
    async () => {
      const r = await runRaterEvidence(ctx);
      if (r.lookups.leased > 0 || !r.refresh.skipped) logger('raters').info(r, 'rater evidence');
      return r;
    },
    'rater evidence run failed',
  );
}
