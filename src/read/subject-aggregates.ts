/**
 * The paid read model over the MAINTAINED aggregates (migration 0050, kept by triggers in the same
 * transaction as the rows, so answers are exact and live): everything a paid answer about one
 * subject, one agent or one rater needs, in O(distinct raters) rows, never O(ratings). The only
 * reads of `ratings` here are index probes (first/last eligible rating: ORDER BY … LIMIT 1 on
 * (network, agent_id, block_time); a keyset page of an agent's ratings). Parameterised; no scoring.
 */
import type { Queryable } from '../db/database.js';
import type {
  AgentRaterAggregate,
  AgentRaterTagAggregate,
  EmittedAggregate,
  FacetAggregate,
  HistoryDayAggregate,
  IdentityChain,
  SubjectAggregates,
} from '../scoring/index.js';
import { readRefreshMeta } from './aggregates.js';
import { readChainPriors, readIndexFacetMeans, readSubjectIdentities } from './subject.js';

export interface Checkpoint {
  network: string;
  /** chains.last_scanned_block when the answer was read (null before the first pass). */
  last_scanned_block: number | null;
}

export interface SubjectAggregateInputs {
  wallet: string;
  aggregates: SubjectAggregates;
  identities: IdentityChain[];
  /** s per rater of the subject (distinct subjects with eligible ratings). */
  raterSubjectCounts: Map<string, number>;
  prior: number | null;
  chainPriors: Map<string, number | null>;
  facetIndexMeans: Map<string, number | null>;
  degraded: boolean;
  checkpoints: Checkpoint[];
}

const RATER_COLS = `ar.network, ar.agent_id, ar.rater, ar.live_count, ar.live_sum::text AS live_sum,
  ar.live_sumsq::text AS live_sumsq, ar.live_undated, ar.revoked_count, ar.ood_count`;
const TAG_COLS = `t.network, t.agent_id, t.rater, t.tag1, t.live_count, t.live_sum::text AS live_sum,
  t.revoked_count, t.ood_count`;

function raterRow(r: Record<string, unknown>): AgentRaterAggregate {
  return {
    network: String(r.network),
    agentId: String(r.agent_id),
    rater: String(r.rater),
    liveCount: Number(r.live_count),
    liveSum: String(r.live_sum),
    liveSumSq: String(r.live_sumsq),
    liveUndated: Number(r.live_undated),
    revokedCount: Number(r.revoked_count),
    oodCount: Number(r.ood_count),
  };
}

/**
 * Facet totals of a set of agents, split against each agent's current owner (no owner: nobody is
 * self), one row per tag1: what facets need, whatever the number of raters.
 */
const FACET_TOTALS = (from: string, where: string) => `
  SELECT t.tag1,
         coalesce(sum(t.live_count) FILTER (WHERE t.rater <> coalesce(a.owner, '')), 0) AS eligible_count,
         coalesce(sum(t.live_sum) FILTER (WHERE t.rater <> coalesce(a.owner, '')), 0)::text AS eligible_sum,
         count(DISTINCT t.rater) FILTER (WHERE t.rater <> coalesce(a.owner, '') AND t.live_count > 0) AS distinct_raters,
         coalesce(sum(t.live_count) FILTER (WHERE t.rater = a.owner), 0) AS self_count,
         sum(t.revoked_count) AS revoked_count, sum(t.ood_count) AS ood_count
    FROM ${from}
   WHERE ${where}
   GROUP BY t.tag1`;

function facetRow(r: Record<string, unknown>): FacetAggregate {
  return {
    tag1: String(r.tag1),
    eligibleCount: Number(r.eligible_count),
    eligibleSum: String(r.eligible_sum),
    distinctRaters: Number(r.distinct_raters),
    selfCount: Number(r.self_count),
    revokedCount: Number(r.revoked_count),
    oodCount: Number(r.ood_count),
  };
}

function tagRow(r: Record<string, unknown>): AgentRaterTagAggregate {
  return {
    network: String(r.network),
    agentId: String(r.agent_id),
    rater: String(r.rater),
    tag1: String(r.tag1),
    liveCount: Number(r.live_count),
    liveSum: String(r.live_sum),
    revokedCount: Number(r.revoked_count),
    oodCount: Number(r.ood_count),
  };
}

/** s of each rater with an eligible rating in these rows (joined from live_rater). */
function weightsOf(rows: readonly Record<string, unknown>[], owner: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) {
    if (Number(r.live_count) > 0 && r.rater !== owner && r.subjects !== null && r.subjects !== undefined) {
      out.set(String(r.rater), Number(r.subjects));
    }
  }
  return out;
}

/** s for each of these raters (absent = no eligible rating anywhere). */
export async function readRaterWeights(db: Queryable, raters: readonly string[]): Promise<Map<string, number>> {
  if (raters.length === 0) return new Map();
  const rows = await db.query<{ rater: string; subjects: number | bigint }>(
    `SELECT rater, subjects FROM live_rater WHERE rater = ANY($1::text[])`,
    [[...new Set(raters)]],
  );
  return new Map(rows.map((r) => [r.rater, Number(r.subjects)]));
}

/** chains.last_scanned_block of these networks, network order. */
export async function readCheckpoints(db: Queryable, networks: readonly string[]): Promise<Checkpoint[]> {
  if (networks.length === 0) return [];
  const rows = await db.query<{ network: string; last_scanned_block: number | bigint | null }>(
    `SELECT network, last_scanned_block FROM chains WHERE network = ANY($1::text[]) ORDER BY network`,
    [[...new Set(networks)]],
  );
  return rows.map((r) => ({
    network: r.network,
    last_scanned_block: r.last_scanned_block === null ? null : Number(r.last_scanned_block),
  }));
}

const ELIGIBLE_PROBE = `r.block_time IS NOT NULL AND NOT r.revoked AND r.value >= 0 AND r.value <= 100
  AND r.rater <> coalesce(a.owner, '')`;

/** First and last ELIGIBLE rating of the given agents (two index probes per agent). */
async function readEligibleSpan(
  db: Queryable,
  agentsWhere: string,
  params: unknown[],
): Promise<{ first: Date | null; last: Date | null }> {
  const [row] = await db.query<{ first: Date | null; last: Date | null }>(
    `SELECT min(f.t) AS first, max(l.t) AS last
       FROM agents a
       LEFT JOIN LATERAL (SELECT r.block_time AS t FROM ratings r
                           WHERE r.network = a.network AND r.agent_id = a.agent_id AND ${ELIGIBLE_PROBE}
                           ORDER BY r.block_time ASC LIMIT 1) f ON TRUE
       LEFT JOIN LATERAL (SELECT r.block_time AS t FROM ratings r
                           WHERE r.network = a.network AND r.agent_id = a.agent_id AND ${ELIGIBLE_PROBE}
                           ORDER BY r.block_time DESC LIMIT 1) l ON TRUE
      WHERE ${agentsWhere}`,
    params,
  );
  return { first: row?.first ?? null, last: row?.last ?? null };
}

/** All the inputs of one subject's scored answer, from the maintained aggregates. */
export async function readSubjectAggregateInputs(db: Queryable, wallet: string): Promise<SubjectAggregateInputs> {
  const [raterRows, tagRows, identities, span, meta, chainPriors, facetIndexMeans] = await Promise.all([
    db.query<Record<string, unknown>>(
      `SELECT ${RATER_COLS}, lr.subjects FROM agents a
         JOIN live_agent_rater ar ON ar.network = a.network AND ar.agent_id = a.agent_id
         LEFT JOIN live_rater lr ON lr.rater = ar.rater
        WHERE a.owner = $1`,
      [wallet],
    ),
    db.query<Record<string, unknown>>(
      FACET_TOTALS(
        'agents a JOIN live_agent_rater_tag t ON t.network = a.network AND t.agent_id = a.agent_id',
        'a.owner = $1',
      ),
      [wallet],
    ),
    readSubjectIdentities(db, wallet),
    readEligibleSpan(db, 'a.owner = $1', [wallet]),
    readRefreshMeta(db),
    readChainPriors(db),
    readIndexFacetMeans(db),
  ]);
  const raters = raterRows.map(raterRow);
  const ratedNetworks = [...new Set(raters.map((r) => r.network))];
  const raterSubjectCounts = weightsOf(raterRows, wallet);
  const [checkpoints, incomplete] = await Promise.all([
    readCheckpoints(db, [...ratedNetworks, ...identities.map((i) => i.network)]),
    readIncompleteChains(db, ratedNetworks),
  ]);
  const degraded = incomplete > 0;
  return {
    wallet,
    aggregates: { raters, facets: tagRows.map(facetRow), firstEligibleAt: span.first, lastEligibleAt: span.last },
    identities,
    raterSubjectCounts,
    prior: meta.prior,
    chainPriors,
    facetIndexMeans,
    degraded,
    checkpoints,
  };
}

/** How many of these chains have not completed their backfill. */
async function readIncompleteChains(db: Queryable, networks: readonly string[]): Promise<number> {
  if (networks.length === 0) return 0;
  const [row] = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM chains WHERE network = ANY($1::text[]) AND NOT backfill_complete`,
    [networks],
  );
  return row?.n ?? 0;
}

/** One agent's maintained rows (its score relative to its current owner). */
export async function readAgentAggregates(
  db: Queryable,
  network: string,
  agentId: string,
): Promise<{ aggregates: SubjectAggregates; raterSubjectCounts: Map<string, number>; total: number }> {
  const [raterRows, tagRows, span, owner] = await Promise.all([
    db.query<Record<string, unknown>>(
      `SELECT ${RATER_COLS}, lr.subjects FROM live_agent_rater ar LEFT JOIN live_rater lr ON lr.rater = ar.rater
        WHERE ar.network = $1 AND ar.agent_id = $2`,
      [network, agentId],
    ),
    db.query<Record<string, unknown>>(
      FACET_TOTALS(
        'live_agent_rater_tag t LEFT JOIN agents a ON a.network = t.network AND a.agent_id = t.agent_id',
        't.network = $1 AND t.agent_id = $2',
      ),
      [network, agentId],
    ),
    readEligibleSpan(db, 'a.network = $1 AND a.agent_id = $2', [network, agentId]),
    db.query<{ owner: string | null }>(`SELECT owner FROM agents WHERE network = $1 AND agent_id = $2`, [
      network,
      agentId,
    ]),
  ]);
  const raters = raterRows.map(raterRow);
  const ownerOf = owner[0]?.owner ?? '';
  let span2 = span;
  if (owner.length === 0) {
    // Ratings of an agent with no identity row: nobody is self, every live dated rating counts.
    const [row] = await db.query<{ first: Date | null; last: Date | null }>(
      `SELECT (SELECT block_time FROM ratings r WHERE r.network = $1 AND r.agent_id = $2 AND r.block_time IS NOT NULL
                 AND NOT r.revoked AND r.value >= 0 AND r.value <= 100 ORDER BY block_time ASC LIMIT 1) AS first,
              (SELECT block_time FROM ratings r WHERE r.network = $1 AND r.agent_id = $2 AND r.block_time IS NOT NULL
                 AND NOT r.revoked AND r.value >= 0 AND r.value <= 100 ORDER BY block_time DESC LIMIT 1) AS last`,
      [network, agentId],
    );
    span2 = { first: row?.first ?? null, last: row?.last ?? null };
  }
  const raterSubjectCounts = weightsOf(raterRows, ownerOf);
  let total = 0;
  for (const r of raters) total += r.liveCount + r.revokedCount + r.oodCount;
  return {
    aggregates: { raters, facets: tagRows.map(facetRow), firstEligibleAt: span2.first, lastEligibleAt: span2.last },
    raterSubjectCounts,
    total,
  };
}

/** The subject's eligible dated ratings per (network, UTC day). */
export async function readSubjectDays(db: Queryable, wallet: string): Promise<HistoryDayAggregate[]> {
  const rows = await db.query<{ network: string; day: Date | string; n: number | bigint; s: string }>(
    `SELECT d.network, to_char(d.day, 'YYYY-MM-DD') AS day, sum(d.eligible_count) AS n, sum(d.eligible_sum)::text AS s
       FROM agents a JOIN live_agent_day d ON d.network = a.network AND d.agent_id = a.agent_id
      WHERE a.owner = $1 AND d.eligible_count > 0
      GROUP BY d.network, d.day`,
    [wallet],
  );
  return rows.map((r) => ({
    network: r.network,
    day: new Date(`${String(r.day)}T00:00:00.000Z`),
    count: Number(r.n),
    sum: r.s,
  }));
}

/** A rater's maintained rows with each agent's current subject, and its first/last rating time. */
export async function readEmittedAggregates(
  db: Queryable,
  rater: string,
): Promise<{ rows: EmittedAggregate[]; tags: AgentRaterTagAggregate[]; first: Date | null; last: Date | null }> {
  const [rows, tags, span] = await Promise.all([
    db.query<Record<string, unknown>>(
      `SELECT ${RATER_COLS}, coalesce(a.owner, ar.network || ':' || ar.agent_id) AS subject
         FROM live_agent_rater ar LEFT JOIN agents a ON a.network = ar.network AND a.agent_id = ar.agent_id
        WHERE ar.rater = $1`,
      [rater],
    ),
    db.query<Record<string, unknown>>(`SELECT ${TAG_COLS} FROM live_agent_rater_tag t WHERE t.rater = $1`, [rater]),
    db.query<{ first: Date | null; last: Date | null }>(
      `SELECT (SELECT block_time FROM ratings WHERE rater = $1 AND block_time IS NOT NULL ORDER BY block_time ASC LIMIT 1) AS first,
              (SELECT block_time FROM ratings WHERE rater = $1 AND block_time IS NOT NULL ORDER BY block_time DESC LIMIT 1) AS last`,
      [rater],
    ),
  ]);
  return {
    rows: rows.map((r) => ({ ...raterRow(r), subject: String(r.subject) })),
    tags: tags.map(tagRow),
    first: span[0]?.first ?? null,
    last: span[0]?.last ?? null,
  };
}
