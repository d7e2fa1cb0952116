/**
 * The completeness census's statements: what the index holds up to a block for the sampled agents
 * (the indexer compares it with the registries' own answers; these reads belong to the indexer,
 * like readChainPassState, so they sit beside its writes; one query per kind for the whole
 * sample), and the census outcome written on the `chains` row. Every statement is parameterised.
 */
import type { Queryable } from '../db/database.js';
import { iso } from './rows.js';

/** Agents whose Registered event the index holds up to `block`. */
export async function countRegistered(db: Queryable, network: string, block: number): Promise<number> {
  const [row] = await db.query<{ n: number | string }>(
    `SELECT count(*)::int AS n FROM agents WHERE network = $1 AND minter IS NOT NULL AND registered_block <= $2`,
    [network, block],
  );
  return Number(row?.n ?? 0);
}

export interface IndexedAgent {
  agent_id: string;
  owner: string | null;
  agent_uri: string | null;
}

/** The index's current owner and URI of the given agents, in one query (absent: not indexed). */
export async function indexedAgents(db: Queryable, network: string, ids: string[]): Promise<IndexedAgent[]> {
  return db.query<IndexedAgent & Record<string, unknown>>(
    `SELECT agent_id, owner, agent_uri FROM agents WHERE network = $1 AND agent_id = ANY($2::text[])`,
    [network, ids],
  );
}

export interface IndexedPair {
  agent_id: string;
  rater: string;
  /** Ratings the index holds for the pair up to the block, and how many are revoked. */
  n: number;
  revoked: number;
}

/** Per (agent, rater) of the given agents, in one query: ratings held up to `block`, and the revoked ones. */
export async function indexedPairs(
  db: Queryable,
  network: string,
  ids: string[],
  block: number,
): Promise<IndexedPair[]> {
  const rows = await db.query<IndexedPair & Record<string, unknown>>(
    `SELECT agent_id, rater, count(*)::int AS n, count(*) FILTER (WHERE revoked AND revoked_block <= $3)::int AS revoked
       FROM ratings WHERE network = $1 AND agent_id = ANY($2::text[]) AND block_number <= $3
      GROUP BY agent_id, rater ORDER BY agent_id, rater`,
    [network, ids, block],
  );
  return rows.map((r) => ({ ...r, n: Number(r.n), revoked: Number(r.revoked) }));
}

export interface CensusRecord {
  /** unchecked: the census could not run (the detail says why). */
  state: 'ok' | 'mismatch' | 'unchecked';
  /** What differed (JSON text), or the figures of an agreeing census. */
  detail: string;
  block: number;
  at: Date;
}

/** Writes a chain's census outcome. */
export async function recordCensus(db: Queryable, network: string, c: CensusRecord): Promise<void> {
  await db.query(
    `UPDATE chains SET census_state = $2, census_detail = $3, census_block = $4, census_at = $5 WHERE network = $1`,
    [network, c.state, c.detail, c.block, iso(c.at)],
  );
}

/** Writes (or clears, with null) the chain's configuration warnings. */
export async function recordConfigWarning(
  db: Queryable,
  network: string,
  text: string | null,
): Promise<void> {
  await db.query(`UPDATE chains SET config_warning = $2 WHERE network = $1`, [network, text]);
}
