/**
 * GET /feed: the newest ratings by the chain's own clock. The one free route that reads the
 * `ratings` table, and only its newest rows through `ratings_network_time_idx` (network,
 * block_time DESC, block_number DESC, log_index DESC): one range scan for one chain; for the
 * global feed the newest `limit` of each chain (the chains found by a skip scan of the same
 * index, a probe per chain), merged. The global order breaks block-time ties by network, so the
 * global top `limit` is always among the per-chain tops: exact, without an index on block time
 * alone that every rating insert would pay for (migration 0200).
 * Undated ratings (no block time yet) have no place on a clock and are left out.
 */
import type { Queryable } from '../db/database.js';
import { formatDecimal, parseDecimal } from '../scoring/index.js';

/** Documented bounds of `?limit=` (the reference deployment's: default 50, 1..200). */
export const FEED_LIMIT = { default: 50, min: 1, max: 200 } as const;

interface FeedRow {
  network: string;
  agent_id: string;
  /** Current owner of the rated identity; null when the index does not know it (yet). */
  subject_wallet: string | null;
  rater: string;
  /** Raw `tag1` (hostile free text; "" when the rater declared none). */
  facet: string;
  /** value / 10^value_decimals as the nearest double. */
  value: number;
  /** The same value as an exact decimal string. */
  value_exact: string;
  /** The raw on-chain integer and its declared decimals. */
  value_raw: string;
  value_decimals: number;
  tx_hash: string;
  block_time: string;
  block_number: number;
  log_index: number;
  revoked: boolean;
  /** The transaction that revoked it (null when not revoked, or revoked by a log not indexed). */
  revoked_tx: string | null;
}

interface RawFeedRow {
  network: string;
  agent_id: string;
  owner: string | null;
  rater: string;
  tag1: string;
  value: string;
  value_raw: string;
  value_decimals: number;
  tx_hash: string;
  block_time: Date;
  block_number: number;
  log_index: number;
  revoked: boolean;
  revoked_tx: string | null;
}

/** Canonical plain form of a NUMERIC string ("87.500" → "87.5"), exact. */
function exactString(s: string): string {
  const d = parseDecimal(s);
  return d === null ? s : formatDecimal(d);
}

/**
 * Newest ratings first: block_time desc, then (global feed only) network asc, block_number desc,
 * log_index desc, which is exactly the order of the time indexes.
 */
export async function readFeed(
  db: Queryable,
  opts: { network: string | null; limit: number },
): Promise<FeedRow[]> {
  const cols = `r.network, r.agent_id, a.owner, r.rater, r.tag1, r.value::text AS value, r.value_raw::text AS value_raw,
                r.value_decimals, r.tx_hash, r.block_time, r.block_number, r.log_index, r.revoked, r.revoked_tx`;
  const rows =
    opts.network === null
      ? await db.query<RawFeedRow & Record<string, unknown>>(
          `WITH RECURSIVE nets AS (
             (SELECT network FROM ratings ORDER BY network LIMIT 1)
             UNION ALL
             SELECT (SELECT x.network FROM ratings x WHERE x.network > nets.network ORDER BY x.network LIMIT 1)
               FROM nets WHERE nets.network IS NOT NULL
           )
           SELECT ${cols}
             FROM (SELECT t.* FROM nets
                     CROSS JOIN LATERAL (SELECT * FROM ratings x WHERE x.network = nets.network AND x.block_time IS NOT NULL
                                          ORDER BY x.block_time DESC, x.block_number DESC, x.log_index DESC LIMIT $1) t
                    ORDER BY t.block_time DESC, t.network, t.block_number DESC, t.log_index DESC LIMIT $1) r
             LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
            ORDER BY r.block_time DESC, r.network, r.block_number DESC, r.log_index DESC`,
          [opts.limit],
        )
      : await db.query<RawFeedRow & Record<string, unknown>>(
          `SELECT ${cols}
             FROM (SELECT * FROM ratings WHERE network = $1 AND block_time IS NOT NULL
                    ORDER BY block_time DESC, block_number DESC, log_index DESC LIMIT $2) r
             LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
            ORDER BY r.block_time DESC, r.block_number DESC, r.log_index DESC`,
          [opts.network, opts.limit],
        );
  return rows.map((r) => {
    const exact = exactString(r.value);
    return {
      network: r.network,
      agent_id: r.agent_id,
      subject_wallet: r.owner,
      rater: r.rater,
      facet: r.tag1,
      value: Number(exact),
      value_exact: exact,
      value_raw: r.value_raw,
      value_decimals: Number(r.value_decimals),
      tx_hash: r.tx_hash,
      block_time: r.block_time.toISOString(),
      block_number: Number(r.block_number),
      log_index: Number(r.log_index),
      revoked: r.revoked,
      revoked_tx: r.revoked_tx,
    };
  });
}
