import { createRoute, z } from '@hono/zod-openapi';
import type { App, AppContext } from '../context.js';
import {
  censusView,
  chainScanRows,
  indexTotals,
  overallState,
  readiness,
  staleHours,
} from '../../../read/health.js';
import { isDatabaseUnavailable } from '../../../db/database.js';
import { migrationFiles } from '../../../db/migrate.js';
import { readRefreshMeta } from '../../../read/refresh-meta.js';
import {
  CONFIDENCE_POLICY,
  ORDERING_POLICY,
  POLICY_VERSION,
  RATER_WEIGHT_POLICY,
  READING_POLICY,
  SHRINKAGE_K,
  BURN_ADDRESSES,
  confidenceThresholds,
} from '../../../scoring/policies.js';
import { round6 } from '../../../scoring/display.js';

const ChainScanSchema = z
  .object({
    network: z.string(),
    chain_id: z.number().int().nullable(),
    enabled: z.boolean(),
    last_scanned_block: z.number().int().nullable(),
    head_at_last_sync: z.number().int().nullable(),
    backfill_complete: z.boolean(),
    last_success_at: z.string().nullable(),
    stale_hours: z.number().nullable(),
    last_error: z.string().nullable(),
    gaps: z.number().int().openapi({
      description:
        'Transactions the chain listed but its node did not serve; retried on later passes (0 on EVM chains)',
    }),
    incomplete_transactions: z.number().int().openapi({
      description:
        'Transactions whose events are known to be incomplete (the node truncated their logs; 0 on EVM chains)',
    }),
    scanned_from_block: z.number().int().nullable().openapi({
      description: 'The lowest block scanned; a startBlock moved below it is scanned on the next pass',
    }),
    census: z
      .object({
        state: z.enum(['ok', 'mismatch', 'unchecked']),
        checked_at: z.string().nullable(),
        block: z.number().int().nullable(),
        scope: z
          .enum(['full', 'sample'])
          .nullable()
          .openapi({
            description:
              'full: every minted agent was checked; sample: CENSUS_SAMPLE agents (between full censuses, or where ' +
              'a full census is not affordable without Multicall3); null: never ran or could not run',
          }),
        method: z
          .enum(['multicall3', 'eth_call'])
          .nullable()
          .openapi({
            description:
              "How the registries were read: batched through Multicall3's aggregate3 (its code found at the census " +
              'block), or plain eth_calls where the chain has no Multicall3; null: never ran',
          }),
        full_block: z.number().int().nullable().openapi({ description: 'Block of the last full census' }),
        full_checked_at: z.string().nullable().openapi({ description: 'When the last full census ran' }),
        detail: z.record(z.string(), z.unknown()).nullable(),
      })
      .openapi('ChainCensus', {
        description:
          "The last completeness census (EVM chains): the minted agents and each checked agent's owner, URI, " +
          'clients, feedback per client and revocations read from the registries at `block`, compared with the ' +
          'index. ok: they agree; mismatch: they differ after the repairs (detail.difference_count, ' +
          'detail.differences_by_kind and the first detail.differences; every one is stored); unchecked: never ran, ' +
          'off (CENSUS=0), not an EVM chain, could not run, or a census function reverted (detail.error names it)',
      }),
    warnings: z.array(z.string()).openapi({
      description: 'Configuration warnings of the last pass (e.g. registries that never emitted an event)',
    }),
  })
  .openapi('ChainScanState');

const HealthSchema = z
  .object({
    status: z.enum(['ok', 'degraded', 'starting']).openapi({
      description:
        'Overall state of the index: ok (every enabled chain synced, none failing or stale), degraded ' +
        '(a chain failing, stale or never synced, or no chain enabled), starting (no chain synced yet, none failed). ' +
        'The service answers in every state: this is not liveness (GET /health always answers 200) nor readiness (GET /ready).',
    }),
    status_reason: z.string().openapi({ description: 'Why the state is what it is, in one sentence.' }),
    agents: z.number().int(),
    feedback_entries: z.number().int(),
    chains: z.array(ChainScanSchema),
    indexer_period_seconds: z.number().int(),
    policy_version: z.string(),
    ordering_policy: z.string(),
    rater_weight_policy: z.string(),
    confidence_policy: z.string(),
    reading_policy: z.object({
      min_raters: z.number().int(),
      top_share: z.number(),
      campaign_per_rater: z.number(),
      self_gap: z.null(),
      combine: z.literal('independent'),
    }),
    confidence_thresholds: z.record(z.string(), z.unknown()),
    shrinkage: z.object({ k: z.number(), prior: z.number().nullable() }).openapi({
      description: 'k and the live index prior of the leaderboard shrinkage (null before any score)',
    }),
    aggregates_refreshed_at: z.string().nullable(),
    burn_addresses: z.array(z.string()),
    database: z
      .object({
        state: z.enum(['ok', 'unreachable']),
        last_ok_at: z.string().nullable().openapi({
          description: 'When this process last read the database (null: never since it started)',
        }),
        error: z.string().optional().openapi({ description: 'Why it is unreachable (unreachable only)' }),
      })
      .openapi({
        description:
          'Whether this process reaches its database. While it is unreachable /health still answers 200 ' +
          '(liveness: the process is fine) with the last figures it read (agents, feedback_entries, chains), ' +
          'status degraded, and /ready answers 503 (readiness); routes that need the database answer ' +
          '503 database_unavailable with Retry-After.',
      }),
  })
  .openapi('Health');

const ReadySchema = z.object({ ready: z.boolean(), reason: z.string().optional() }).openapi('Readiness');

const readyRoute = createRoute({
  method: 'get',
  path: '/ready',
  summary:
    'Readiness for load balancers: 200 when the database answers and every migration is applied, else 503 (free)',
  tags: ['free'],
  responses: {
    200: { description: 'Ready', content: { 'application/json': { schema: ReadySchema } } },
    503: {
      description: 'Not ready (database unreachable or migrations missing)',
      content: { 'application/json': { schema: ReadySchema } },
    },
  },
});

/** This build's migrations, read once. */
let expectedMigrations: string[] | null = null;

const route = createRoute({
  method: 'get',
  path: '/health',
  summary: 'Index size, scan coverage per chain and the policies in force (free)',
  tags: ['free'],
  responses: {
    200: { description: 'Health record', content: { 'application/json': { schema: HealthSchema } } },
  },
});

/** The figures /health last read from the database (shown, marked, while it is unreachable). */
interface HealthFigures {
  totals: Awaited<ReturnType<typeof indexTotals>>;
  rows: Awaited<ReturnType<typeof chainScanRows>>;
  meta: Awaited<ReturnType<typeof readRefreshMeta>>;
  at: Date;
}

export function registerHealth(app: App, ctx: AppContext): void {
  let lastKnown: HealthFigures | null = null;
  app.openapi(route, async (c) => {
    const networks = ctx.config.chains.map((ch) => ch.network);
    const now = ctx.now();
    let figures: HealthFigures;
    let unreachable: string | null = null;
    try {
      const [totals, rows, meta] = await Promise.all([
        indexTotals(ctx.db),
        chainScanRows(ctx.db, networks),
        readRefreshMeta(ctx.db),
      ]);
      figures = lastKnown = { totals, rows, meta, at: now };
    } catch (err) {
      if (!isDatabaseUnavailable(err)) throw err;
      // Liveness: the process is fine, its database is not. 200, with what it last knew.
      unreachable = (err as Error).message.slice(0, 200);
      figures = lastKnown ?? {
        totals: { agents: 0, feedback_entries: 0 },
        rows: [],
        meta: { prior: null, refreshed_at: null },
        at: now,
      };
    }
    const { totals, rows, meta } = figures;
    const state =
      unreachable === null
        ? overallState(rows, now, ctx.config.indexerPeriodSeconds)
        : {
            status: 'degraded' as const,
            reason: `the database is unreachable (${unreachable}); the figures below are the last this process read${
              lastKnown ? ` (at ${lastKnown.at.toISOString()})` : ' (none since it started)'
            }`,
          };
    c.header('Cache-Control', unreachable === null ? 'public, max-age=30' : 'no-store');
    return c.json(
      {
        status: state.status,
        status_reason: state.reason,
        ...totals,
        chains: rows.map((r) => ({
          network: r.network,
          chain_id: r.chain_id,
          enabled: r.enabled,
          last_scanned_block: r.last_scanned_block,
          head_at_last_sync: r.head_at_last_sync,
          backfill_complete: r.backfill_complete,
          last_success_at: r.last_success_at ? r.last_success_at.toISOString() : null,
          stale_hours: staleHours(r.last_success_at, now),
          last_error: r.last_error,
          gaps: r.gaps,
          incomplete_transactions: r.incomplete_transactions,
          scanned_from_block: r.scanned_from_block ?? null,
          census: censusView(r),
          warnings: r.config_warning ? [r.config_warning] : [],
        })),
        indexer_period_seconds: ctx.config.indexerPeriodSeconds,
        policy_version: POLICY_VERSION,
        ordering_policy: ORDERING_POLICY,
        rater_weight_policy: RATER_WEIGHT_POLICY,
        confidence_policy: CONFIDENCE_POLICY,
        reading_policy: { ...READING_POLICY, self_gap: null, combine: 'independent' as const },
        confidence_thresholds: confidenceThresholds(),
        shrinkage: { k: SHRINKAGE_K, prior: meta.prior === null ? null : round6(meta.prior) },
        aggregates_refreshed_at: meta.refreshed_at,
        burn_addresses: [...BURN_ADDRESSES],
        database:
          unreachable === null
            ? { state: 'ok' as const, last_ok_at: now.toISOString() }
            : {
                state: 'unreachable' as const,
                last_ok_at: lastKnown ? lastKnown.at.toISOString() : null,
                error: unreachable,
              },
      },
      200,
    );
  });

  app.openapi(readyRoute, async (c) => {
    expectedMigrations ??= migrationFiles();
    const r = await readiness(ctx.db, expectedMigrations);
    c.header('Cache-Control', 'no-store');
    return r.ready ? c.json({ ready: true }, 200) : c.json({ ready: false, reason: r.reason }, 503);
  });
}
