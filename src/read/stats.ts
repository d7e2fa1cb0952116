/**
 * GET /stats/facets, /stats/types and /stats/issuers (and the facets of GET /chains/{network}):
 * reads of agg_facet, agg_type and agg_issuer. Advisory aggregates: none of them moves a score.
 * Every order is decided here in code-unit order, so it is the same on every database collation.
 */
import type { Queryable } from '../db/database.js';
import { round6, round6Ratio } from '../scoring/index.js';

const num = (v: unknown): number => Number(v ?? 0);

/** Code-unit order: deterministic on every database collation. */
export const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

// ------------------------------------------------------------------ facets

export interface FacetStat {
  /** Raw tag1 (untrusted free text; "" is the facet of ratings that declared none). */
  facet: string;
  /** Every rating carrying this tag1 (volume), whatever its class. */
  count: number;
  /** Eligible ratings (not revoked, value in 0..100, rater is not the subject's owner). */
  eligible: number;
  /** Mean of the eligible values, six decimals; null (never 0) when none is eligible. */
  avg_score: number | null;
  distinct_agents: number;
  distinct_raters: number;
}

/**
 * Every facet of one chain, or of the whole index with network '*': by volume desc, then tag1.
 */
export async function readFacets(db: Queryable, network: string): Promise<FacetStat[]> {
  const rows = await db.query<{
    tag1: string;
    ratings: number;
    eligible: number;
    mean: number | null;
    distinct_agents: number;
    distinct_raters: number;
  }>(
    `SELECT tag1, ratings, eligible, mean, distinct_agents, distinct_raters FROM agg_facet WHERE network = $1`,
    [network],
  );
  return rows
    .map((r) => ({
      facet: r.tag1,
      count: num(r.ratings),
      eligible: num(r.eligible),
      avg_score: r.mean === null || r.mean === undefined ? null : round6(Number(r.mean)),
      distinct_agents: num(r.distinct_agents),
      distinct_raters: num(r.distinct_raters),
    }))
    .sort((a, b) => b.count - a.count || byCodeUnit(a.facet, b.facet));
}

// ------------------------------------------------------------------ types

/** The key of the bucket of agents that declare no type. */
export const UNKNOWN_TYPE = 'unknown';

interface TypeStat {
  /** The declared type verbatim, or `unknown` for the agents that declare none. */
  type: string;
  agent_count: number;
  /** Agents of this type with at least one eligible rating. */
  rated_agent_count: number;
  /** Eligible ratings received by agents of this type. */
  total_reviews: number;
  /** Mean of those eligible ratings, six decimals; null when none. */
  avg_score: number | null;
}

export interface TypeBreakdown {
  total_agents: number;
  declared_agents: number;
  unknown_agents: number;
  /** unknown_agents / total_agents, six decimals; null when the index holds no agent. */
  unknown_share: number | null;
  /** By agent_count desc, then type; the `unknown` bucket is always present, even at zero. */
  types: TypeStat[];
}

/**
 * Declared-type coverage. An empty declaration or a literal `unknown` says nothing either, so it
 * is counted in the `unknown` bucket (one bucket, one meaning: "did not say").
 */
export async function readTypeBreakdown(db: Queryable): Promise<TypeBreakdown> {
  const rows = await db.query<{
    type: string | null;
    agent_count: number;
    rated_agent_count: number;
    total_reviews: number;
    avg_score: number | null;
  }>(
    `SELECT CASE WHEN declared AND declared_type NOT IN ('', $1) THEN declared_type END AS type,
            sum(agent_count) AS agent_count, sum(rated_agent_count) AS rated_agent_count,
            sum(total_reviews) AS total_reviews,
            (sum((avg_score * total_reviews)::numeric) FILTER (WHERE total_reviews > 0) / nullif(sum(total_reviews), 0))::float8 AS avg_score
       FROM agg_type
      GROUP BY 1`,
    [UNKNOWN_TYPE],
  );
  const types: TypeStat[] = rows.map((r) => ({
    type: r.type ?? UNKNOWN_TYPE,
    agent_count: num(r.agent_count),
    rated_agent_count: num(r.rated_agent_count),
    total_reviews: num(r.total_reviews),
    avg_score: r.avg_score === null || r.avg_score === undefined ? null : round6(Number(r.avg_score)),
  }));
  if (!types.some((t) => t.type === UNKNOWN_TYPE)) {
    types.push({
      type: UNKNOWN_TYPE,
      agent_count: 0,
      rated_agent_count: 0,
      total_reviews: 0,
      avg_score: null,
    });
  }
  types.sort((a, b) => b.agent_count - a.agent_count || byCodeUnit(a.type, b.type));
  const total = types.reduce((s, t) => s + t.agent_count, 0);
  const unknown = types.find((t) => t.type === UNKNOWN_TYPE)?.agent_count ?? 0;
  return {
    total_agents: total,
    declared_agents: total - unknown,
    unknown_agents: unknown,
    unknown_share: total > 0 ? round6Ratio(unknown, total) : null,
    types,
  };
}

// ------------------------------------------------------------------ issuers

export const ISSUER_SOURCE = 'derived_from_feedback_uri_host';

/** Second-level labels under which a ccTLD sells names (co.uk, com.au, …). */
const GENERIC_SECOND_LEVEL = new Set(['ac', 'co', 'com', 'edu', 'gov', 'net', 'or', 'org']);

/**
 * The `issuer_org` rule: an approximation of the registrable domain of the host, without the
 * Public Suffix List. IP literals and single-label hosts are their own org; otherwise the last
 * two labels (`feedback.example.com` → `example.com`), or the last three when the host ends in a
 * generic second level under a two-letter country code (`api.shop.co.uk` → `shop.co.uk`).
 */
export function issuerOrg(host: string): string {
  const h = host.replace(/\.$/, '');
  if (h.startsWith('[') || /^\d{1,3}(\.\d{1,3}){3}$/.test(h)) return h;
  const labels = h.split('.');
  if (labels.length <= 2) return h;
  const tld = labels[labels.length - 1] ?? '';
  const second = labels[labels.length - 2] ?? '';
  const take = /^[a-z]{2}$/.test(tld) && GENERIC_SECOND_LEVEL.has(second) ? 3 : 2;
  return labels.slice(-take).join('.');
}

interface IssuerReach {
  count: number;
  distinct_agents: number;
  distinct_raters: number;
}

export interface IssuerStat extends IssuerReach {
  /** Lower-cased host of the feedbackURI, as written (no `www.` stripping). */
  issuer_host: string;
  issuer_org: string;
}

interface IssuerBreakdown {
  /** By count desc, then host. */
  issuers: IssuerStat[];
  /** Ratings whose feedbackURI has no http(s) host (empty, ipfs:, data:, …). */
  no_host: IssuerReach;
}

export async function readIssuers(db: Queryable): Promise<IssuerBreakdown> {
  const rows = await db.query<{
    host: string;
    ratings: number;
    distinct_agents: number;
    distinct_raters: number;
  }>(`SELECT host, ratings, distinct_agents, distinct_raters FROM agg_issuer`);
  let noHost: IssuerReach = { count: 0, distinct_agents: 0, distinct_raters: 0 };
  const issuers: IssuerStat[] = [];
  for (const r of rows) {
    const reach = {
      count: num(r.ratings),
      distinct_agents: num(r.distinct_agents),
      distinct_raters: num(r.distinct_raters),
    };
    if (r.host === '') noHost = reach;
    else issuers.push({ issuer_host: r.host, issuer_org: issuerOrg(r.host), ...reach });
  }
  issuers.sort((a, b) => b.count - a.count || byCodeUnit(a.issuer_host, b.issuer_host));
  return { issuers, no_host: noHost };
}
