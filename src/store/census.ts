/**
 * The completeness census's statements: what the index holds up to a block for a chunk of agents
 * (the census compares it with the registries' own answers; these reads belong to the indexer,
 * like readChainPassState, so they sit beside its writes; one query per kind for the whole
 * chunk), the census outcome written on the `chains` row, and every difference it found
 * (`census_differences`). Every statement is parameterised.
 */
import type { Queryable } from '../db/database.js';
import { chunks, iso } from './rows.js';

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
  /** The index holds the agent's Registered event, at or below the census block. */
  registered: boolean;
}

/** The index's current owner and URI of the given agents, in one query (absent: not indexed). */
export async function indexedAgents(
  db: Queryable,
  network: string,
  ids: readonly string[],
  block: number,
): Promise<IndexedAgent[]> {
  return db.query<IndexedAgent & Record<string, unknown>>(
    `SELECT agent_id, owner, agent_uri, (minter IS NOT NULL AND registered_block <= $3) AS registered
       FROM agents WHERE network = $1 AND agent_id = ANY($2::text[])`,
    [network, ids, block],
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
  ids: readonly string[],
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
  /** unchecked: the census could not run or a census function reverted (the detail says why). */
  state: 'ok' | 'mismatch' | 'unchecked';
  /** What differed (JSON text), or the figures of an agreeing census. */
  detail: string;
  block: number;
  at: Date;
  /**
   * full: every minted agent (moves census_full_block/at, restarts the pass count); sample: some;
   * null: the census could not run.
   */
  scope: 'full' | 'sample' | null;
  /** How it read the chain: 'multicall3' or 'eth_call' (null: it could not start). */
  method: string | null;
}

/** Writes a chain's census outcome (a full one also marks itself the last full census). */
export async function recordCensus(db: Queryable, network: string, c: CensusRecord): Promise<void> {
  const full = c.scope === 'full';
  await db.query(
    `UPDATE chains SET census_state = $2, census_detail = $3, census_block = $4, census_at = $5,
        census_scope = $6, census_method = $7,
        census_full_block = CASE WHEN $8 THEN $4 ELSE census_full_block END,
        census_full_at = CASE WHEN $8 THEN $5::timestamptz ELSE census_full_at END,
        census_passes_since_full = CASE WHEN $8 THEN 0 ELSE census_passes_since_full + 1 END
      WHERE network = $1`,
    [network, c.state, c.detail, c.block, iso(c.at), c.scope, c.method, full],
  );
}

/** Counts a pass whose census could not run towards the next full census (CENSUS_FULL_EVERY). */
export async function countCensusPass(db: Queryable, network: string): Promise<void> {
  await db.query(
    `UPDATE chains SET census_passes_since_full = census_passes_since_full + 1 WHERE network = $1`,
    [network],
  );
}

export interface StoredDifference {
  what: string;
  agent_id?: string | undefined;
  client?: string | undefined;
  chain: string;
  index: string;
}

/** Replaces the chain's stored differences with those of the census at `block` (all of them). */
export async function storeCensusDifferences(
  db: Queryable,
  network: string,
  block: number,
  diffs: readonly StoredDifference[],
): Promise<void> {
  await db.query(`DELETE FROM census_differences WHERE network = $1`, [network]);
  let seq = 0;
  for (const c of chunks(diffs)) {
    const first = seq;
    seq += c.length;
    await db.query(
      `INSERT INTO census_differences (network, seq, census_block, what, agent_id, client, chain_value, index_value)
       SELECT $1, ($3::int + ord - 1)::int, $2, what, agent_id, client, chain_value, index_value
         FROM unnest($4::text[], $5::text[], $6::text[], $7::text[], $8::text[])
              WITH ORDINALITY AS v(what, agent_id, client, chain_value, index_value, ord)`,
      [
        network,
        block,
        first,
        c.map((d) => d.what),
        c.map((d) => d.agent_id ?? null),
        c.map((d) => d.client ?? null),
        c.map((d) => d.chain),
        c.map((d) => d.index),
      ],
    );
  }
}

/** Writes (or clears, with null) the chain's configuration warnings. */
export async function recordConfigWarning(
  db: Queryable,
  network: string,
  text: string | null,
): Promise<void> {
  await db.query(`UPDATE chains SET config_warning = $2 WHERE network = $1`, [network, text]);
}
