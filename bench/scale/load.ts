/**
 * The synthetic index of the scale benchmark, loaded by ONE `INSERT … SELECT generate_series` per
 * table (the composition is described in bench/scale.ts): the agents, the ratings of the big
 * subject and the pool, the typical and the mid subject, the revocations, the chain's checkpoint.
 */
import type { Database } from '../../src/db/database.js';
import { AGENTS, BIG, EVENTS, MID, RATERS, TYPICAL, addr } from './options.js';

/** Ratings of the typical and the mid subject: [agent id offset from AGENTS, ratings, raters, owner]. */
const EXTRA: ReadonlyArray<readonly [number, number, number, string]> = [
  [0, 30, 10, TYPICAL],
  [1, 10_000, 5_000, MID],
];

export async function load(db: Database): Promise<void> {
  const t0 = performance.now();
  await db.query(
    `INSERT INTO agents (network, agent_id, minter, owner, agent_uri, registered_block, registered_tx, registered_at,
                         owner_block, owner_log_index)
     SELECT 'base', a::text, $1, '0x' || lpad(to_hex(10001 + a), 40, '0'), 'https://agents.example/' || a || '.json',
            999000, '0x' || lpad(to_hex(a), 64, 'f'), timestamptz '2026-01-01' , 999000, 0
       FROM generate_series(0, $2::int - 1) a`,
    [addr(9_999), AGENTS],
  );
  await db.query(
    `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals,
                          value, tag1, tag2, endpoint, feedback_uri, feedback_hash, block_number, block_time,
                          revoked, revoked_tx, revoked_block, revoked_at)
     SELECT 'base', '0x' || lpad(to_hex(i), 64, '0'), i % 5,
            (CASE WHEN i % 10 < 6 THEN 0 ELSE i % $2::int END)::text,
            '0x' || lpad(to_hex(i % $3::int + 1), 40, '0'), i, 4000 + i % 6001, 2, (4000 + i % 6001) / 100.0,
            (ARRAY['trust','liveness','contractRisk','activity',''])[i % 5 + 1], '', 'https://agent.example/a2a',
            'https://feedback.example/' || i, '0x' || lpad(to_hex(i), 64, '0'),
            1000000 + i / 5, timestamptz '2026-01-01' + make_interval(secs => (1000000 + i / 5) * 2),
            i % 100 = 0,
            CASE WHEN i % 100 = 0 THEN '0x' || lpad(to_hex(i), 64, 'e') END,
            CASE WHEN i % 100 = 0 THEN 1000000 + i / 5 + 10 END,
            CASE WHEN i % 100 = 0 THEN timestamptz '2026-01-01' + make_interval(secs => (1000010 + i / 5) * 2) END
       FROM generate_series(1, $1::int) i`,
    [EVENTS, AGENTS, RATERS],
  );
  for (const [off, n, raters, owner] of EXTRA) {
    const agent = String(AGENTS + off);
    await db.query(
      `INSERT INTO agents (network, agent_id, minter, owner, agent_uri, registered_block, registered_tx, registered_at,
                           owner_block, owner_log_index)
       VALUES ('base', $1, $2, $3, 'https://agents.example/' || $1 || '.json', 999000,
               '0x' || lpad(to_hex($4::int), 64, 'd'), timestamptz '2026-01-01', 999000, 0)`,
      [agent, addr(9_999), owner, AGENTS + off],
    );
    // k spreads the ratings over the loaded blocks; tx hashes and feedback indexes above the load's
    await db.query(
      `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals,
                            value, tag1, tag2, endpoint, feedback_uri, feedback_hash, block_number, block_time)
       SELECT 'base', '0x' || lpad(to_hex($4::int), 8, '0') || lpad(to_hex(k), 56, '0'), 0, $1,
              '0x' || lpad(to_hex(k % $3::int + 1), 40, '0'), $5::bigint + k, 5000 + k % 5001, 2, (5000 + k % 5001) / 100.0,
              (ARRAY['trust','liveness','contractRisk','activity',''])[k % 5 + 1], '', 'https://agent.example/a2a',
              'https://feedback.example/x' || k, '0x' || lpad(to_hex(k), 64, 'c'),
              1000000 + (k::bigint * $6::bigint / $2::int) / 5,
              timestamptz '2026-01-01' + make_interval(secs => (1000000 + (k::bigint * $6::bigint / $2::int) / 5) * 2)
         FROM generate_series(0, $2::int - 1) k`,
      [agent, n, raters, 0x7000 + off, EVENTS * 10 + off * 1_000_000, EVENTS],
    );
  }
  await db.query(
    `INSERT INTO revocations (network, tx_hash, log_index, agent_id, rater, feedback_index, block_number, block_time)
     SELECT network, revoked_tx, 0, agent_id, rater, feedback_index, revoked_block, revoked_at
       FROM ratings WHERE revoked`,
  );
  await db.query(
    `UPDATE chains SET backfill_complete = TRUE, last_scanned_block = $1, head_at_last_sync = $1
                   WHERE network = 'base'`,
    [1_000_000 + Math.floor(EVENTS / 5) + 20],
  );
  await db.query('ANALYZE');
  const [c] = await db.query<{ n: string; big: string }>(
    `SELECT count(*)::text AS n, (count(*) FILTER (WHERE agent_id = '0'))::text AS big FROM ratings`,
  );
  console.log(
    `loaded ${c?.n} ratings (subject ${BIG}: ${c?.big}) over ${AGENTS} agents in ` +
      `${((performance.now() - t0) / 1000).toFixed(1)} s (SQL generate_series, incl. ANALYZE)`,
  );
}
