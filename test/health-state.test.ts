/**
 * An honest /health (issue 12): `status` is ok / degraded / starting with `status_reason`, from
 * the enabled chains' scan state (0 of 11 synced is never ok); GET /ready answers 200 when the
 * database answers and every migration is applied, 503 otherwise. /health stays 200 (liveness).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import { migrationFiles } from '../src/db/migrate.js';
import { createApp } from '../src/doors/http/app.js';
import { registerChains } from '../src/store/chain-state.js';
import { overallState, type ChainScanRow } from '../src/read/health.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

const NOW = new Date('2026-11-01T12:00:00Z');
const hoursAgo = (h: number) => new Date(NOW.getTime() - h * 3_600_000);

function row(network: string, over: Partial<ChainScanRow> = {}): ChainScanRow {
  return {
    network,
    kind: 'evm',
    chain_id: 1,
    enabled: true,
    last_scanned_block: null,
    head_at_last_sync: null,
    backfill_complete: false,
    last_success_at: null,
    last_error: null,
    last_error_at: null,
    gaps: 0,
    incomplete_transactions: 0,
    ...over,
  };
}

describe('overallState', () => {
  it('starting: nothing synced and nothing failed', () => {
    const s = overallState([row('base'), row('celo')], NOW, 3600);
    expect(s.status).toBe('starting');
    expect(s.reason).toContain('0 of 2');
  });

  it('degraded: nothing ever synced and chains failing, naming them', () => {
    const s = overallState(
      [row('base', { last_error: 'x', last_error_at: hoursAgo(1) }), row('celo')],
      NOW,
      3600,
    );
    expect(s.status).toBe('degraded');
    expect(s.reason).toMatch(/0 of 2 .*failing: base/);
  });

  it('degraded: one of two synced, the other never', () => {
    const s = overallState([row('base', { last_success_at: hoursAgo(0.5) }), row('celo')], NOW, 3600);
    expect(s).toMatchObject({ status: 'degraded' });
    expect(s.reason).toMatch(/1 of 2 .*not synced yet: celo/);
  });

  it('degraded: a chain whose last attempt failed after a success', () => {
    const s = overallState(
      [row('base', { last_success_at: hoursAgo(2), last_error: 'boom', last_error_at: hoursAgo(1) })],
      NOW,
      3600,
    );
    expect(s.status).toBe('degraded');
    expect(s.reason).toContain('failing: base');
  });

  it('degraded: stale past twice the period plus an hour; not judged with the indexer off', () => {
    const rows = [row('base', { last_success_at: hoursAgo(3.5) })];
    expect(overallState(rows, NOW, 3600).status).toBe('degraded');
    expect(overallState(rows, NOW, 3600).reason).toContain('stale');
    expect(overallState([row('base', { last_success_at: hoursAgo(2.5) })], NOW, 3600).status).toBe('ok');
    expect(overallState(rows, NOW, 0).status).toBe('ok');
  });

  it('ok: every enabled chain synced; disabled chains do not count; none enabled is degraded', () => {
    const s = overallState(
      [row('base', { last_success_at: hoursAgo(0.1) }), row('celo', { enabled: false })],
      NOW,
      3600,
    );
    expect(s).toEqual({ status: 'ok', reason: '1 of 1 enabled chains synced' });
    expect(overallState([row('celo', { enabled: false })], NOW, 3600).status).toBe('degraded');
  });
});

describe('GET /health status and GET /ready', () => {
  let t: TestDatabase;
  let config: Config;
  beforeAll(async () => {
    t = await openTestDatabase();
    const base = loadConfig({});
    // Two chains enabled, the rest off.
    config = {
      ...base,
      chains: base.chains.map((c) => ({ ...c, enabled: c.network === 'base' || c.network === 'celo' })),
    };
    await registerChains(t.db, config.chains);
  });
  afterAll(() => t.close());

  const app = () => createApp({ config, db: t.db, now: () => NOW });

  it('goes starting → degraded → ok with the scan state, answering 200 throughout', async () => {
    const get = async () => {
      const res = await app().request('/health');
      expect(res.status).toBe(200);
      return (await res.json()) as { status: string; status_reason: string; chains: unknown[] };
    };
    const fresh = await get();
    expect(fresh.status).toBe('starting');
    expect(fresh.status_reason).toContain('0 of 2 enabled chains');
    expect(fresh.chains).toHaveLength(11);

    await t.db.query(
      `UPDATE chains SET last_error = 'eth_chainId failed', last_error_at = $1 WHERE network = 'celo'`,
      [hoursAgo(0.2)],
    );
    await t.db.query(
      `UPDATE chains SET last_success_at = $1, last_scanned_block = 10, head_at_last_sync = 22 WHERE network = 'base'`,
      [hoursAgo(0.1)],
    );
    const half = await get();
    expect(half.status).toBe('degraded');
    expect(half.status_reason).toMatch(/1 of 2 enabled chains synced; failing: celo/);

    await t.db.query(`UPDATE chains SET last_success_at = $1, last_error = NULL WHERE network = 'celo'`, [
      hoursAgo(0.1),
    ]);
    const ok = await get();
    expect(ok).toMatchObject({ status: 'ok', status_reason: '2 of 2 enabled chains synced' });
  });

  it('/ready: 200 when migrated, 503 with the missing migration, 503 when the database does not answer', async () => {
    const ready = await app().request('/ready');
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true });
    expect(ready.headers.get('cache-control')).toBe('no-store');
    expect((await app().request('/v1/ready')).status).toBe(200);

    const last = migrationFiles().at(-1)!;
    const [saved] = await t.db.query<{ applied_at: Date }>(
      'SELECT applied_at FROM schema_migrations WHERE id = $1',
      [last],
    );
    await t.db.query('DELETE FROM schema_migrations WHERE id = $1', [last]);
    try {
      const missing = await app().request('/ready');
      expect(missing.status).toBe(503);
      expect(await missing.json()).toEqual({ ready: false, reason: `migrations not applied: ${last}` });
    } finally {
      await t.db.query('INSERT INTO schema_migrations (id, applied_at) VALUES ($1, $2)', [
        last,
        saved!.applied_at,
      ]);
    }

    // A database that does not answer: not ready (and never a 500).
    const down: Database = {
      ...t.db,
      kind: t.db.kind,
      query: async () => {
        throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
      },
    };
    const res = await createApp({ config, db: down, now: () => NOW }).request('/ready');
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ ready: false, reason: 'the database is unreachable or not migrated' });
    expect((await app().request('/ready')).status).toBe(200);
  });

  it('/ready and the state are in the OpenAPI document', async () => {
    const doc = await (await app().request('/openapi.json')).json();
    expect(Object.keys(doc.paths)).toContain('/ready');
    expect(doc.components.schemas.Health.properties.status.enum).toEqual(['ok', 'degraded', 'starting']);
    expect(doc.components.schemas.Health.required).toContain('status_reason');
  });
});
