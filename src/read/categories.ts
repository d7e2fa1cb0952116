/**
 * GET /categories: our own small catalog (the contract does not show one). A category is a type
 * that agents of the index declare about themselves, verbatim, listed only when at least one
 * indexed agent declares it: nothing is curated, mapped or invented. Self-declared, never verified.
 */
import type { Queryable } from '../db/database.js';
import { round6Ratio } from '../scoring/index.js';
import { byCodeUnit, UNKNOWN_TYPE } from './stats.js';

export interface Category {
  /** The declared type, verbatim (untrusted text: escape before rendering). */
  category: string;
  /** Indexed agents declaring it. */
  agent_count: number;
  /** Of those, agents with at least one eligible rating. */
  rated_agent_count: number;
  /** Eligible ratings received by those agents. */
  total_reviews: number;
}

export interface CategoryCatalog {
  /** Alphabetical (code-unit order), never by volume or reputation. */
  categories: Category[];
  coverage: {
    /** Agents that declare a category. */
    categorized_agents: number;
    total_agents: number;
    /** categorized_agents / total_agents, six decimals; null when the index holds no agent. */
    share: number | null;
  };
}

export async function readCategories(db: Queryable): Promise<CategoryCatalog> {
  const rows = await db.query<{
    declared: boolean;
    declared_type: string;
    agent_count: number;
    rated_agent_count: number;
    total_reviews: number;
  }>(`SELECT declared, declared_type, agent_count, rated_agent_count, total_reviews FROM agg_type`);
  let total = 0;
  const categories: Category[] = [];
  for (const r of rows) {
    total += Number(r.agent_count);
    // Same rule as /stats/types: an empty or literal "unknown" declaration says nothing.
    if (!r.declared || r.declared_type === '' || r.declared_type === UNKNOWN_TYPE) continue;
    categories.push({
      category: r.declared_type,
      agent_count: Number(r.agent_count),
      rated_agent_count: Number(r.rated_agent_count),
      total_reviews: Number(r.total_reviews),
    });
  }
  categories.sort((a, b) => byCodeUnit(a.category, b.category));
  const categorized = categories.reduce((s, c) => s + c.agent_count, 0);
  return {
    categories,
    coverage: {
      categorized_agents: categorized,
      total_agents: total,
      share: total > 0 ? round6Ratio(categorized, total) : null,
    },
  };
}
