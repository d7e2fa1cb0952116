/**
 * Everything the paid wallet routes need about ONE subject wallet, read from the raw tables (the
 * paid answer is exact and live; the free preview reads the hourly aggregates instead):
 *  - every rating of every agent CURRENTLY owned by the wallet, on any chain (joined by today's
 *    owner, never by the minter), with its transaction;
 *  - its identities per chain (rated or not);
 *  - for `weighted_score`: the distinct subjects each of its raters has rated in the index
 *    (subject = the rated agent's current owner, or `network:agent_id` for an agent with no known
 *    owner; any state of the rating), in one grouped query;
 *  - the global prior and the per-chain priors (agg_meta / agg_chain), the index facet means
 *    (agg_facet network '*');
 *  - `degraded`: some chain on which the subject has ratings has not completed its backfill.
 * Every statement is parameterised; no scoring here (src/scoring does all the math).
 */
import type { Queryable } from '../db/database.js';
import type { IdentityChain, RaterFacts, SubjectRating } from '../scoring/index.js';
import { readRaterFacts } from './raters.js';
import { readRefreshMeta } from './refresh-meta.js';

/** One stored rating received by the subject, with its transaction. */
interface SubjectRatingRow extends SubjectRating {
  txHash: string;
  blockNumber: number;
  logIndex: number;
  revokedTx: string | null;
  feedbackURI: string;
}

export interface SubjectInputs {
  wallet: string;
  ratings: SubjectRatingRow[];
  identities: IdentityChain[];
  raterSubjectCounts: Map<string, number>;
  /** The evidence of each of its raters (migration 0160). */
  raterFacts: Map<string, RaterFacts>;
  prior: number | null;
  chainPriors: Map<string, number | null>;
  facetIndexMeans: Map<string, number | null>;
  degraded: boolean;
}

interface RatingDbRow {
  network: string;
  agent_id: string;
  rater: string;
  value: string;
  revoked: boolean;
  revoked_tx: string | null;
  block_time: Date | null;
  tag1: string;
  feedback_uri: string;
  tx_hash: string;
  block_number: number | bigint;
  log_index: number;
  [k: string]: unknown;
}

/** Every rating of every agent the wallet owns today, in chain order. */
async function readSubjectRatings(db: Queryable, wallet: string): Promise<SubjectRatingRow[]> {
  const rows = await db.query<RatingDbRow>(
    `SELECT r.network, r.agent_id, r.rater, r.value::text AS value, r.revoked, r.revoked_tx, r.block_time,
            r.tag1, r.feedback_uri, r.tx_hash, r.block_number, r.log_index
       FROM agents a
       JOIN ratings r ON r.network = a.network AND r.agent_id = a.agent_id
      WHERE a.owner = $1
      ORDER BY r.network, r.block_number, r.log_index, r.tx_hash`,
    [wallet],
  );
  return rows.map((r) => ({
    network: r.network,
    agentId: r.agent_id,
    rater: r.rater,
    value: r.value,
    revoked: r.revoked,
    revokedTx: r.revoked_tx,
    blockTime: r.block_time,
    tag1: r.tag1,
    feedbackURI: r.feedback_uri,
    txHash: r.tx_hash,
    blockNumber: Number(r.block_number),
    logIndex: Number(r.log_index),
  }));
}

/** The identities the wallet holds today, grouped by chain (networks and ids in SQL order). */
async function readSubjectIdentities(db: Queryable, wallet: string): Promise<IdentityChain[]> {
  const rows = await db.query<{ network: string; agent_id: string }>(
    `SELECT network, agent_id FROM agents WHERE owner = $1 ORDER BY network, agent_id`,
    [wallet],
  );
  const byChain = new Map<string, string[]>();
  for (const r of rows) {
    const list = byChain.get(r.network) ?? [];
    list.push(r.agent_id);
    byChain.set(r.network, list);
  }
  return [...byChain.entries()].map(([network, agentIds]) => ({ network, agentIds }));
}

/**
 * Distinct subjects each rater of this wallet has rated anywhere in the index (one grouped query).
 * Subject = the rated agent's current owner, `network:agent_id` when the agent has no known owner.
 */
async function readRaterSubjectCounts(db: Queryable, wallet: string): Promise<Map<string, number>> {
  const rows = await db.query<{ rater: string; subjects: number | bigint }>(
    `SELECT r.rater, count(DISTINCT coalesce(a.owner, r.network || ':' || r.agent_id)) AS subjects
       FROM ratings r
       LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
      WHERE r.rater IN (SELECT r2.rater
                          FROM agents a2
                          JOIN ratings r2 ON r2.network = a2.network AND r2.agent_id = a2.agent_id
                         WHERE a2.owner = $1)
      GROUP BY r.rater`,
    [wallet],
  );
  return new Map(rows.map((r) => [r.rater, Number(r.subjects)]));
}

/** Per-chain priors of the chain rankings (agg_chain.prior); missing chains are absent. */
async function readChainPriors(db: Queryable): Promise<Map<string, number | null>> {
  const rows = await db.query<{ network: string; prior: number | null }>(
    `SELECT network, prior FROM agg_chain`,
  );
  return new Map(rows.map((r) => [r.network, r.prior === null ? null : Number(r.prior)]));
}

/** Index-wide facet means (agg_facet, network '*'), keyed by raw tag1. */
async function readIndexFacetMeans(db: Queryable): Promise<Map<string, number | null>> {
  const rows = await db.query<{ tag1: string; mean: number | null }>(
    `SELECT tag1, mean FROM agg_facet WHERE network = $1`,
    ['*'],
  );
  return new Map(rows.map((r) => [r.tag1, r.mean === null ? null : Number(r.mean)]));
}

/** True when a chain on which the wallet's agents have ratings has not completed its backfill. */
async function readSubjectDegraded(db: Queryable, wallet: string): Promise<boolean> {
  const [row] = await db.query<{ degraded: boolean }>(
    `SELECT EXISTS (
       SELECT 1 FROM chains c
        WHERE NOT c.backfill_complete
          AND c.network IN (SELECT r.network
                              FROM agents a
                              JOIN ratings r ON r.network = a.network AND r.agent_id = a.agent_id
                             WHERE a.owner = $1)) AS degraded`,
    [wallet],
  );
  return row?.degraded === true;
}

/** All the inputs of one subject's scored answer. `wallet` is already normalized (parseWallet). */
export async function readSubjectInputs(db: Queryable, wallet: string): Promise<SubjectInputs> {
  const [ratings, identities, raterSubjectCounts, meta, chainPriors, facetIndexMeans, degraded] =
    await Promise.all([
      readSubjectRatings(db, wallet),
      readSubjectIdentities(db, wallet),
      readRaterSubjectCounts(db, wallet),
      readRefreshMeta(db),
      readChainPriors(db),
      readIndexFacetMeans(db),
      readSubjectDegraded(db, wallet),
    ]);
  const raterFacts = await readRaterFacts(
    db,
    wallet,
    ratings.map((r) => r.rater),
  );
  return {
    wallet,
    ratings,
    identities,
    raterSubjectCounts,
    raterFacts,
    prior: meta.prior,
    chainPriors,
    facetIndexMeans,
    degraded,
  };
}
