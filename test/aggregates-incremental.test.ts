/**
 * The incremental refresh of the free aggregates equals a full rebuild: random passes of ingest
 * batches (registrations, transfers back and forth, self-ratings, revocations of old and new
 * ratings, out-of-domain values, metadata declaring a type, several chains and tags), each
 * followed by the after-pass (incremental) refresh; after every pass every aggregate table is
 * compared row for row with a full rebuild of the same index. Runs on PGlite, or on PostgreSQL
 * with TEST_DATABASE_URL / DATABASE_URL.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../src/db/database.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import type { IndexEvent } from '../src/index-events.js';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

const NETWORKS = ['base', 'optimism'] as const;
const WALLETS = [
  '0x00000000000000000000000000000000000000a1',
  '0x00000000000000000000000000000000000000a2',
  '0x00000000000000000000000000000000000000a3',
  '0x00000000000000000000000000000000000000a4',
];
const TAGS = ['trust', 'liveness', ''];
const HOSTS = ['https://one.example/f', 'https://two.example/f', 'ipfs://x'];
const TABLES = [
  'agg_agent',
  'agg_wallet_chain',
  'agg_wallet',
  'agg_chain',
  'agg_chain_day',
  'agg_facet',
  'agg_type',
  'agg_issuer',
];

/** One generated action; resolved into events against the running state. */
type Action =
  | { t: 'register'; n: number; agent: number; owner: number }
  | { t: 'transfer'; n: number; agent: number; to: number }
  | {
      t: 'rate';
      n: number;
      agent: number;
      rater: number;
      value: number;
      tag: number;
      host: number;
      day: number;
    }
  | { t: 'revoke'; n: number; pick: number }
  | { t: 'type'; n: number; agent: number; type: number };

const action: fc.Arbitrary<Action> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('register' as const),
      n: fc.nat(1),
      agent: fc.nat(4),
      owner: fc.nat(3),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      t: fc.constant('transfer' as const),
      n: fc.nat(1),
      agent: fc.nat(4),
      to: fc.nat(3),
    }),
  },
  {
    weight: 8,
    arbitrary: fc.record({
      t: fc.constant('rate' as const),
      n: fc.nat(1),
      agent: fc.nat(4),
      rater: fc.nat(3),
      value: fc.oneof(fc.integer({ min: 0, max: 100 }), fc.constantFrom(-5, 150)),
      tag: fc.nat(2),
      host: fc.nat(2),
      day: fc.nat(3),
    }),
  },
  { weight: 2, arbitrary: fc.record({ t: fc.constant('revoke' as const), n: fc.nat(1), pick: fc.nat(50) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      t: fc.constant('type' as const),
      n: fc.nat(1),
      agent: fc.nat(4),
      type: fc.nat(2),
    }),
  },
);

async function dump(db: Database): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const t of TABLES) {
    const rows = await db.query<Record<string, unknown>>(`SELECT * FROM ${t}`);
    out[t] = rows
      .map((r) => JSON.stringify(r, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)))
      .sort();
  }
  return out;
}

describe('incremental refresh of the free aggregates', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await openTestDatabase();
  });
  afterAll(() => t.close());

  it('equals a full rebuild after every pass', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(action, { minLength: 1, maxLength: 25 }), { minLength: 1, maxLength: 4 }),
        async (passes) => {
          run += 1;
          const db = t.db;
          // a fresh index per run (same database)
          await db.query(`DELETE FROM chains`);
          for (const table of [
            'ratings',
            'revocations',
            'ownership_transfers',
            'agent_metadata',
            'agents',
            'agg_meta',
          ]) {
            await db.query(`DELETE FROM ${table}`);
          }
          for (const n of NETWORKS)
            await db.query(`INSERT INTO chains (network, kind, chain_id) VALUES ($1, 'evm', 1)`, [n]);
          await refreshAggregates(db); // the first refresh is a full one (nothing to compare yet)
          const block: Record<string, number> = { base: 100, optimism: 100 };
          const rated: { n: string; agent: string; rater: string; idx: string }[] = [];
          const counters = new Map<string, number>();
          let seq = 0;
          for (const pass of passes) {
            const byNet = new Map<string, IndexEvent[]>();
            for (const a of pass) {
              const network = NETWORKS[a.n]!;
              block[network]! += 1;
              seq += 1;
              const pos = {
                network,
                txHash: `0x${run.toString(16).padStart(8, '0')}${seq.toString(16).padStart(56, '0')}`,
                logIndex: 0,
                blockNumber: block[network]!,
                blockTime: new Date(Date.UTC(2026, 0, 1) + block[network]! * 3_600_000 * 7),
              };
              const list = byNet.get(network) ?? [];
              byNet.set(network, list);
              if (a.t === 'register') {
                list.push({
                  ...pos,
                  kind: 'registered',
                  agentId: String(a.agent),
                  agentUri: '',
                  minter: WALLETS[a.owner]!,
                });
                list.push({
                  ...pos,
                  logIndex: 1,
                  kind: 'transfer',
                  agentId: String(a.agent),
                  from: '0x0000000000000000000000000000000000000000',
                  to: WALLETS[a.owner]!,
                });
              } else if (a.t === 'transfer') {
                list.push({
                  ...pos,
                  kind: 'transfer',
                  agentId: String(a.agent),
                  from: WALLETS[0]!,
                  to: WALLETS[a.to]!,
                });
              } else if (a.t === 'rate') {
                const rater = WALLETS[a.rater]!;
                const key = `${network}|${a.agent}|${rater}`;
                const idx = String((counters.get(key) ?? 0) + 1);
                counters.set(key, Number(idx));
                rated.push({ n: network, agent: String(a.agent), rater, idx });
                list.push({
                  ...pos,
                  blockTime: new Date(Date.UTC(2026, 0, 1 + a.day) + block[network]! * 1000),
                  kind: 'feedback',
                  agentId: String(a.agent),
                  rater,
                  feedbackIndex: idx,
                  valueRaw: String(a.value),
                  valueDecimals: 0,
                  value: String(a.value),
                  tag1: TAGS[a.tag]!,
                  tag2: '',
                  endpoint: '',
                  feedbackUri: HOSTS[a.host]!,
                  feedbackHash: null,
                });
              } else if (a.t === 'revoke') {
                const target = rated.filter((r) => r.n === network)[a.pick % Math.max(1, rated.length)];
                if (!target) continue;
                list.push({
                  ...pos,
                  kind: 'revocation',
                  agentId: target.agent,
                  rater: target.rater,
                  feedbackIndex: target.idx,
                });
              } else {
                list.push({
                  ...pos,
                  kind: 'metadata',
                  agentId: String(a.agent),
                  key: 'type',
                  valueHex: '0x',
                  valueText: ['trading', 'oracle', 'search'][a.type]!,
                });
              }
            }
            for (const [network, events] of byNet) {
              await ingestBatch(db, events, {
                network,
                lastScannedBlock: block[network]!,
                headAtLastSync: block[network]!,
                caughtUp: true,
              });
            }
            const inc = await refreshAggregates(db, { incremental: true });
            expect(inc.mode).toBe('incremental');
            const afterIncremental = await dump(db);
            const full = await refreshAggregates(db);
            expect(full.mode).toBe('full');
            expect(afterIncremental).toEqual(await dump(db));
          }
        },
      ),
      { numRuns: Number(process.env.FC_RUNS ?? 25) },
    );
  }, 600_000);

  it('a rollback or a first refresh asks for a full rebuild', async () => {
    const db = t.db;
    await db.query(`DELETE FROM agg_meta`);
    expect((await refreshAggregates(db, { incremental: true })).mode).toBe('full');
    expect((await refreshAggregates(db, { incremental: true })).mode).toBe('incremental');
    await db.query(`INSERT INTO agg_meta (meta_key, value) VALUES ('rebuild', '{"reason":"test"}')`);
    expect((await refreshAggregates(db, { incremental: true })).mode).toBe('full');
    expect((await refreshAggregates(db, { incremental: true })).mode).toBe('incremental');
  });
});
