/**
 * The liveness prober: probes the endpoints of the registration files read so far
 * (`agent_endpoints`) on a schedule, politely: a round leases hosts, not endpoints, and a host is
 * probed at most once per `hostIntervalSeconds` whichever process probes (`liveness_hosts`,
 * src/store/registrations.ts `leaseProbes`); each probe (./probes.ts) records the last result, the
 * last success and the tool or skill count, and the endpoint is probed again after
 * `recheckSeconds`. A drain keeps leasing (waiting for the earliest host's turn when every due host
 * is resting) until nothing is due, its time budget is spent or its signal aborts.
 */
import { registrationsConfig, type Config } from '../config.js';
import type { Database } from '../db/database.js';
import { fetcherOptions } from '../documents/fetcher.js';
import type { FetchLimits } from '../documents/safe-fetch.js';
import { logger } from '../log.js';
import { recordLivenessProbe } from '../metrics.js';
import {
  finishProbe,
  leaseProbes,
  nextProbeAllowedAt,
  type ProbeJob,
  type ProbeOutcome,
} from '../store/registrations.js';
import { probeEndpoint } from './probes.js';

export interface ProberOptions {
  limits: FetchLimits;
  /** Hosts probed at once. */
  concurrency: number;
  hostIntervalSeconds: number;
  recheckSeconds: number;
  /** How long a leased probe keeps its endpoint (its next probe moves this far ahead). */
  leaseSeconds: number;
}

export interface ProberContext {
  db: Database;
  options: ProberOptions;
  clock?: () => Date;
  scope?: { network: string; agentIds: readonly string[] };
  /** Replaces the probes (tests). */
  probe?: (kind: ProbeJob['probe_kind'], url: string, limits: FetchLimits) => Promise<ProbeOutcome>;
}

export interface ProbeReport {
  probed: number;
  alive: number;
  dead: number;
}

export function proberOptions(config: Config): ProberOptions {
  const f = fetcherOptions(config);
  const r = config.registrations ?? registrationsConfig({});
  return {
    limits: {
      ...f.limits,
      timeoutMs: r.livenessTimeoutMs,
      userAgent: 'repindex-liveness/1 (+read-only reputation index)',
    },
    concurrency: f.concurrency,
    hostIntervalSeconds: r.livenessHostIntervalSeconds,
    recheckSeconds: r.livenessRecheckSeconds,
    leaseSeconds: Math.max(60, Math.ceil((r.livenessTimeoutMs / 1000) * 4)),
  };
}

export function proberContextFor(db: Database, config: Config): ProberContext {
  return { db, options: proberOptions(config) };
}

/** Leases one host per slot (up to `concurrency` hosts), probes one due endpoint of each, records it. */
export async function runProbeRound(ctx: ProberContext): Promise<ProbeReport> {
  const clock = ctx.clock ?? (() => new Date());
  const o = ctx.options;
  const jobs = await leaseProbes(
    ctx.db,
    clock(),
    Math.max(1, o.concurrency),
    o.hostIntervalSeconds,
    o.leaseSeconds,
    ctx.scope ?? null,
  );
  const report: ProbeReport = { probed: jobs.length, alive: 0, dead: 0 };
  await Promise.all(
    jobs.map(async (job) => {
      let result: ProbeOutcome;
      try {
        result = await (ctx.probe ?? probeEndpoint)(job.probe_kind, job.url, o.limits);
      } catch (e) {
        logger('liveness').warn({ err: (e as Error).message.slice(0, 200) }, 'probe failed');
        result = {
          alive: false,
          reason: 'internal_error',
          toolCount: null,
          skillCount: null,
          latencyMs: null,
        };
      }
      if (await finishProbe(ctx.db, job, clock(), result, o.recheckSeconds))
        recordLivenessProbe(job.probe_kind, result.alive);
      if (result.alive) report.alive++;
      else report.dead++;
    }),
  );
  return report;
}

/** Waits `ms`, or less when `signal` aborts (at once when it already has). */
function pause(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * Probes until nothing is due (or `budgetMs` is spent): when every due host rests, waits for the
 * earliest one's turn (within the budget).
 */
export async function drainProbes(
  ctx: ProberContext,
  budgetMs = 50_000,
  signal?: AbortSignal,
): Promise<ProbeReport> {
  const clock = ctx.clock ?? (() => new Date());
  const end = Date.now() + budgetMs;
  const total: ProbeReport = { probed: 0, alive: 0, dead: 0 };
  while (Date.now() < end && !signal?.aborted) {
    const r = await runProbeRound(ctx);
    total.probed += r.probed;
    total.alive += r.alive;
    total.dead += r.dead;
    if (r.probed > 0) continue;
    const next = await nextProbeAllowedAt(ctx.db, clock(), ctx.scope ?? null);
    if (next === null) break;
    // a host due now that another process holds (its lease ends soon): a short pause, not a spin
    const wait = Math.max(100, next.getTime() - clock().getTime());
    if (Date.now() + wait >= end) break;
    await pause(Math.min(wait, 60_000), signal);
  }
  return total;
}
