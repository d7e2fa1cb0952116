/**
 * GET /metrics (issue 12): served only by the METRICS_PORT listener, scraped over HTTP and read
 * with a Prometheus text-format parser. HTTP requests by route template and status with latency
 * histograms, 429s, payments by outcome, per-chain scan state from the chains table, pass and RPC
 * error counters, the aggregate refresh duration and (PostgreSQL) the pool.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { createApp } from '../src/doors/http/app.js';
import { refreshAfterPass } from '../src/after-pass.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { startMetricsServer, type RunningServer } from '../src/server.js';
import { openTestDatabase, testDbKind, type TestDatabase } from './helpers/db.js';
import { startObservedApp, WALLET, type ObservedApp } from './helpers/observed-app.js';
import { payment } from './helpers/x402-stub.js';
import { configFor, deadRpcUrl } from './helpers/indexer-fixtures.js';
import { migratedDataDir } from './helpers/db-template.js';
import { startServeProcess, type ServeProcess } from './helpers/serve-process.js';

let t: TestDatabase;
let app: ObservedApp;
let metrics: RunningServer;

let lastText = '';

async function scrape(): Promise<Map<string, ParsedFamily>> {
  const res = await fetch(`${metrics.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  lastText = await res.text();
  const families = parsePrometheusTextFormat(lastText);
  return new Map(families.map((f) => [f.name, f]));
}

/** A histogram's _count for one label set (the parser folds labelled histograms into one sample). */
function histogramCount(name: string, labels: string): number {
  const line = lastText.split('\n').find((l) => l.startsWith(`${name}_count{${labels}}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}

/** The value of the sample whose labels include `labels` (undefined when absent). */
function value(
  m: Map<string, ParsedFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const fam = m.get(name);
  const s = fam?.metrics.find((x) => Object.entries(labels).every(([k, v]) => x.labels?.[k] === v));
  return s?.value === undefined ? undefined : Number(s.value);
}

beforeAll(async () => {
  t = await openTestDatabase();
  app = await startObservedApp(t, { RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' });
  metrics = await startMetricsServer({ host: '127.0.0.1', port: 0, db: t.db });
});
afterAll(async () => {
  await metrics?.close();
  await app?.close();
  await t?.close();
});

describe('the metrics listener', () => {
  it('is off by default, on its own port, and never the public port', async () => {
    expect(loadConfig({}).metricsPort).toBeNull();
    expect(loadConfig({ METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    expect(() => loadConfig({ METRICS_PORT: '8080' })).toThrow(ConfigError);
    expect(() => loadConfig({ METRICS_PORT: 'x' })).toThrow(/METRICS_PORT/);
    // The public app has no /metrics, under any prefix.
    const pub = createApp(app.ctx);
    expect((await pub.request('/metrics')).status).toBe(404);
    expect((await fetch(`${app.url}/metrics`)).status).toBe(404);
    // The metrics listener serves nothing else.
    expect((await fetch(`${metrics.url}/health`)).status).toBe(404);
    expect((await fetch(`${metrics.url}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('counts HTTP requests by route template and status, with latency histograms and 429s', async () => {
    const before = await scrape();
    const h0 = value(before, 'repindex_http_requests_total', { route: '/health', status: '200' }) ?? 0;
    // Counters are process-wide and other test files of this worker count too: read deltas.
    const limited0 = value(before, 'repindex_http_rate_limited_total', { budget: 'names' }) ?? 0;
    for (const p of ['/health', '/v1/health', '/health?x=1'])
      expect((await fetch(`${app.url}${p}`)).status).toBe(200);
    expect((await fetch(`${app.url}/no/such/path-123`)).status).toBe(404);
    // The names budget (1/s, burst 2) trips on the third call.
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await fetch(`${app.url}/names/resolve`)).status);
    expect(statuses).toContain(429);

    const m = await scrape();
    expect(value(m, 'repindex_http_requests_total', { method: 'GET', route: '/health', status: '200' })).toBe(
      h0 + 3,
    );
    expect(
      value(m, 'repindex_http_requests_total', { route: 'unmatched', status: '404' }),
    ).toBeGreaterThanOrEqual(1);
    expect(value(m, 'repindex_http_requests_total', { status: '429' })).toBeGreaterThanOrEqual(1);
    expect(value(m, 'repindex_http_rate_limited_total', { budget: 'names' })).toBe(
      limited0 + statuses.filter((s) => s === 429).length,
    );
    // No raw path ever becomes a label.
    const routes = new Set(m.get('repindex_http_requests_total')!.metrics.map((x) => x.labels?.route));
    expect([...routes].some((r) => r?.includes('path-123') || r?.includes('?'))).toBe(false);
    const hist = m.get('repindex_http_request_duration_seconds')!;
    expect(hist.type).toBe('HISTOGRAM');
    expect(hist.metrics.some((x) => Number(x.buckets?.['+Inf'] ?? 0) >= 1)).toBe(true);
    expect(
      histogramCount('repindex_http_request_duration_seconds', 'method="GET",route="/health",status="200"'),
    ).toBe(h0 + 3);
  });

  it('counts payments by outcome, refusals by code', async () => {
    const before = await scrape();
    const v0 = (o: string, code = '') => value(before, 'repindex_payments_total', { outcome: o, code }) ?? 0;
    const url = `${app.url}/reputation/wallet/${WALLET}`;
    expect((await fetch(url)).status).toBe(402); // challenged
    const header = payment();
    expect((await fetch(url, { headers: { 'X-PAYMENT': header } })).status).toBe(200); // verified + settled
    expect((await fetch(url, { headers: { 'X-PAYMENT': header } })).status).toBe(200); // reused
    expect((await fetch(url, { headers: { 'X-PAYMENT': 'garbage' } })).status).toBe(402); // refused
    app.stub.verifyMode = 'refused';
    expect((await fetch(url, { headers: { 'X-PAYMENT': payment() } })).status).toBe(503); // facilitator error
    app.stub.verifyMode = 'ok';
    app.stub.settleMode = 'pending';
    expect((await fetch(url, { headers: { 'X-PAYMENT': payment() } })).status).toBe(503); // settling-unknown
    app.stub.settleMode = 'ok';

    const m = await scrape();
    const v = (o: string, code = '') =>
      (value(m, 'repindex_payments_total', { outcome: o, code }) ?? 0) - v0(o, code);
    expect(v('challenged')).toBe(1);
    expect(v('verified')).toBe(2);
    expect(v('settled')).toBe(1);
    expect(v('reused')).toBe(1);
    expect(v('refused', 'invalid_payment_header')).toBe(1);
    expect(v('facilitator_error')).toBe(2);
    expect(v('settling_unknown')).toBe(1);
  });

  it('exports per-chain scan state from the chains table, pass outcomes, RPC errors and the refresh time', async () => {
    const lastSuccess = new Date(Date.now() - 600_000);
    // A pass whose only chain cannot be reached: a failed outcome and its RPC errors.
    const config = configFor([
      {
        network: 'base',
        chainId: 8453,
        rpcUrl: await deadRpcUrl(),
        reg: {
          identityRegistry: '0x8004A169FB4a3325136EB29fA0ceB6D2e539a432',
          reputationRegistry: '0x8004BAa17C55a88189AE136b182e5fdA19dE9b63',
        },
      },
    ]);
    const before = await scrape();
    const r0 = value(before, 'repindex_rpc_errors_total', { chain: 'base', kind: 'transient' }) ?? 0;
    await runIndexPass({
      db: t.db,
      config,
      progress: 'off',
      afterPass: refreshAfterPass,
      scan: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2 },
    });
    // (The pass registered the configuration: every chain but base disabled; celo back on.)
    await t.db.query(
      `UPDATE chains SET enabled = true, last_scanned_block = 100, head_at_last_sync = 112, last_success_at = $1 WHERE network = 'celo'`,
      [lastSuccess],
    );
    const m = await scrape();
    // Disabled chains export no scan state.
    expect(value(m, 'repindex_chain_head_block', { chain: 'polygon' })).toBeUndefined();

    expect(value(m, 'repindex_chain_head_block', { chain: 'celo' })).toBe(112);
    expect(value(m, 'repindex_chain_last_scanned_block', { chain: 'celo' })).toBe(100);
    expect(value(m, 'repindex_chain_lag_blocks', { chain: 'celo' })).toBe(12);
    const lag = value(m, 'repindex_chain_lag_seconds', { chain: 'celo' })!;
    expect(lag).toBeGreaterThanOrEqual(600);
    expect(lag).toBeLessThan(900);
    expect(value(m, 'repindex_chain_last_success_timestamp_seconds', { chain: 'celo' })).toBe(
      Math.floor(lastSuccess.getTime() / 1000),
    );
    // Never synced: no lag in seconds, a last success at 0 (what the stale alert fires on).
    expect(value(m, 'repindex_chain_lag_seconds', { chain: 'base' })).toBeUndefined();
    expect(value(m, 'repindex_chain_last_success_timestamp_seconds', { chain: 'base' })).toBe(0);

    expect(
      value(m, 'repindex_index_chain_passes_total', { chain: 'base', outcome: 'failed' }),
    ).toBeGreaterThanOrEqual(1);
    expect((value(m, 'repindex_rpc_errors_total', { chain: 'base', kind: 'transient' }) ?? 0) - r0).toBe(2);
    expect(m.get('repindex_index_chain_pass_duration_seconds')?.type).toBe('HISTOGRAM');
    expect(
      m
        .get('repindex_index_pass_duration_seconds')!
        .metrics.some((x) => Number(x.buckets?.['+Inf'] ?? 0) >= 1),
    ).toBe(true);
    // The after-pass hook the CLI and the scheduler pass refreshed the aggregates and timed it.
    expect(
      m
        .get('repindex_aggregate_refresh_duration_seconds')!
        .metrics.some((x) => Number(x.buckets?.['+Inf'] ?? 0) >= 1),
    ).toBe(true);
    // Process metrics come along.
    expect(m.has('repindex_process_resident_memory_bytes')).toBe(true);
    if (testDbKind === 'postgres') {
      expect(
        value(m, 'repindex_db_pool_connections', { pool: 'primary', state: 'total' }),
      ).toBeGreaterThanOrEqual(1);
      // (the scrape's own query may be queued for a connection at that instant)
      expect(
        value(m, 'repindex_db_pool_connections', { pool: 'primary', state: 'waiting' }),
      ).toBeGreaterThanOrEqual(0);
      expect(
        value(m, 'repindex_db_pool_connections', { pool: 'primary', state: 'idle' }),
      ).toBeGreaterThanOrEqual(0);
    }
  });
});

describe('repindex serve with METRICS_PORT', () => {
  it('serves /metrics on its own port only, logs JSON, and stops cleanly on SIGTERM', async () => {
    const free = async () => {
      const s = createServer();
      await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
      const { port } = s.address() as AddressInfo;
      await new Promise<void>((r) => s.close(() => r()));
      return port;
    };
    const metricsPort = await free();
    const dataDir = migratedDataDir(mkdtempSync(join(tmpdir(), 'repindex-metrics-')));
    let serve: ServeProcess | undefined;
    try {
      // The scheduler line comes last, in the same tick as the signal handlers.
      serve = await startServeProcess({
        name: 'metrics',
        env: { DATA_DIR: dataDir, METRICS_PORT: String(metricsPort) },
        readyWhen: /scheduler disabled/,
      });
      const lines = serve
        .stdout()
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(
        lines.some(
          (l) =>
            l.component === 'serve' && String(l.msg) === `metrics on http://127.0.0.1:${metricsPort}/metrics`,
        ),
      ).toBe(true);
      const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(res.status).toBe(200);
      const fams = new Map(parsePrometheusTextFormat(await res.text()).map((f) => [f.name, f]));
      // Every enabled built-in chain, never synced yet.
      expect(
        fams.get('repindex_chain_last_success_timestamp_seconds')!.metrics.length,
      ).toBeGreaterThanOrEqual(1);
      expect((await fetch(`${serve.url}/metrics`)).status).toBe(404);
      expect(await serve.stop()).toBe(0);
    } finally {
      await serve?.kill();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 300_000);
});
