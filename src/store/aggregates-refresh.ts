/**
 * The free aggregates, refreshed after each index pass in ONE transaction (readers on PostgreSQL
 * keep seeing the previous set until it commits). Free routes read these tables; they never scan
 * the ratings table. The math is the scoring policy (see sql-fragments.ts and src/scoring).
 *
 * Incremental: the per-agent pieces (by class, by tag1, by issuer host) are recomputed for the
 * agents the writes since the last refresh touched (new ratings, revocations, transfers,
 * metadata, URIs, registrations, found by block above each chain's checkpoint at that refresh);
 * the per-wallet rows of those agents' owners, now and at the last refresh; the activity of the days new
 * ratings fell on; the class-independent distinct counts only ever grow by the new ratings
 * (agg_member). The small top-level tables (chains, facets, types, issuers) are then summed from
 * those pieces. A full rebuild is the same code with every agent, wallet and day in scope.
 *
 * Every statement here writes (the agg_* tables), so it lives in store/; the free routes read
 * those tables from src/read/, and `readRefreshMeta` (the refresh stamp) is src/read/refresh-meta.ts.
 */
import type { Database } from '../db/database.js';
import { SHRINKAGE_K } from '../scoring/policies.js';
import {
  EXACT_AVG,
  NEW_COLS,
  refreshAgents,
  refreshChains,
  refreshFacets,
  refreshIssuers,
  refreshMembers,
  refreshTypes,
  refreshWalletChains,
  refreshWallets,
} from './aggregates-steps.js';

const AGG_TABLES = [
  'agg_agent',
  'agg_agent_tag',
  'agg_agent_host',
  'agg_agent_rater',
  'agg_member',
  'agg_wallet_chain',
  'agg_wallet',
  'agg_chain',
  'agg_chain_day',
  'agg_facet',
  'agg_type',
  'agg_issuer',
] as const;

interface RefreshReport {
  refreshed_at: string;
  wallets: number;
  prior: number | null;
  millis: number;
  /** 'full': every table rebuilt; 'incremental': only what the writes since the last refresh touched. */
  mode: 'full' | 'incremental';
  /** Agents and wallets whose rows were recomputed. */
  agents: number;
  touched_wallets: number;
}

interface RefreshOptions {
  now?: () => Date;
  /**
   * Recompute only what changed since the last refresh (the after-pass hook asks for this). A full
   * rebuild happens anyway when there is no previous refresh, after a rollback or a migration
   * that asks for one. Writes are found by block above each chain's checkpoint at the last
   * refresh (ratings, revocations, transfers, metadata, URIs, registrations): rows written
   * below a checkpoint outside the ingest (by hand) are only picked up by a full rebuild.
   */
  incremental?: boolean;
}

interface RefreshMetaValue {
  refreshed_at: string;
  prior: number | null;
  k: number;
  /** Each chain's checkpoint (last_scanned_block) this refresh covered; null = never scanned. */
  through?: Record<string, number | null>;
}

/**
 * Recomputes the free aggregates in ONE transaction (REPEATABLE READ on PostgreSQL, so the
 * checkpoints it records are exactly those of the rows it read). Free routes read these tables;
 * they never scan the ratings table.
 */
export async function refreshAggregates(
  db: Database,
  opts: RefreshOptions | (() => Date) = {},
): Promise<RefreshReport> {
  const o: RefreshOptions = typeof opts === 'function' ? { now: opts } : opts;
  const now = o.now ?? (() => new Date());
  const started = Date.now();
  const report = await db.transaction(async (tx) => {
    if (db.kind === 'postgres') await tx.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    const meta = await tx.query<{ meta_key: string; value: RefreshMetaValue }>(
      `SELECT meta_key, value FROM agg_meta WHERE meta_key IN ('refresh', 'rebuild')`,
    );
    const prev = meta.find((m) => m.meta_key === 'refresh')?.value;
    const rebuild = meta.some((m) => m.meta_key === 'rebuild');
    const chains = await tx.query<{ network: string; last_scanned_block: number | null }>(
      `SELECT network, last_scanned_block FROM chains ORDER BY network`,
    );
    const through: Record<string, number | null> = {};
    for (const c of chains)
      through[c.network] = c.last_scanned_block === null ? null : Number(c.last_scanned_block);
    const incremental = o.incremental === true && !rebuild && prev?.through !== undefined;

    // The scope: which agents and wallets to recompute, which days, which ratings are new.
    await tx.query(
      `CREATE TEMP TABLE IF NOT EXISTS refresh_since (network TEXT PRIMARY KEY, block BIGINT NOT NULL)`,
    );
    await tx.query(
      `CREATE TEMP TABLE IF NOT EXISTS refresh_agents (network TEXT, agent_id TEXT, PRIMARY KEY (network, agent_id))`,
    );
    await tx.query(`CREATE TEMP TABLE IF NOT EXISTS refresh_wallets (wallet TEXT PRIMARY KEY)`);
    await tx.query(
      `CREATE TEMP TABLE IF NOT EXISTS refresh_days (network TEXT, day DATE, PRIMARY KEY (network, day))`,
    );
    await tx.query(
      `CREATE TEMP TABLE IF NOT EXISTS refresh_reset (network TEXT, agent_id TEXT, PRIMARY KEY (network, agent_id))`,
    );
    for (const t of ['refresh_new', 'refresh_revoked']) {
      await tx.query(`
        CREATE TEMP TABLE IF NOT EXISTS ${t} (network TEXT, agent_id TEXT, rater TEXT, value NUMERIC, revoked BOOLEAN,
          tag1 TEXT, feedback_uri TEXT, block_time TIMESTAMPTZ, block_number BIGINT, revoked_block BIGINT)`);
    }
    for (const t of [
      'refresh_since',
      'refresh_agents',
      'refresh_wallets',
      'refresh_days',
      'refresh_reset',
      'refresh_new',
      'refresh_revoked',
    ]) {
      await tx.query(`DELETE FROM ${t}`);
    }
    if (incremental) {
      // a chain never covered (or new) counts from block -1: everything on it is new
      const since = chains.map((c) => [c.network, prev.through?.[c.network] ?? -1] as const);
      await tx.query(
        `INSERT INTO refresh_since (network, block) SELECT * FROM unnest($1::text[], $2::bigint[])`,
        [since.map((x) => x[0]), since.map((x) => x[1])],
      );
      // The ratings written since (and the older ones revoked since), chain by chain, each an
      // index range (network, block_number) / (network, revoked_block): never a scan of the table.
      for (const [network, block] of since) {
        await tx.query(
          `INSERT INTO refresh_new (${NEW_COLS}) SELECT ${NEW_COLS} FROM ratings WHERE network = $1 AND block_number > $2`,
          [network, block],
        );
        await tx.query(
          `INSERT INTO refresh_revoked (${NEW_COLS}) SELECT ${NEW_COLS} FROM ratings
            WHERE network = $1 AND revoked AND revoked_block > $2 AND block_number <= $2`,
          [network, block],
        );
      }
      await tx.query(`
        INSERT INTO refresh_agents (network, agent_id)
        SELECT network, agent_id FROM refresh_new
        UNION SELECT network, agent_id FROM refresh_revoked
        UNION SELECT t.network, t.agent_id FROM ownership_transfers t
               JOIN refresh_since s ON s.network = t.network AND t.block_number > s.block
        UNION SELECT m.network, m.agent_id FROM agent_metadata m
               JOIN refresh_since s ON s.network = m.network AND m.block_number > s.block
        UNION SELECT a.network, a.agent_id FROM agents a JOIN refresh_since s ON s.network = a.network
               AND (a.uri_block > s.block OR a.registered_block > s.block)`);
      await tx.query(`
        INSERT INTO refresh_wallets (wallet)
        SELECT a.owner FROM agents a JOIN refresh_agents d ON d.network = a.network AND d.agent_id = a.agent_id
         WHERE a.owner IS NOT NULL
        UNION SELECT c.wallet FROM agg_wallet_chain c
               JOIN refresh_agents d ON d.network = c.network AND d.agent_id = ANY(c.agent_ids)`);
      await tx.query(`
        INSERT INTO refresh_days (network, day)
        SELECT DISTINCT r.network, (r.block_time AT TIME ZONE 'UTC')::date
          FROM refresh_new r WHERE r.block_time IS NOT NULL`);
      // an agent whose owner moved: its ratings change class wholesale; recount it from its rows
      await tx.query(`
        INSERT INTO refresh_reset (network, agent_id)
        SELECT DISTINCT t.network, t.agent_id FROM ownership_transfers t
          JOIN refresh_since s ON s.network = t.network AND t.block_number > s.block`);
    } else {
      for (const t of AGG_TABLES) await tx.query(`DELETE FROM ${t}`);
      await tx.query(`INSERT INTO refresh_since (network, block) SELECT network, -1 FROM chains`);
      await tx.query(`
        INSERT INTO refresh_agents (network, agent_id)
        SELECT network, agent_id FROM agents UNION SELECT DISTINCT network, agent_id FROM ratings`);
      await tx.query(
        `INSERT INTO refresh_wallets (wallet) SELECT DISTINCT owner FROM agents WHERE owner IS NOT NULL`,
      );
      await tx.query(`
        INSERT INTO refresh_days (network, day)
        SELECT DISTINCT network, (block_time AT TIME ZONE 'UTC')::date FROM ratings WHERE block_time IS NOT NULL`);
    }
    // ratings of a chain that is not in the chains table (none in practice) are never "new"
    // incrementally; the full rebuild sees them through the unfiltered queries below.
    const fresh = incremental ? 'refresh_new' : 'ratings';
    await refreshAgents(tx, fresh);
    await refreshMembers(tx, fresh);
    await refreshWalletChains(tx);
    await refreshWallets(tx);
    await refreshChains(tx);
    await refreshFacets(tx);
    await refreshTypes(tx);
    await refreshIssuers(tx);
    const [p] = await tx.query<{ prior: number | null; wallets: number }>(
      `SELECT ${EXACT_AVG('final_score')} AS prior, count(*) AS wallets FROM agg_wallet WHERE final_score IS NOT NULL`,
    );
    const [n] = await tx.query<{ agents: number; wallets: number }>(
      `SELECT (SELECT count(*) FROM refresh_agents)::int AS agents, (SELECT count(*) FROM refresh_wallets)::int AS wallets`,
    );
    const refreshedAt = now().toISOString();
    const value: RefreshMetaValue = {
      refreshed_at: refreshedAt,
      prior: p?.prior ?? null,
      k: SHRINKAGE_K,
      through,
    };
    await tx.query(
      `INSERT INTO agg_meta (meta_key, value) VALUES ('refresh', $1::jsonb)
       ON CONFLICT (meta_key) DO UPDATE SET value = EXCLUDED.value`,
      [JSON.stringify(value)],
    );
    await tx.query(`DELETE FROM agg_meta WHERE meta_key = 'rebuild'`);
    return {
      refreshed_at: refreshedAt,
      wallets: Number(p?.wallets ?? 0),
      prior: p?.prior ?? null,
      millis: 0,
      mode: incremental ? ('incremental' as const) : ('full' as const),
      agents: Number(n?.agents ?? 0),
      touched_wallets: Number(n?.wallets ?? 0),
    };
  });
  return { ...report, millis: Date.now() - started };
}
