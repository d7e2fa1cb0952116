/**
 * What a census found different between a chain and the index: one row per agent or per (agent,
 * client) pair, every one of them stored (`census_differences`), the first few shown in the
 * census detail of `GET /health` with the counts per kind.
 */

/**
 * - `agents`: minted agents on the chain against Registered rows in the index (the chain's count);
 * - `registered`: an agent minted on the chain whose Registered event the index lacks;
 * - `owner`, `uri`: the agent's current owner or URI differ;
 * - `feedback`: the feedback a client gave the agent (getLastIndex) against the ratings held
 *   (a client the index lacks, or a rater the chain does not know, counts as 0 on that side);
 * - `revoked`: the pair's revoked feedback on the chain against the revoked ratings held.
 */
export type DifferenceKind = 'agents' | 'registered' | 'owner' | 'uri' | 'feedback' | 'revoked';

export interface CensusDifference {
  what: DifferenceKind;
  agent_id?: string;
  client?: string;
  chain: string;
  index: string;
}

/** Differences shown in the census detail (every one is stored). */
export const SHOWN_DIFFERENCES = 20;

/** How many differences of each kind. */
export function countByKind(diffs: readonly CensusDifference[]): Partial<Record<DifferenceKind, number>> {
  const out: Partial<Record<DifferenceKind, number>> = {};
  for (const d of diffs) out[d.what] = (out[d.what] ?? 0) + 1;
  return out;
}

/** The agents a list of differences names (the chain-level `agents` count names none). */
export function agentsOf(diffs: readonly CensusDifference[]): string[] {
  return [...new Set(diffs.flatMap((d) => (d.agent_id === undefined ? [] : [d.agent_id])))];
}
