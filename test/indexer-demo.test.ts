/**
 * The offline demo as a fixture: three local chains, the played scenario, indexed by the real
 * pass. Every fact the scenario recorded must be in the index exactly. The run's global setup
 * built it once with `startDemo()` (helpers/demo-fixture.ts); this file reads its own copy.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/db/database.js';
import { DemoDatabaseError, startDemo, type Demo } from '../src/demo/run-demo.js';
import { HOSTILE_TAG1 } from '../src/demo/scenario.js';
import { scaleDecimal } from '../src/indexer/scanner.js';
import { openTestDatabase, testDatabaseUrl, type TestDatabase } from './helpers/db.js';
import { migratedDataDir } from './helpers/db-template.js';
import { openDemoCopy } from './helpers/demo.js';
import { quietLogger } from './helpers/indexer-fixtures.js';

let demo: Demo;

beforeAll(async () => {
  demo = await openDemoCopy();
}, 120_000);

afterAll(async () => {
  await demo?.close();
});

const lc = (s: string) => s.toLowerCase();

describe('demo fixture', () => {
  it('indexes the three scenario chains and never scans the 8 disabled ones', async () => {
    const { pass, facts } = demo;
    expect(pass.status === 'ok' && pass.failed).toEqual([]);
    // a full census of each chain through the Multicall3 every local node carries from genesis
    expect(pass.status === 'ok' && pass.chains.map((c) => c.census)).toEqual(
      Array(3).fill({
        state: 'ok',
        scope: 'full',
        method: 'multicall3',
        repairs: 0,
        repaired: 0,
        differences: 0,
        calls: expect.any(Number),
      }),
    );
    expect(pass.status === 'ok' && pass.chains.map((c) => c.network).sort()).toEqual([
      'arbitrum',
      'base',
      'optimism',
    ]);
    const chains = await demo.db.query<Record<string, unknown>>('SELECT * FROM chains ORDER BY network');
    expect(chains).toHaveLength(11);
    for (const c of chains) {
      const played = facts.chains[c.network as 'base'];
      if (played) {
        expect(c).toMatchObject({ enabled: true, backfill_complete: true, last_error: null });
        // the completeness census agrees with the registries on the whole played scenario
        expect(c).toMatchObject({ census_state: 'ok', config_warning: null });
        expect(c.census_block).not.toBeNull();
        expect(c.last_scanned_block as number).toBeGreaterThanOrEqual(played.lastBlock);
        expect(c.head_at_last_sync).toBe((c.last_scanned_block as number) + 12);
      } else {
        expect(c).toMatchObject({ enabled: false, last_scanned_block: null, last_success_at: null });
      }
    }
    const [n] = await demo.db.query<{ agents: number; ratings: number; revocations: number }>(
      `SELECT (SELECT count(*) FROM agents)::int AS agents, (SELECT count(*) FROM ratings)::int AS ratings,
              (SELECT count(*) FROM revocations)::int AS revocations`,
    );
    expect(n).toEqual({
      agents: facts.totals.agents,
      ratings: facts.totals.ratings,
      revocations: facts.totals.revocations,
    });
  });

  it('stores every rating with its transaction, exact value, block time and revoked flag', async () => {
    const rows = await demo.db.query<Record<string, unknown>>('SELECT * FROM ratings');
    const byKey = new Map(rows.map((r) => [`${r.network}|${r.tx_hash}|${r.rater}|${r.feedback_index}`, r]));
    const revokedBy = new Map(
      demo.facts.revoked.map((v) => [`${v.network}|${lc(v.rater)}|${v.agentId}|${v.feedbackIndex}`, v]),
    );
    for (const f of demo.facts.ratings) {
      const r = byKey.get(`${f.network}|${lc(f.txHash)}|${lc(f.rater)}|${f.feedbackIndex}`);
      expect(r, JSON.stringify(f)).toBeDefined();
      expect(r!.agent_id).toBe(String(f.agentId));
      expect(r!.value_raw).toBe(f.value);
      expect(r!.value_decimals).toBe(f.valueDecimals);
      expect(r!.value).toBe(scaleDecimal(BigInt(f.value), f.valueDecimals));
      expect(r!.block_number).toBe(f.blockNumber);
      expect((r!.block_time as Date).getTime()).toBe(f.timestamp * 1000);
      expect(r!.tag1).toBe(f.tag1);
      expect(r!.feedback_uri).toBe(f.feedbackURI);
      expect(r!.revoked).toBe(f.revoked);
      const rv = revokedBy.get(`${f.network}|${lc(f.rater)}|${f.agentId}|${f.feedbackIndex}`);
      if (f.revoked) {
        expect(r!.revoked_tx).toBe(lc(rv!.txHash));
        expect((r!.revoked_at as Date).getTime()).toBe(rv!.timestamp * 1000);
      } else {
        expect(r!.revoked_tx).toBeNull();
      }
    }
    const [hostile] = await demo.db.query<{ tag1: string }>('SELECT tag1 FROM ratings WHERE tx_hash = $1', [
      lc(demo.facts.hostileTag1.txHash),
    ]);
    expect(hostile!.tag1).toBe(HOSTILE_TAG1);
  });

  it('joins every agent to its current owner (not its minter) and its declared type', async () => {
    const rows = await demo.db.query<Record<string, unknown>>('SELECT * FROM agents');
    const byKey = new Map(rows.map((r) => [`${r.network}|${r.agent_id}`, r]));
    for (const a of demo.facts.agents) {
      const r = byKey.get(`${a.network}|${a.agentId}`)!;
      expect(r, JSON.stringify(a)).toBeDefined();
      expect(r.owner).toBe(lc(a.owner));
      expect(r.minter).toBe(lc(a.minter));
      expect(r.agent_uri).toBe(a.agentURI);
      expect((r.registered_at as Date).getTime()).toBe(a.registeredAt * 1000);
      if (a.type) expect(r.declared_type).toBe(a.type);
    }
    const same = demo.facts.sameAgentIdOnTwoChains;
    for (const o of same.owners) expect(byKey.get(`${o.network}|${same.agentId}`)!.owner).toBe(lc(o.owner));
    expect(
      byKey.get(`${demo.facts.burnOwnedAgent.network}|${demo.facts.burnOwnedAgent.agentId}`)!.owner,
    ).toBe(lc(demo.facts.burnOwnedAgent.owner));
  });

  it('refreshed the free aggregates after the pass', async () => {
    const rows = await demo.db.query(`SELECT 1 FROM agg_meta WHERE meta_key = 'refresh'`);
    expect(rows).toHaveLength(1);
  });
});

describe('demo database guard', () => {
  it('refuses a database that holds a real index (before playing anything)', async () => {
    let other: TestDatabase | null = null;
    let dir: string | null = null;
    let target: { databaseUrl: string | null; dataDir?: string };
    if (testDatabaseUrl) {
      other = await openTestDatabase();
      await other.db.query(`INSERT INTO agents (network, agent_id, owner) VALUES ('base', '0', '0xabc')`);
      target = { databaseUrl: other.url };
    } else {
      dir = migratedDataDir(mkdtempSync(join(tmpdir(), 'repindex-demo-guard-')));
      const db = await openDatabase({ databaseUrl: null, dataDir: dir });
      await db.query(`INSERT INTO agents (network, agent_id, owner) VALUES ('base', '0', '0xabc')`);
      await db.close();
      target = { databaseUrl: null, dataDir: dir };
    }
    try {
      await expect(startDemo({ ...target, log: quietLogger() })).rejects.toBeInstanceOf(DemoDatabaseError);
    } finally {
      await other?.close();
      if (dir) rmSync(dir, { recursive: true, force: true });
    }
  });
});
