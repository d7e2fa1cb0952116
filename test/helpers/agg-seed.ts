/**
 * The small hand-made history of the free aggregate routes' contract tests
 * (test/http-aggregates.test.ts, test/http-aggregates-rankings.test.ts): written through the ingest
 * tables (transfers already applied as owners, self-ratings, a revocation, a real zero,
 * out-of-domain values, a burn-address owner, a hostile and an integer-like tag1, an orphan and an
 * undated rating), then `refreshAggregates`.
 */
import { afterAll, beforeAll } from 'vitest';
import { loadConfig, type Config } from '../../src/config.js';
import { createApp } from '../../src/doors/http/app.js';
import { refreshAggregates } from '../../src/store/aggregates-refresh.js';
import { registerChains } from '../../src/store/chain-state.js';
import { loadStored, type StoredAgent, type StoredRating } from './agg-expect.js';
import { openTestDatabase, type TestDatabase } from './db.js';

export const NOW = new Date('2026-10-10T12:00:00Z');
export const addr = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
export const BURN = '0x000000000000000000000000000000000000dead';
export const HOSTILE = `<script>alert(1)</script> "q" & 'q' `.repeat(20).slice(0, 500);

export const W1 = addr(0xa1); // base + optimism
export const W2 = addr(0xa2); // real zero
export const W3 = addr(0xa3); // registered, unrated
export const W4 = addr(0xa4); // polygon, decimals, hostile tag1
export const W5 = addr(0xa5); // optimism tie
export const W6 = addr(0xa6); // optimism tie
export const R = (n: number) => addr(0xb00 + n);

let txSeq = 0;
interface RatingIn {
  network: string;
  agent: string;
  rater: string;
  raw: string;
  decimals?: number;
  tag1?: string;
  uri?: string;
  at: string | null;
  block: number;
  revoked?: boolean;
}

export async function seed(t: TestDatabase) {
  const db = t.db;
  const agents: [string, string, string | null, string | null][] = [
    ['base', '1', W1, 'trading'],
    ['optimism', '1', W1, null],
    ['base', '2', W2, null],
    ['base', '3', W3, 'Data'],
    ['polygon', '7', W4, HOSTILE],
    ['base', '4', BURN, 'trading'],
    ['optimism', '5', W5, 'unknown'],
    ['optimism', '6', W6, ''],
    ['celo', '1', W3, null],
  ];
  for (const [network, id, owner, type] of agents) {
    await db.query(
      `INSERT INTO agents (network, agent_id, minter, owner, declared_type, registered_block) VALUES ($1, $2, $3, $4, $5, 1)`,
      [network, id, R(99), owner, type],
    );
  }
  const ratings: RatingIn[] = [
    {
      network: 'base',
      agent: '1',
      rater: R(1),
      raw: '90',
      tag1: 'trust',
      uri: 'https://feedback.example.com/a',
      at: '2026-10-09T10:00:00Z',
      block: 100,
    },
    {
      network: 'base',
      agent: '1',
      rater: R(2),
      raw: '80',
      tag1: 'trust',
      uri: 'https://feedback.example.com/b',
      at: '2026-10-09T10:00:00Z',
      block: 100,
    },
    {
      network: 'base',
      agent: '1',
      rater: R(3),
      raw: '7000',
      decimals: 2,
      tag1: 'liveness',
      uri: 'http://WWW.Example.com:8080/z',
      at: '2026-10-08T23:59:59Z',
      block: 90,
    },
    {
      network: 'base',
      agent: '1',
      rater: W1,
      raw: '100',
      tag1: 'trust',
      uri: 'https://feedback.example.com/self',
      at: '2026-10-07T00:00:00Z',
      block: 80,
    },
    {
      network: 'base',
      agent: '1',
      rater: R(4),
      raw: '10',
      tag1: 'trust',
      uri: 'ipfs://QmX',
      at: '2026-10-06T00:00:00Z',
      block: 70,
      revoked: true,
    },
    {
      network: 'base',
      agent: '1',
      rater: R(5),
      raw: '150',
      tag1: 'trust',
      uri: '',
      at: '2026-10-05T00:00:00Z',
      block: 60,
    },
    {
      network: 'base',
      agent: '1',
      rater: R(6),
      raw: '-5',
      tag1: '',
      uri: 'data:application/json,{}',
      at: '2026-10-05T00:00:01Z',
      block: 61,
    },
    {
      network: 'optimism',
      agent: '1',
      rater: R(1),
      raw: '60',
      tag1: 'trust',
      uri: 'https://api.shop.co.uk/r',
      at: '2026-10-09T10:00:00Z',
      block: 5000,
    },
    {
      network: 'base',
      agent: '2',
      rater: R(1),
      raw: '0',
      tag1: 'trust',
      uri: 'https://feedback.example.com/z',
      at: '2026-10-09T09:00:00Z',
      block: 99,
    },
    {
      network: 'polygon',
      agent: '7',
      rater: R(7),
      raw: '505',
      decimals: 1,
      tag1: HOSTILE,
      uri: 'https://10.0.0.1/x',
      at: '2026-09-01T00:00:00Z',
      block: 7,
    },
    {
      network: 'polygon',
      agent: '7',
      rater: R(8),
      raw: '100',
      tag1: '5',
      uri: 'https://localhost/x',
      at: '2026-09-02T00:00:00Z',
      block: 8,
    },
    { network: 'polygon', agent: '7', rater: R(9), raw: '75', tag1: '', at: null, block: 9 },
    {
      network: 'base',
      agent: '4',
      rater: R(2),
      raw: '75',
      tag1: 'activity',
      at: '2026-10-01T00:00:00Z',
      block: 50,
    },
    {
      network: 'optimism',
      agent: '5',
      rater: R(8),
      raw: '70',
      tag1: 'trust',
      at: '2026-10-03T00:00:00Z',
      block: 4000,
    },
    {
      network: 'optimism',
      agent: '6',
      rater: R(8),
      raw: '70',
      tag1: 'trust',
      at: '2026-10-03T00:00:00Z',
      block: 4000,
    },
    // Orphan: an identity the index has not registered.
    {
      network: 'base',
      agent: '99',
      rater: R(1),
      raw: '40',
      tag1: 'trust',
      at: '2026-10-02T00:00:00Z',
      block: 55,
    },
  ];
  let li = 0;
  for (const r of ratings) {
    const decimals = r.decimals ?? 0;
    const value = decimals === 0 ? r.raw : (Number(r.raw) / 10 ** decimals).toString();
    txSeq += 1;
    await db.query(
      `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals, value,
                            tag1, feedback_uri, block_number, block_time, revoked, revoked_tx)
       VALUES ($1, $2, $3, $4, $5, 1, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
      [
        r.network,
        `0x${txSeq.toString(16).padStart(64, '0')}`,
        li++,
        r.agent,
        r.rater,
        r.raw,
        decimals,
        value,
        r.tag1 ?? '',
        r.uri ?? '',
        r.block,
        r.at ? new Date(r.at) : null,
        r.revoked ?? false,
        r.revoked ? `0x${'f'.repeat(64)}` : null,
      ],
    );
  }
  await db.query(
    `UPDATE chains SET last_scanned_block = 100, head_at_last_sync = 112, backfill_complete = true,
            last_success_at = '2026-10-10T09:00:00Z' WHERE network = 'base'`,
  );
  // A dead scanner: synced once, long ago.
  await db.query(
    `UPDATE chains SET last_scanned_block = 5000, head_at_last_sync = 5012, backfill_complete = false,
            last_success_at = '2026-10-01T12:00:00Z' WHERE network = 'optimism'`,
  );
  await refreshAggregates(db, () => NOW);
}

/** The seeded index served by the app, as a describe block of the free routes' tests uses it. */
export interface SeededApp {
  config: Config;
  t: TestDatabase;
  app: ReturnType<typeof createApp>;
  /** The stored rows the expected numbers are recomputed from. */
  stored: { ratings: StoredRating[]; agents: StoredAgent[] };
  get(path: string): Promise<{ res: Response; status: number; body: any }>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

/**
 * Registers the hooks of a describe block: a fresh test database with the chains registered, this
 * history seeded and refreshed, its stored rows loaded and the app serving it at NOW; closed after.
 */
export function useSeededApp(): SeededApp {
  const s = { config: loadConfig({}) } as SeededApp;
  s.get = async (path: string) => {
    const res = await s.app.request(path);
    return { res, status: res.status, body: await res.json() };
  };
  beforeAll(async () => {
    s.t = await openTestDatabase();
    await registerChains(s.t.db, s.config.chains);
    await seed(s.t);
    s.stored = await loadStored(s.t.db);
    s.app = createApp({ config: s.config, db: s.t.db, now: () => NOW });
  });
  afterAll(() => s.t.close());
  return s;
}
