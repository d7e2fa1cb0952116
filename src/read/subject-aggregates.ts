/**
 * The paid read model over the MAINTAINED aggregates (migration 0050, kept by triggers in the same
 * transaction as the rows, so answers are exact and live): everything a paid answer about one
 * subject, one agent or one rater needs, in O(distinct raters) rows, never O(ratings). The only
 * reads of `ratings` here are index probes (first/last eligible rating: ORDER BY … LIMIT 1 on
 * (network, agent_id, block_time); a keyset page of an agent's ratings). Parameterised; no scoring.
 */
import type { Queryable } from '../db/database.js';
import type { AgentRow } from './agent.js';
import type { EvidenceCounts } from './documents.js';
import { applyPairList, EVIDENCE_COMPUTED_AT, factsOf, PAIR_LIST } from './raters.js';
import type {
  AgentRaterAggregate,
  AgentRaterTagAggregate,
  EmittedAggregate,
  FacetAggregate,
  HistoryDayAggregate,
  IdentityChain,
  RaterFacts,
  SubjectAggregates,
} from '../scoring/index.js';

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
  /** The evidence of each rater of the subject (migration 0160), one row per distinct rater. */
  raterFacts: Map<string, RaterFacts>;
  /** When the rater evidence was last computed (null: never). */
  evidenceComputedAt: string | null;
  prior: number | null;
  chainPriors: Map<string, number | null>;
  facetIndexMeans: Map<string, number | null>;
  degraded: boolean;
  checkpoints: Checkpoint[];
  /** Evidence beside the score over the subject's agents (kept per agent, migration 0110). */
  evidence: EvidenceCounts;
}

const RATER_COLS = `ar.network, ar.agent_id, ar.rater, ar.live_count, trim_scale(ar.live_sum)::text AS live_sum,
  ar.live_sumsq::text AS live_sumsq, ar.live_undated, ar.revoked_count, ar.ood_count`;
/**
 * The (agent, rater) rows of a subject's or an agent's answer (the `rr` of SUBJECT_SQL and
 * AGENT_SQL), in the order RATER_LIST joins them and parseRaterList reads them.
 */
const RR_COLUMNS = `ar.network, ar.agent_id, ar.rater, ar.live_count, trim_scale(ar.live_sum)::text AS live_sum,
           ar.live_undated, ar.revoked_count, ar.ood_count, lr.subjects,
           (SELECT re.facts FROM rater_evidence re WHERE re.rater = ar.rater) AS facts`;
/**
 * The rater's s beside its (agent, rater) row. Its evidence (migration 0160) is read by a probe of
 * the rater's key per row (the subselect of RR_COLUMNS): O(distinct raters) whatever plan the
 * statement gets, never a scan of the whole table (about 2 µs a rater).
 */
const RR_JOINS = `LEFT JOIN live_rater lr ON lr.rater = ar.rater`;
const TAG_COLS = `t.network, t.agent_id, t.rater, t.tag1, t.live_count, t.live_sum::text AS live_sum,
  t.revoked_count, t.ood_count`;

function raterRow(r: Record<string, unknown>): AgentRaterAggregate {
  return {
    network: String(r.network),
    agentId: String(r.agent_id),
    rater: String(r.rater),
    liveCount: Number(r.live_count),
    liveSum: String(r.live_sum),
    ...(r.live_sumsq === undefined ? {} : { liveSumSq: String(r.live_sumsq) }),
    liveUndated: Number(r.live_undated),
    revokedCount: Number(r.revoked_count),
    oodCount: Number(r.ood_count),
  };
}

/**
 * Facet totals of a set of agents that share one owner (`owner`, an SQL expression; NULL: nobody is
 * self), one row per tag1: what facets need, whatever the number of raters. The rows are first
 * summed per (tag1, rater) by hash (so "distinct raters" is a plain count, with no sort of every
 * row), then per tag1.
 */
const FACET_TOTALS = (from: string, where: string, owner: string) => `
  SELECT g.tag1,
         coalesce(sum(g.live_count) FILTER (WHERE g.rater <> coalesce(${owner}, '')), 0) AS eligible_count,
         coalesce(sum(g.live_sum) FILTER (WHERE g.rater <> coalesce(${owner}, '')), 0)::text AS eligible_sum,
         count(*) FILTER (WHERE g.rater <> coalesce(${owner}, '') AND g.live_count > 0) AS distinct_raters,
         coalesce(sum(g.live_count) FILTER (WHERE g.rater = ${owner}), 0) AS self_count,
         sum(g.revoked_count) AS revoked_count, sum(g.ood_count) AS ood_count
    FROM (SELECT t.tag1, t.rater, sum(t.live_count) AS live_count, sum(t.live_sum) AS live_sum,
                 sum(t.revoked_count) AS revoked_count, sum(t.ood_count) AS ood_count
            FROM ${from}
           WHERE ${where}
           GROUP BY t.tag1, t.rater) g
   GROUP BY g.tag1`;

/**
 * The same facet totals for agents `a` of `from` from the maintained per-(agent, tag1) totals
 * (migration 0070): O(tags) rows per agent, the owner's own per-(agent, rater, tag1) rows
 * subtracted for the self/eligible split. Exact only when no rater can count twice, i.e. for ONE
 * agent: a subject with several agents reads FACET_TOTALS (a rater of two of its agents is one
 * distinct rater of the facet).
 */
const FACET_ONE_AGENT = (from: string, owner: string) => `
  SELECT lt.tag1,
         lt.live_count - coalesce(s.live_count, 0) AS eligible_count,
         (lt.live_sum - coalesce(s.live_sum, 0))::text AS eligible_sum,
         lt.live_raters - (CASE WHEN coalesce(s.live_count, 0) > 0 THEN 1 ELSE 0 END) AS distinct_raters,
         coalesce(s.live_count, 0) AS self_count,
         lt.revoked_count, lt.ood_count
    FROM ${from}
    JOIN live_agent_tag lt ON lt.network = a.network AND lt.agent_id = a.agent_id
    LEFT JOIN live_agent_rater_tag s
      ON s.network = lt.network AND s.agent_id = lt.agent_id AND s.rater = ${owner} AND s.tag_key = lt.tag_key`;

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

const ELIGIBLE_PROBE = `r.block_time IS NOT NULL AND NOT r.revoked AND r.value >= 0 AND r.value <= 100
  AND r.rater <> coalesce(a.owner, '')`;

/**
 * The parts of the ONE statement that reads a subject's answer: every per-subject read keyed by the
 * owned agents (`own`), and the index-wide inputs (prior, chain priors, facet means), each
 * aggregated into a JSON column so one round trip brings everything back (the answer of a small
 * subject is dominated by round trips, not by rows). Numbers that must stay exact travel as text.
 */
const SUBJECT_SQL = (withDays: boolean) => `
  WITH own AS MATERIALIZED (SELECT network, agent_id, owner FROM agents WHERE owner = $1),
  rr AS MATERIALIZED (
    SELECT ${RR_COLUMNS}
      FROM own a
      JOIN live_agent_rater ar ON ar.network = a.network AND ar.agent_id = a.agent_id
      ${RR_JOINS}),
  span AS (${SPAN_SQL('own a')})
  SELECT
    ${RATER_LIST} AS raters,
    ${PAIR_LIST('$1::text')} AS pair_list, ${EVIDENCE_COMPUTED_AT} AS evidence_at,
    (SELECT json_agg(json_build_array(f.tag1, f.eligible_count, f.eligible_sum, f.distinct_raters, f.self_count,
                                      f.revoked_count, f.ood_count))
       FROM (SELECT * FROM (${FACET_ONE_AGENT('own a', '$1::text')}) one WHERE (SELECT count(*) FROM own) = 1
             UNION ALL
             SELECT * FROM (${FACET_TOTALS('own a JOIN live_agent_rater_tag t ON t.network = a.network AND t.agent_id = a.agent_id', 'TRUE', '$1::text')}) many
              WHERE (SELECT count(*) FROM own) <> 1) f) AS facets,
    (SELECT json_agg(json_build_array(network, agent_id) ORDER BY network, agent_id) FROM own) AS identities,
    span.first, span.last,
    ${GLOBAL_COLUMNS},
    (SELECT json_agg(json_build_array(c.network, c.last_scanned_block) ORDER BY c.network)
       FROM chains c WHERE c.network IN (SELECT network FROM own)) AS checkpoints,
    (SELECT json_build_array(coalesce(sum(e.fetched), 0), coalesce(sum(e.matching), 0), coalesce(sum(e.verified), 0))
       FROM own a JOIN agent_evidence e ON e.network = a.network AND e.agent_id = a.agent_id) AS evidence,
    (SELECT count(*)::int FROM chains c
      WHERE c.network IN (SELECT network FROM rr) AND NOT c.backfill_complete) AS incomplete
    ${
      withDays
        ? `, (SELECT json_agg(json_build_array(x.network, x.day, x.n, x.s))
             FROM (SELECT d.network, to_char(d.day, 'YYYY-MM-DD') AS day, sum(d.eligible_count) AS n,
                          sum(d.eligible_sum)::text AS s
                     FROM own a JOIN live_agent_day d ON d.network = a.network AND d.agent_id = a.agent_id
                    WHERE d.eligible_count > 0
                    GROUP BY d.network, d.day) x) AS days`
        : ''
    }
    FROM span`;

/**
 * The (agent, rater) rows of \`rr\` as ONE text value: rows joined by ';', fields by ',' (network,
 * agent_id, rater, live_count, live_sum, live_undated, revoked_count, ood_count, subjects ('' when
 * NULL)). Building this costs a third of json_agg(json_build_array(…)) per row, and the answer of a
 * subject with thousands of raters is mostly this list. Safe as text: networks are configuration
 * keys, agent ids decimal integers or base58 keys, raters hex or base58 addresses, the rest numbers;
 * none holds ',' or ';' (\`parseRaterList\` checks the field count anyway). Sums travel with their
 * trailing zeros trimmed (\`trim_scale\`: the same value, fewer digits), which lets most per-rater
 * means skip bigint arithmetic (\`meanOfSum\`'s exact fast path).
 */
const RATER_LIST = `(SELECT string_agg(concat_ws(',', network, agent_id, rater, live_count, live_sum, live_undated,
                                    revoked_count, ood_count, coalesce(subjects::text, ''), coalesce(facts, '')), ';') FROM rr)`;

/** The index-wide inputs of every scored answer (refresh meta prior, chain priors, facet means). */
const GLOBAL_COLUMNS = `(SELECT value FROM agg_meta WHERE meta_key = 'refresh') AS meta,
    (SELECT json_agg(json_build_array(network, prior)) FROM agg_chain) AS chain_priors,
    (SELECT json_agg(json_build_array(tag1, mean)) FROM agg_facet WHERE network = '*') AS facet_means`;

/** First and last ELIGIBLE rating of the agents `a` of `from` (two index probes per agent). */
const SPAN_SQL = (from: string) => `
    SELECT min(f.t) AS first, max(l.t) AS last
      FROM ${from}
      LEFT JOIN LATERAL (SELECT r.block_time AS t FROM ratings r
                          WHERE r.network = a.network AND r.agent_id = a.agent_id AND ${ELIGIBLE_PROBE}
                          ORDER BY r.block_time ASC LIMIT 1) f ON TRUE
      LEFT JOIN LATERAL (SELECT r.block_time AS t FROM ratings r
                          WHERE r.network = a.network AND r.agent_id = a.agent_id AND ${ELIGIBLE_PROBE}
                          ORDER BY r.block_time DESC LIMIT 1) l ON TRUE`;

const SUBJECT_TEXT = SUBJECT_SQL(false);
const SUBJECT_DAYS_TEXT = SUBJECT_SQL(true);

type Json = unknown[][] | null;
const rowsOf = (v: unknown): unknown[][] => (Array.isArray(v) ? (v as unknown[][]) : []);
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/**
 * The (agent, rater) rows of a RATER_LIST value, s (distinct subjects) of each rater with an
 * eligible rating (live, not the owner), and the stored facts of each rater (its evidence row):
 * one pass, one object per row (no live_sumsq: only the rater profile needs it).
 */
function parseRaterList(
  v: unknown,
  owner: string,
): { raters: AgentRaterAggregate[]; weights: Map<string, number>; facts: Map<string, RaterFacts> } {
  const raters: AgentRaterAggregate[] = [];
  const weights = new Map<string, number>();
  const facts = new Map<string, RaterFacts>();
  if (typeof v !== 'string' || v === '') return { raters, weights, facts };
  // A hand-rolled scan (indexOf per field, no array per row): thousands of raters are common.
  const f: string[] = new Array<string>(10);
  let at = 0;
  const end = v.length;
  while (at <= end) {
    const semi = v.indexOf(';', at);
    const rowEnd = semi === -1 ? end : semi;
    let from = at;
    for (let i = 0; i < 10; i++) {
      const k = i === 9 ? rowEnd : v.indexOf(',', from);
      if (k === -1 || k > rowEnd) throw new Error('malformed rater row from the database: too few fields');
      f[i] = v.slice(from, k);
      from = k + 1;
    }
    if (f[9]!.includes(',')) throw new Error('malformed rater row from the database: too many fields');
    const liveCount = Number(f[3]);
    const rater = f[2]!;
    raters.push({
      network: f[0]!,
      agentId: f[1]!,
      rater,
      liveCount,
      liveSum: f[4]!,
      liveUndated: Number(f[5]),
      revokedCount: Number(f[6]),
      oodCount: Number(f[7]),
    });
    if (liveCount > 0 && rater !== owner && f[8] !== '') weights.set(rater, Number(f[8]));
    if (f[9] !== '' && !facts.has(rater)) facts.set(rater, factsOf(rater, f[9]!));
    at = rowEnd + 1;
  }
  return { raters, weights, facts };
}

function jsonFacetRow(r: unknown[]): Record<string, unknown> {
  const [tag1, eligible_count, eligible_sum, distinct_raters, self_count, revoked_count, ood_count] = r;
  return { tag1, eligible_count, eligible_sum, distinct_raters, self_count, revoked_count, ood_count };
}

/** Prior, chain priors and facet means from the GLOBAL_COLUMNS of a row. */
function globalsOf(row: Record<string, unknown>): {
  prior: number | null;
  chainPriors: Map<string, number | null>;
  facetIndexMeans: Map<string, number | null>;
} {
  const meta = row.meta as { prior?: number | null } | null | undefined;
  return {
    prior: meta?.prior ?? null,
    chainPriors: new Map(rowsOf(row.chain_priors).map(([n, p]) => [String(n), numOrNull(p)])),
    facetIndexMeans: new Map(rowsOf(row.facet_means).map(([t, m]) => [String(t), numOrNull(m)])),
  };
}

/** The subject's evidence counts from its `evidence` column ([fetched, matching, verified]). */
function evidenceOf(v: unknown): EvidenceCounts {
  const [fetched, matching, verified] = Array.isArray(v) ? (v as unknown[]) : [];
  return {
    ratings_with_document: Number(fetched ?? 0),
    ratings_with_matching_document: Number(matching ?? 0),
    ratings_with_verified_payment: Number(verified ?? 0),
  };
}

/** A timestamptz column (a Date from the driver; a string on a driver that leaves it as text). */
function dateOf(v: unknown): Date | null {
  if (v === null || v === undefined) return null;
  return v instanceof Date ? v : new Date(String(v));
}

async function readSubjectRow(
  db: Queryable,
  wallet: string,
  withDays: boolean,
): Promise<Record<string, unknown>> {
  const [row] = await db.query<Record<string, unknown>>(
    withDays ? SUBJECT_DAYS_TEXT : SUBJECT_TEXT,
    [wallet],
    {
      prepare: true,
    },
  );
  return row ?? {};
}

function subjectInputsOf(wallet: string, row: Record<string, unknown>): SubjectAggregateInputs {
  const { raters, weights, facts } = parseRaterList(row.raters, wallet);
  const byChain = new Map<string, string[]>();
  for (const [network, agentId] of rowsOf(row.identities as Json)) {
    const list = byChain.get(String(network)) ?? [];
    list.push(String(agentId));
    byChain.set(String(network), list);
  }
  const g = globalsOf(row);
  return {
    wallet,
    aggregates: {
      raters,
      facets: rowsOf(row.facets as Json).map((f) => facetRow(jsonFacetRow(f))),
      firstEligibleAt: dateOf(row.first),
      lastEligibleAt: dateOf(row.last),
    },
    identities: [...byChain.entries()].map(([network, agentIds]) => ({ network, agentIds })),
    raterSubjectCounts: weights,
    raterFacts: applyPairList(facts, row.pair_list),
    evidenceComputedAt: (row.evidence_at as string | null | undefined) ?? null,
    prior: g.prior,
    chainPriors: g.chainPriors,
    facetIndexMeans: g.facetIndexMeans,
    degraded: Number(row.incomplete ?? 0) > 0,
    checkpoints: rowsOf(row.checkpoints as Json).map(([network, b]) => ({
      network: String(network),
      last_scanned_block: numOrNull(b),
    })),
    evidence: evidenceOf(row.evidence),
  };
}

/**
 * All the inputs of one subject's scored answer, from the maintained aggregates, in ONE statement
 * (one round trip): the (agent, rater) rows with each rater's s, facet totals, identities, the
 * first/last eligible rating, prior, chain priors, facet means, checkpoints and backfill state.
 */
export async function readSubjectAggregateInputs(
  db: Queryable,
  wallet: string,
): Promise<SubjectAggregateInputs> {
  return subjectInputsOf(wallet, await readSubjectRow(db, wallet, false));
}

/** `readSubjectAggregateInputs` and the subject's per-day history rows, in the same one statement. */
export async function readSubjectHistoryInputs(
  db: Queryable,
  wallet: string,
): Promise<{ inputs: SubjectAggregateInputs; days: HistoryDayAggregate[] }> {
  const row = await readSubjectRow(db, wallet, true);
  return {
    inputs: subjectInputsOf(wallet, row),
    days: rowsOf(row.days as Json).map(([network, day, n, s]) => ({
      network: String(network),
      day: new Date(`${String(day)}T00:00:00.000Z`),
      count: Number(n),
      sum: String(s),
    })),
  };
}

/** Everything the agent detail needs besides its ratings page, read in ONE statement. */
interface AgentDetailInputs {
  agent: AgentRow | null;
  aggregates: SubjectAggregates;
  raterSubjectCounts: Map<string, number>;
  /** The evidence of each rater of the agent, on its current owner (the subject). */
  raterFacts: Map<string, RaterFacts>;
  evidenceComputedAt: string | null;
  /** Every rating of the agent (live + revoked + out of domain), from the aggregates. */
  total: number;
  /** chains.backfill_complete of the agent's network (false when the chain is unknown). */
  backfilled: boolean;
  prior: number | null;
  chainPriors: Map<string, number | null>;
  facetIndexMeans: Map<string, number | null>;
}

/**
 * One agent's identity row, maintained rows (its score relative to its CURRENT owner; with no
 * identity row nobody is self), first/last eligible rating, the index-wide inputs and its chain's
 * backfill state: one statement, one round trip.
 */
const AGENT_SQL = `
  WITH ag AS MATERIALIZED (
    SELECT network, agent_id, owner, minter, agent_uri, declared_type, registered_block, registered_tx, registered_at
      FROM agents WHERE network = $1 AND agent_id = $2),
  rr AS MATERIALIZED (
    SELECT ${RR_COLUMNS}
      FROM live_agent_rater ar ${RR_JOINS}
     WHERE ar.network = $1 AND ar.agent_id = $2),
  span AS (${SPAN_SQL('(SELECT $1::text AS network, $2::text AS agent_id, (SELECT owner FROM ag) AS owner) a')})
  SELECT
    (ag.agent_id IS NOT NULL) AS found, ag.owner, ag.minter, ag.agent_uri, ag.declared_type, ag.registered_block,
    ag.registered_tx, ag.registered_at,
    ${RATER_LIST} AS raters,
    ${PAIR_LIST("coalesce((SELECT owner FROM ag), $1::text || ':' || $2::text)")} AS pair_list,
    ${EVIDENCE_COMPUTED_AT} AS evidence_at,
    (SELECT json_agg(json_build_array(f.tag1, f.eligible_count, f.eligible_sum, f.distinct_raters, f.self_count,
                                      f.revoked_count, f.ood_count))
       FROM (${FACET_ONE_AGENT('(SELECT $1::text AS network, $2::text AS agent_id) a', '(SELECT owner FROM ag)')}) f) AS facets,
    span.first, span.last,
    ${GLOBAL_COLUMNS},
    coalesce((SELECT backfill_complete FROM chains WHERE network = $1), FALSE) AS backfilled
    FROM span LEFT JOIN ag ON TRUE`;

export async function readAgentDetailInputs(
  db: Queryable,
  network: string,
  agentId: string,
): Promise<AgentDetailInputs> {
  const [row = {}] = await db.query<Record<string, unknown>>(AGENT_SQL, [network, agentId], {
    prepare: true,
  });
  const found = row.found === true;
  const owner = found ? ((row.owner as string | null) ?? null) : null;
  const { raters, weights, facts } = parseRaterList(row.raters, owner ?? '');
  let total = 0;
  for (const r of raters) total += r.liveCount + r.revokedCount + r.oodCount;
  const g = globalsOf(row);
  return {
    agent: found
      ? {
          network,
          agent_id: agentId,
          owner,
          minter: (row.minter as string | null) ?? null,
          agent_uri: (row.agent_uri as string | null) ?? null,
          declared_type: (row.declared_type as string | null) ?? null,
          registered_block: numOrNull(row.registered_block),
          registered_tx: (row.registered_tx as string | null) ?? null,
          registered_at: (row.registered_at as Date | null) ?? null,
        }
      : null,
    aggregates: {
      raters,
      facets: rowsOf(row.facets as Json).map((f) => facetRow(jsonFacetRow(f))),
      firstEligibleAt: dateOf(row.first),
      lastEligibleAt: dateOf(row.last),
    },
    raterSubjectCounts: weights,
    raterFacts: applyPairList(facts, row.pair_list),
    evidenceComputedAt: (row.evidence_at as string | null | undefined) ?? null,
    total,
    backfilled: row.backfilled === true,
    prior: g.prior,
    chainPriors: g.chainPriors,
    facetIndexMeans: g.facetIndexMeans,
  };
}

/** One agent's maintained rows (its score relative to its current owner). */
export async function readAgentAggregates(
  db: Queryable,
  network: string,
  agentId: string,
): Promise<{ aggregates: SubjectAggregates; raterSubjectCounts: Map<string, number>; total: number }> {
  const d = await readAgentDetailInputs(db, network, agentId);
  return { aggregates: d.aggregates, raterSubjectCounts: d.raterSubjectCounts, total: d.total };
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
): Promise<{
  rows: EmittedAggregate[];
  tags: AgentRaterTagAggregate[];
  first: Date | null;
  last: Date | null;
}> {
  const [rows, tags, span] = await Promise.all([
    db.query<Record<string, unknown>>(
      `SELECT ${RATER_COLS}, coalesce(a.owner, ar.network || ':' || ar.agent_id) AS subject
         FROM live_agent_rater ar LEFT JOIN agents a ON a.network = ar.network AND a.agent_id = ar.agent_id
        WHERE ar.rater = $1`,
      [rater],
      { prepare: true },
    ),
    db.query<Record<string, unknown>>(
      `SELECT ${TAG_COLS} FROM live_agent_rater_tag t WHERE t.rater = $1`,
      [rater],
      {
        prepare: true,
      },
    ),
    db.query<{ first: Date | null; last: Date | null }>(
      `SELECT (SELECT block_time FROM ratings WHERE rater = $1 AND block_time IS NOT NULL ORDER BY block_time ASC LIMIT 1) AS first,
              (SELECT block_time FROM ratings WHERE rater = $1 AND block_time IS NOT NULL ORDER BY block_time DESC LIMIT 1) AS last`,
      [rater],
      { prepare: true },
    ),
  ]);
  return {
    rows: rows.map((r) => ({ ...raterRow(r), subject: String(r.subject) })),
    tags: tags.map(tagRow),
    first: span[0]?.first ?? null,
    last: span[0]?.last ?? null,
  };
}
