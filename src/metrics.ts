/**
 * Prometheus metrics (prom-client), served by the separate METRICS_PORT listener (src/server.ts
 * `startMetricsServer`), never by the public API. One registry per process; the named recorders
 * below are what the rest of the code calls. Per-chain scan state (head, last scanned block, lag)
 * is read from the `chains` table at scrape time (the query is src/read/metrics-gauges.ts), so a
 * pass run by another process (`repindex index --once`) shows too; the pool gauge reads the pools
 * src/db/database.ts registers in src/db/pool-registry.ts. No SQL here.
 *
 * Labels are bounded: route TEMPLATES (never a raw path), chain slugs from the configuration,
 * payment outcomes and refusal codes (codes are the paywall's own `[a-z0-9_]` codes).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Queryable } from './db/database.js';
import { registeredPools } from './db/pool-registry.js';
import { readChainScanRows, type ChainScanRow } from './read/metrics-gauges.js';

export const registry = new Registry();

const SECONDS_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const PASS_BUCKETS = [0.1, 0.5, 1, 5, 15, 30, 60, 120, 300, 900, 1800, 3600];

// ------------------------------------------------------------------ HTTP

const httpRequests = new Counter({
  name: 'repindex_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});
const httpDuration = new Histogram({
  name: 'repindex_http_request_duration_seconds',
  help: 'HTTP request latency, by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: SECONDS_BUCKETS,
  registers: [registry],
});
const rateLimited = new Counter({
  name: 'repindex_http_rate_limited_total',
  help: 'Requests refused with 429 by the rate limit, by budget.',
  labelNames: ['budget'] as const,
  registers: [registry],
});

export function recordHttpRequest(method: string, route: string, status: number, seconds: number): void {
  const labels = { method, route, status: String(status) };
  httpRequests.inc(labels);
  httpDuration.observe(labels, seconds);
}

export function recordRateLimited(budget: string): void {
  rateLimited.inc({ budget });
}

// ------------------------------------------------------------------ payments

/**
 * What happened to a paid request (or, for `reconciled` / `released`, to a claim decided later).
 * `settled`: charged and answered 200. `settled_unserved`: charged, but the answer could not be
 * produced (the database went away after settlement): the retry of the same header is served.
 * `spent_pending`: the authorization is spent on chain, but its settlement is still being recorded
 * (or its answer prepared by another request): 503, the retry of the same header is served.
 * `served_on_retry`: a settlement whose answer was owed, served to the buyer's retry.
 * `reconciled` / `released`: a claim of unknown outcome found spent (recorded) / unspent (freed).
 * `database_unavailable`: refused before anything was verified or settled (503).
 */
export type PaymentOutcome =
  | 'challenged'
  | 'verified'
  | 'settled'
  | 'settled_unserved'
  | 'spent_pending'
  | 'served_on_retry'
  | 'reconciled'
  | 'released'
  | 'database_unavailable'
  | 'reused'
  | 'refused'
  | 'facilitator_error'
  | 'settling_unknown';

const payments = new Counter({
  name: 'repindex_payments_total',
  help: 'Paywall outcomes: challenged, verified, settled, settled_unserved, spent_pending, served_on_retry, reconciled, released, database_unavailable, reused, refused (with its code), facilitator_error, settling_unknown.',
  labelNames: ['outcome', 'code'] as const,
  registers: [registry],
});

/** The last payment outcome of each request, for its access-log line (weakly held). */
const requestOutcome = new WeakMap<object, string>();

/**
 * One paywall outcome. `c` (the Hono context, optional) ties the outcome to its request's
 * access-log line; `code` is the refusal code (only for `refused`).
 */
export function recordPayment(outcome: PaymentOutcome, code?: string, c?: { req: { raw: Request } }): void {
  const safe = code && /^[a-z0-9_]{1,64}$/i.test(code) ? code : '';
  payments.inc({ outcome, code: outcome === 'refused' ? safe : '' });
  if (c) requestOutcome.set(c.req.raw, outcome === 'refused' && safe ? `refused:${safe}` : outcome);
}

/** The payment outcome recorded for a request, if any. */
export function paymentOutcomeOf(req: Request): string | undefined {
  return requestOutcome.get(req);
}

// ------------------------------------------------------------------ indexer

const chainPassSeconds = new Histogram({
  name: 'repindex_index_chain_pass_duration_seconds',
  help: 'Time one chain took in a pass, by chain and outcome (ok, failed, skipped, stopped).',
  labelNames: ['chain', 'outcome'] as const,
  buckets: PASS_BUCKETS,
  registers: [registry],
});
const chainPasses = new Counter({
  name: 'repindex_index_chain_passes_total',
  help: 'Chain passes by chain and outcome (ok, failed, skipped, stopped).',
  labelNames: ['chain', 'outcome'] as const,
  registers: [registry],
});
const passSeconds = new Histogram({
  name: 'repindex_index_pass_duration_seconds',
  help: 'Duration of a whole index pass (every chain, then the aggregate refresh).',
  buckets: PASS_BUCKETS,
  registers: [registry],
});
const eventsIngested = new Counter({
  name: 'repindex_index_events_total',
  help: 'Events read from the chain and written by the ingest, by chain.',
  labelNames: ['chain'] as const,
  registers: [registry],
});
const rpcErrors = new Counter({
  name: 'repindex_rpc_errors_total',
  help: 'RPC call failures by chain and kind (range, timeout, transient, fatal); each failed attempt counts.',
  labelNames: ['chain', 'kind'] as const,
  registers: [registry],
});
const aggregateRefresh = new Histogram({
  name: 'repindex_aggregate_refresh_duration_seconds',
  help: 'Duration of the aggregate refresh after a pass.',
  buckets: PASS_BUCKETS,
  registers: [registry],
});

const censuses = new Counter({
  name: 'repindex_census_total',
  help: 'Completeness censuses by chain and outcome (ok; mismatch: the chain and the index disagree; unchecked: a census function reverted; error: the census could not run).',
  labelNames: ['chain', 'outcome'] as const,
  registers: [registry],
});
const censusRepairs = new Counter({
  name: 'repindex_census_repairs_total',
  help: 'Repair rounds (narrow getLogs filters for what differed, then a census of those agents again) started by a census mismatch, by chain.',
  labelNames: ['chain'] as const,
  registers: [registry],
});

export function recordCensus(chain: string, outcome: 'ok' | 'mismatch' | 'unchecked' | 'error'): void {
  censuses.inc({ chain, outcome });
}

export function recordCensusRepair(chain: string): void {
  censusRepairs.inc({ chain });
}

const ingestConflicts = new Counter({
  name: 'repindex_index_batch_conflicts_total',
  help: "Batches rolled back by a deadlock or serialization failure with another chain's batch and written again, by chain.",
  labelNames: ['chain'] as const,
  registers: [registry],
});

export function recordIngestConflict(chain: string): void {
  ingestConflicts.inc({ chain });
}

const feedbackDocuments = new Counter({
  name: 'repindex_feedback_documents_total',
  help: 'Feedback-document jobs finished by the fetcher, by outcome (succeeded, retry, failed, queued).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** One feedback-document job finished with this state. */
export function recordFeedbackDocument(outcome: string): void {
  feedbackDocuments.inc({ outcome });
}

const registrationFiles = new Counter({
  name: 'repindex_registration_files_total',
  help: 'Registration-file jobs finished by the fetcher, by outcome (valid, invalid, unreachable, changed, retry, queued).',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

/** One registration-file job finished with this outcome. */
export function recordRegistrationFile(outcome: string): void {
  registrationFiles.inc({ outcome });
}

const livenessProbes = new Counter({
  name: 'repindex_liveness_probes_total',
  help: 'Endpoint liveness probes, by probe kind (a2a, mcp, web) and result (alive, dead).',
  labelNames: ['probe', 'result'] as const,
  registers: [registry],
});

/** One endpoint probed. */
export function recordLivenessProbe(probe: string, alive: boolean): void {
  livenessProbes.inc({ probe, result: alive ? 'alive' : 'dead' });
}

export function recordChainPass(chain: string, outcome: string, seconds: number, events: number): void {
  chainPassSeconds.observe({ chain, outcome }, seconds);
  chainPasses.inc({ chain, outcome });
  if (events > 0) eventsIngested.inc({ chain }, events);
}

export function recordPass(seconds: number): void {
  passSeconds.observe(seconds);
}

export function recordRpcError(chain: string, kind: string): void {
  rpcErrors.inc({ chain, kind });
}

export function recordAggregateRefresh(seconds: number): void {
  aggregateRefresh.observe(seconds);
}

// ------------------------------------------------------------------ scan state (read at scrape)

let scanSource: Queryable | null = null;

/** The database whose `chains` table the per-chain gauges read at scrape time. */
export function setMetricsDatabase(db: Queryable | null): void {
  scanSource = db;
}

type ChainRow = ChainScanRow;

async function chainRows(): Promise<ChainRow[]> {
  if (!scanSource) return [];
  try {
    return await readChainScanRows(scanSource);
  } catch {
    return [];
  }
}

/** One query per scrape feeds every per-chain gauge (the first gauge's collect fetches it). */
let scrapeRows: Promise<ChainRow[]> | null = null;
function rowsForScrape(): Promise<ChainRow[]> {
  scrapeRows ??= chainRows().finally(() => setTimeout(() => (scrapeRows = null), 0));
  return scrapeRows;
}

function chainGauge(name: string, help: string, value: (r: ChainRow, now: number) => number | null): void {
  new Gauge({
    name,
    help,
    labelNames: ['chain'] as const,
    registers: [registry],
    async collect() {
      this.reset();
      const now = Date.now();
      for (const r of await rowsForScrape()) {
        if (!r.enabled) continue;
        const v = value(r, now);
        if (v !== null) this.set({ chain: r.network }, v);
      }
    },
  });
}

chainGauge('repindex_chain_head_block', 'Chain head seen at the last sync.', (r) => r.head_at_last_sync);
chainGauge(
  'repindex_chain_last_scanned_block',
  'Last block written (the checkpoint).',
  (r) => r.last_scanned_block,
);
chainGauge('repindex_chain_lag_blocks', 'Head at the last sync minus the checkpoint.', (r) =>
  r.head_at_last_sync === null || r.last_scanned_block === null
    ? null
    : Math.max(0, r.head_at_last_sync - r.last_scanned_block),
);
chainGauge(
  'repindex_chain_lag_seconds',
  'Seconds since the chain last caught up (absent: never synced).',
  (r, now) => (r.last_success_at ? Math.max(0, (now - new Date(r.last_success_at).getTime()) / 1000) : null),
);
chainGauge(
  'repindex_chain_last_success_timestamp_seconds',
  'Unix time of the last successful sync of the chain (0: never synced).',
  (r) => (r.last_success_at ? Math.floor(new Date(r.last_success_at).getTime() / 1000) : 0),
);

chainGauge(
  'repindex_chain_census_ok',
  'Last completeness census of the chain: 1 agreed with the chain, 0 mismatch (absent: not checked).',
  (r) => (r.census_state === 'ok' ? 1 : r.census_state === 'mismatch' ? 0 : null),
);

// ------------------------------------------------------------------ database pool

// The pools are registered by src/db/database.ts in src/db/pool-registry.ts.
new Gauge({
  name: 'repindex_db_pool_connections',
  help: 'PostgreSQL pool connections by pool (primary, read) and state (total, idle, waiting = queued requests).',
  labelNames: ['pool', 'state'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const [pool, p] of registeredPools()) {
      this.set({ pool, state: 'total' }, p.totalCount);
      this.set({ pool, state: 'idle' }, p.idleCount);
      this.set({ pool, state: 'waiting' }, p.waitingCount);
    }
  },
});

let defaultsOn = false;

/** Process metrics (CPU, memory, event loop lag) with the repindex_ prefix; once per process. */
export function enableProcessMetrics(): void {
  if (defaultsOn) return;
  defaultsOn = true;
  collectDefaultMetrics({ register: registry, prefix: 'repindex_' });
}

/** The exposition text and its content type. */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}
