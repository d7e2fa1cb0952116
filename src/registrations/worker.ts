/**
 * What `serve` runs beside the indexer for registration files (REGISTRATION_FETCH) and liveness
 * (LIVENESS_PROBES): every REGISTRATION_FETCH_PERIOD_SECONDS, a drain of the registration queue
 * (./fetcher.ts), then the probes that are due (src/liveness/prober.ts) within a time budget; never
 * overlapping itself. `index --once` runs one such step after its pass.
 */
import { registrationsConfig, type Config } from '../config.js';
import type { Database } from '../db/database.js';
import { startPeriodic, type PeriodicWorker } from '../documents/queue.js';
import { drainProbes, proberContextFor, type ProbeReport } from '../liveness/prober.js';
import { logger } from '../log.js';
import { drainRegistrations, registrationContextFor, type RegistrationReport } from './fetcher.js';

export interface RegistrationStep {
  files: RegistrationReport | null;
  probes: ProbeReport | null;
}

/** One step: the due registration files (at most `rounds` rounds), then the due probes (within `probeBudgetMs`). */
export async function runRegistrationStep(
  db: Database,
  config: Config,
  opts: { rounds: number; probeBudgetMs: number; signal?: AbortSignal },
): Promise<RegistrationStep> {
  const r = config.registrations ?? registrationsConfig({});
  const files = r.enabled
    ? await drainRegistrations(registrationContextFor(db, config), opts.rounds, opts.signal)
    : null;
  if (files && files.leased > 0) logger('registrations').info(files, 'registration files fetched');
  const probes = r.liveness
    ? await drainProbes(proberContextFor(db, config), opts.probeBudgetMs, opts.signal)
    : null;
  if (probes && probes.probed > 0) logger('liveness').info(probes, 'endpoints probed');
  return { files, probes };
}

/** The periodic step of `serve` (null when both the fetcher and the probes are off). */
export function startRegistrationWorker(
  db: Database,
  config: Config,
): PeriodicWorker<RegistrationStep> | null {
  const r = config.registrations ?? registrationsConfig({});
  if (!r.enabled && !r.liveness) return null;
  // The probes stop well before the next period (a step never overlaps the next one).
  const probeBudgetMs = Math.max(1000, Math.min(50_000, r.periodSeconds * 800));
  return startPeriodic(
    'registrations',
    r.periodSeconds,
    (signal) => runRegistrationStep(db, config, { rounds: 50, probeBudgetMs, signal }),
    'registration step failed',
  );
}
