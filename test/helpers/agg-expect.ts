/**
 * Independent expectations for the free aggregate routes, recomputed from the stored `ratings`
 * and `agents` rows with the pure scoring functions (never from the aggregate tables), so the
 * contract tests check the SQL aggregates and the read model against the policy itself.
 */
import { expect } from 'vitest';
import type { Queryable } from '../../src/db/database.js';
import {
  classifyRating,
  compareLeaderboard,
  DecimalSum,
  normalizeAddress,
  parseDecimal,
  round6,
  shrunkScore,
  walletScore,
  type EligibleValue,
} from '../../src/scoring/index.js';

export interface StoredRating {
  network: string;
  tx_hash: string;
  log_index: number;
  agent_id: string;
  rater: string;
  feedback_index: string;
  value: string;
  value_raw: string;
  value_decimals: number;
  tag1: string;
  feedback_uri: string;
  block_number: number;
  block_time: Date | null;
  revoked: boolean;
  revoked_tx: string | null;
  owner: string | null;
}

export interface StoredAgent {
  network: string;
  agent_id: string;
  owner: string | null;
  declared_type: string | null;
}

export async function loadStored(db: Queryable): Promise<{ ratings: StoredRating[]; agents: StoredAgent[] }> {
  const ratings = await db.query<StoredRating & Record<string, unknown>>(
    `SELECT r.network, r.tx_hash, r.log_index, r.agent_id, r.rater, r.feedback_index::text AS feedback_index,
            r.value::text AS value, r.value_raw::text AS value_raw,
            r.value_decimals, r.tag1, r.feedback_uri, r.block_number, r.block_time, r.revoked, r.revoked_tx, a.owner
       FROM ratings r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id`,
  );
  const agents = await db.query<StoredAgent & Record<string, unknown>>(
    `SELECT network, agent_id, owner, declared_type FROM agents`,
  );
  return {
    ratings: ratings.map((r) => ({
      ...r,
      log_index: Number(r.log_index),
      block_number: Number(r.block_number),
    })),
    agents,
  };
}

const byCodeUnit = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function mean(values: readonly string[]): number | null {
  const acc = new DecimalSum();
  for (const v of values) acc.add(parseDecimal(v)!);
  return acc.mean();
}

export function isEligible(r: StoredRating): boolean {
  // A rating of an identity with no known owner cannot be a self-rating (the aggregates' rule).
  return classifyRating(r, r.owner ?? '') === 'eligible';
}

export interface ExpectedWallet {
  wallet: string;
  final_score: number | null;
  distinct_raters: number;
  total_reviews: number;
  chain_count: number;
  networks: string[];
  per_chain: Map<string, { final_score: number | null; distinct_raters: number; total_reviews: number }>;
}

/** Every owner's scores under `equal-weight-per-chain@2`, recomputed from the rows. */
export function expectedWallets(s: {
  ratings: StoredRating[];
  agents: StoredAgent[];
}): Map<string, ExpectedWallet> {
  const out = new Map<string, ExpectedWallet>();
  const eligibleBy = new Map<string, EligibleValue[]>();
  for (const r of s.ratings) {
    if (r.owner === null || classifyRating(r, r.owner) !== 'eligible') continue;
    const list = eligibleBy.get(r.owner) ?? [];
    list.push({ network: r.network, rater: r.rater, value: r.value });
    eligibleBy.set(r.owner, list);
  }
  const owners = new Set(s.agents.filter((a) => a.owner !== null).map((a) => a.owner as string));
  for (const w of owners) {
    const elig = eligibleBy.get(w) ?? [];
    const score = walletScore(elig);
    const per_chain = new Map<
      string,
      { final_score: number | null; distinct_raters: number; total_reviews: number }
    >();
    for (const c of score.per_chain) {
      per_chain.set(c.network, {
        final_score: c.final_score,
        distinct_raters: c.distinct_raters ?? 0,
        total_reviews: c.review_count,
      });
    }
    out.set(w, {
      wallet: w,
      final_score: score.final_score,
      distinct_raters: new Set(elig.map((e) => normalizeAddress(e.rater))).size,
      total_reviews: elig.length,
      chain_count: score.chain_count,
      networks: score.per_chain.filter((c) => c.final_score !== null).map((c) => c.network),
      per_chain,
    });
  }
  return out;
}

/** The prior under `bayes-shrinkage-distinct-raters@1`: mean of the scored wallets' final scores. */
export function expectedPrior(finals: readonly (number | null)[]): number | null {
  const xs = finals.filter((x): x is number => x !== null);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null;
}

export function sortLeaderboard<
  T extends { wallet: string; shrunk_score: number | null; distinct_raters: number },
>(rows: T[]): T[] {
  return [...rows].sort(compareLeaderboard);
}

export interface ExpectedFacet {
  count: number;
  eligible: number;
  avg_score: number | null;
  distinct_agents: number;
  distinct_raters: number;
}

export function expectedFacets(
  ratings: readonly StoredRating[],
  network: string | null,
): Map<string, ExpectedFacet> {
  const groups = new Map<string, StoredRating[]>();
  for (const r of ratings) {
    if (network !== null && r.network !== network) continue;
    const list = groups.get(r.tag1) ?? [];
    list.push(r);
    groups.set(r.tag1, list);
  }
  const out = new Map<string, ExpectedFacet>();
  for (const [tag, rs] of groups) {
    const elig = rs.filter(isEligible);
    const m = mean(elig.map((r) => r.value));
    out.set(tag, {
      count: rs.length,
      eligible: elig.length,
      avg_score: m === null ? null : round6(m),
      distinct_agents: new Set(rs.map((r) => `${r.network}:${r.agent_id}`)).size,
      distinct_raters: new Set(rs.map((r) => r.rater)).size,
    });
  }
  return out;
}

/** Facet keys in the served order: volume desc, then tag1 by code unit. */
export function facetOrder(facets: Map<string, ExpectedFacet>): string[] {
  return [...facets.entries()]
    .sort((a, b) => b[1].count - a[1].count || byCodeUnit(a[0], b[0]))
    .map(([k]) => k);
}

/** Feed order: block_time desc, network asc, block_number desc, log_index desc; undated left out. */
export function expectedFeed(
  ratings: readonly StoredRating[],
  network: string | null,
  limit: number,
): StoredRating[] {
  return ratings
    .filter((r) => r.block_time !== null && (network === null || r.network === network))
    .sort(
      (a, b) =>
        b.block_time!.getTime() - a.block_time!.getTime() ||
        byCodeUnit(a.network, b.network) ||
        b.block_number - a.block_number ||
        b.log_index - a.log_index,
    )
    .slice(0, limit);
}

/** Host of an http(s) URI, lower-cased; null when there is none. */
export function uriHost(uri: string): string | null {
  if (!/^https?:\/\//i.test(uri)) return null;
  try {
    const h = new URL(uri).hostname.toLowerCase();
    return h === '' ? null : h;
  } catch {
    return null;
  }
}

export { byCodeUnit };

// ------------------------------------------------------------------ generic checks of the served bodies

/* eslint-disable @typescript-eslint/no-explicit-any */
type Body = any;

/** The leaderboard rows every stored row implies, in order (prior taken from the response). */
export function expectedLeaderboard(
  s: { ratings: StoredRating[]; agents: StoredAgent[] },
  servedPrior: number,
  limit = 100,
) {
  const types = new Map<string, (string | null)[]>();
  for (const a of s.agents) {
    if (!a.owner) continue;
    const list = types.get(a.owner) ?? [];
    if (a.declared_type !== null && !list.includes(a.declared_type)) list.push(a.declared_type);
    types.set(a.owner, list);
  }
  const sortTypes = (xs: (string | null)[]) =>
    [...xs].sort((a, b) => (a === b ? 0 : a === null ? 1 : b === null ? -1 : byCodeUnit(a, b)));
  const scored = [...expectedWallets(s).values()].filter((w) => w.final_score !== null);
  return sortLeaderboard(
    scored.map((w) => ({
      wallet: w.wallet,
      final_score: w.final_score,
      shrunk_score: shrunkScore(w.final_score, w.distinct_raters, servedPrior),
      distinct_raters: w.distinct_raters,
      total_reviews: w.total_reviews,
      chain_count: w.chain_count,
      networks: w.networks,
      declared_types: sortTypes(types.get(w.wallet) ?? []),
    })),
  )
    .slice(0, limit)
    .map((r, i) => ({ rank: i + 1, ...r }));
}

export function checkLeaderboard(body: Body, s: { ratings: StoredRating[]; agents: StoredAgent[] }): void {
  const scored = [...expectedWallets(s).values()].filter((w) => w.final_score !== null);
  const prior = expectedPrior(scored.map((w) => w.final_score));
  expect(Math.abs(body.shrinkage.prior - prior!)).toBeLessThanOrEqual(1e-6);
  expect(body.rows).toEqual(expectedLeaderboard(s, body.shrinkage.prior));
  const { k, prior: p } = body.shrinkage;
  for (const r of body.rows) {
    expect(r.shrunk_score).toBe(
      round6((r.distinct_raters * r.final_score + k * p) / (r.distinct_raters + k)),
    );
  }
}

export function checkChainStats(rows: Body[], s: { ratings: StoredRating[]; agents: StoredAgent[] }): void {
  for (const row of rows) {
    const rs = s.ratings.filter((r) => r.network === row.network);
    const owned = rs.filter((r) => r.owner !== null);
    const elig = owned.filter(isEligible);
    const agents = s.agents.filter((a) => a.network === row.network);
    expect(row.agents, row.network).toBe(agents.length);
    expect(row.owners, row.network).toBe(new Set(agents.filter((a) => a.owner).map((a) => a.owner)).size);
    expect(row.ratings, row.network).toBe(rs.length);
    expect(row.distinct_raters, row.network).toBe(new Set(rs.map((r) => r.rater)).size);
    expect(row.rated_agents, row.network).toBe(new Set(rs.map((r) => r.agent_id)).size);
    expect(row.eligible_ratings, row.network).toBe(elig.length);
    expect(row.revoked, row.network).toBe(owned.filter((r) => r.revoked).length);
    expect(row.orphan_ratings, row.network).toBe(rs.length - owned.length);
    expect(row.self_rated + row.out_of_domain + row.revoked + row.eligible_ratings, row.network).toBe(
      owned.length,
    );
    expect(row.facets, row.network).toBe(new Set(rs.map((r) => r.tag1)).size);
    const m = mean(elig.map((r) => r.value));
    expect(row.avg_value, row.network).toBe(m === null ? null : round6(m));
    const dated = rs
      .filter((r) => r.block_time)
      .map((r) => r.block_time!.toISOString().slice(0, 10))
      .sort();
    expect(row.first_rating_day, row.network).toBe(dated[0] ?? null);
    expect(row.last_rating_day, row.network).toBe(dated.at(-1) ?? null);
  }
}

export function checkChainDetail(
  body: Body,
  s: { ratings: StoredRating[]; agents: StoredAgent[] },
  network: string,
  now: Date,
  limit: number,
): void {
  const onChain = [...expectedWallets(s).values()]
    .map((w) => ({ wallet: w.wallet, pc: w.per_chain.get(network) }))
    .filter((x) => x.pc && x.pc.final_score !== null);
  const prior = expectedPrior(onChain.map((x) => x.pc!.final_score));
  if (prior === null) expect(body.shrinkage.prior).toBeNull();
  else expect(Math.abs(body.shrinkage.prior - prior)).toBeLessThanOrEqual(1e-6);
  const expectedTop = sortLeaderboard(
    onChain.map((x) => ({
      wallet: x.wallet,
      final_score: x.pc!.final_score,
      shrunk_score: shrunkScore(x.pc!.final_score, x.pc!.distinct_raters, body.shrinkage.prior),
      distinct_raters: x.pc!.distinct_raters,
      total_reviews: x.pc!.total_reviews,
    })),
  )
    .slice(0, limit)
    .map((r, i) => ({ rank: i + 1, ...r }));
  expect(
    body.top.map((r: Body) => ({
      rank: r.rank,
      wallet: r.wallet,
      final_score: r.final_score,
      shrunk_score: r.shrunk_score,
      distinct_raters: r.distinct_raters,
      total_reviews: r.total_reviews,
    })),
  ).toEqual(expectedTop);
  for (const r of body.top) {
    const agents = s.agents.filter((a) => a.network === network && a.owner === r.wallet);
    expect(r.agent_count).toBe(agents.length);
    expect([...r.agent_ids].sort()).toEqual(agents.map((a) => a.agent_id).sort());
  }
  const ef = expectedFacets(s.ratings, network);
  expect(body.facets.map((f: Body) => f.facet)).toEqual(facetOrder(ef));
  for (const f of body.facets) expect(f).toEqual({ facet: f.facet, ...ef.get(f.facet) });
  expect(body.activity).toHaveLength(body.days);
  expect(body.activity.at(-1).day).toBe(now.toISOString().slice(0, 10));
  for (const d of body.activity) {
    const rs = s.ratings.filter(
      (r) => r.network === network && r.block_time && r.block_time.toISOString().slice(0, 10) === d.day,
    );
    expect(d).toEqual({ day: d.day, ratings: rs.length, raters: new Set(rs.map((r) => r.rater)).size });
  }
}

export function checkFeed(
  body: Body[],
  s: { ratings: StoredRating[] },
  network: string | null,
  limit: number,
): void {
  const exp = expectedFeed(s.ratings, network, limit);
  expect(body.map((r) => r.tx_hash + ':' + r.log_index)).toEqual(
    exp.map((r) => r.tx_hash + ':' + r.log_index),
  );
  body.forEach((row, i) => {
    const r = exp[i]!;
    expect(row).toEqual({
      network: r.network,
      agent_id: r.agent_id,
      subject_wallet: r.owner,
      rater: r.rater,
      facet: r.tag1,
      value: Number(r.value),
      value_exact: row.value_exact,
      value_raw: r.value_raw,
      value_decimals: r.value_decimals,
      tx_hash: r.tx_hash,
      block_time: r.block_time!.toISOString(),
      block_number: r.block_number,
      log_index: r.log_index,
      revoked: r.revoked,
      revoked_tx: r.revoked_tx,
    });
    expect(Number(row.value_exact)).toBe(row.value);
  });
}

export function checkFacetsObject(
  body: Body,
  text: string,
  s: { ratings: StoredRating[] },
  network: string | null,
) {
  const ef = expectedFacets(s.ratings, network);
  const order = facetOrder(ef);
  const wireKeys = [...text.matchAll(/(?:^\{|\},)("(?:[^"\\]|\\.)*"):\{"count"/g)].map(
    (m) => JSON.parse(m[1]!) as string,
  );
  expect(wireKeys).toEqual(order);
  for (const k of order) expect(body[k]).toEqual(ef.get(k));
}

export function checkIssuers(body: Body, s: { ratings: StoredRating[] }, org: (h: string) => string): void {
  const groups = new Map<string | null, StoredRating[]>();
  for (const r of s.ratings) {
    const h = uriHost(r.feedback_uri);
    groups.set(h, [...(groups.get(h) ?? []), r]);
  }
  const reach = (rs: StoredRating[]) => ({
    count: rs.length,
    distinct_agents: new Set(rs.map((r) => `${r.network}:${r.agent_id}`)).size,
    distinct_raters: new Set(rs.map((r) => r.rater)).size,
  });
  expect(body.no_host).toEqual(reach(groups.get(null) ?? []));
  const exp = [...groups.entries()]
    .filter(([h]) => h !== null)
    .map(([h, rs]) => ({ issuer_host: h as string, issuer_org: org(h as string), ...reach(rs) }))
    .sort((a, b) => b.count - a.count || byCodeUnit(a.issuer_host, b.issuer_host));
  expect(body.issuers).toEqual(exp);
}

const undeclared = (t: string | null) => t === null || t === '' || t === 'unknown';

export function checkTypes(body: Body, s: { ratings: StoredRating[]; agents: StoredAgent[] }): void {
  const total = s.agents.length;
  const unknown = s.agents.filter((a) => undeclared(a.declared_type)).length;
  expect(body.total_agents).toBe(total);
  expect(body.unknown_agents).toBe(unknown);
  expect(body.declared_agents).toBe(total - unknown);
  expect(body.unknown_share).toBe(total ? round6(unknown / total) : null);
  const keys = Object.keys(body.types);
  expect(new Set(keys)).toEqual(
    new Set(['unknown', ...s.agents.filter((a) => !undeclared(a.declared_type)).map((a) => a.declared_type)]),
  );
  for (const key of keys) {
    const agents = s.agents.filter((a) =>
      key === 'unknown' ? undeclared(a.declared_type) : a.declared_type === key,
    );
    const keyOf = new Set(agents.map((a) => `${a.network}:${a.agent_id}`));
    const elig = s.ratings.filter((r) => isEligible(r) && keyOf.has(`${r.network}:${r.agent_id}`));
    const rated = new Set(elig.map((r) => `${r.network}:${r.agent_id}`));
    expect(body.types[key].agent_count, key).toBe(agents.length);
    expect(body.types[key].rated_agent_count, key).toBe(rated.size);
    expect(body.types[key].total_reviews, key).toBe(elig.length);
    const m = mean(elig.map((r) => r.value));
    if (m === null) expect(body.types[key].avg_score).toBeNull();
    else expect(Math.abs(body.types[key].avg_score - m)).toBeLessThanOrEqual(1e-6);
  }
}

export function checkCategories(body: Body, s: { agents: StoredAgent[]; ratings: StoredRating[] }): void {
  const declared = s.agents.filter((a) => !undeclared(a.declared_type));
  const names = [...new Set(declared.map((a) => a.declared_type as string))].sort(byCodeUnit);
  expect(body.categories.map((c: Body) => c.category)).toEqual(names);
  for (const c of body.categories) {
    const agents = declared.filter((a) => a.declared_type === c.category);
    const keyOf = new Set(agents.map((a) => `${a.network}:${a.agent_id}`));
    const elig = s.ratings.filter((r) => isEligible(r) && keyOf.has(`${r.network}:${r.agent_id}`));
    expect(c).toEqual({
      category: c.category,
      agent_count: agents.length,
      rated_agent_count: new Set(elig.map((r) => `${r.network}:${r.agent_id}`)).size,
      total_reviews: elig.length,
    });
  }
  expect(body.coverage).toEqual({
    categorized_agents: declared.length,
    total_agents: s.agents.length,
    share: s.agents.length ? round6(declared.length / s.agents.length) : null,
  });
}
/* eslint-enable @typescript-eslint/no-explicit-any */
