/**
 * Write statements for the identity side of the index: agents, ownership transfers, agent URIs,
 * metadata and the declared type. The ingest (src/indexer/ingest.ts) decides WHICH events apply
 * (chain order, first/last per key); these statements make each write idempotent and forward
 * only, so a batch written twice changes nothing.
 */
import type { Queryable } from '../db/database.js';
import type { MetadataSetEvent, TransferEvent } from '../index-events.js';
import { chunks, count, iso } from './rows.js';

/** Longest declared type kept (it is a grouping key of the free aggregates). */
export const MAX_DECLARED_TYPE_CHARS = 200;

type AgentKey = { network: string; agentId: string };

/**
 * One agent's identity writes of a batch: the row exists; and, each when given, the owner (the
 * batch's last Transfer, forward only in chain order), the minter (its first Registered, the
 * earliest wins) and the URI (its latest Registered/URIUpdated, forward only).
 */
export interface AgentWrite extends AgentKey {
  owner: { to: string; blockNumber: number; logIndex: number } | null;
  minter: { minter: string; blockNumber: number; txHash: string; blockTime: Date | null } | null;
  uri: { uri: string; blockNumber: number; logIndex: number; declaredType: string | null } | null;
}

// The forward-only rules of moveOwners, setMinters and setAgentUris, for the incoming row `v`
// (EXCLUDED) against the stored one (`a`).
const OWNER_MOVES = `(EXCLUDED.owner_block IS NOT NULL AND (a.owner_block IS NULL
  OR (EXCLUDED.owner_block, EXCLUDED.owner_log_index) > (a.owner_block, coalesce(a.owner_log_index, -1))))`;
const MINTER_SETS = `(EXCLUDED.registered_block IS NOT NULL AND (a.registered_block IS NULL
  OR EXCLUDED.registered_block < a.registered_block))`;
const URI_MOVES = `(EXCLUDED.uri_block IS NOT NULL AND (a.uri_block IS NULL
  OR (EXCLUDED.uri_block, EXCLUDED.uri_log_index) > (a.uri_block, coalesce(a.uri_log_index, -1))))`;
const pickCol = (rule: string, col: string) =>
  `${col} = CASE WHEN ${rule} THEN EXCLUDED.${col} ELSE a.${col} END`;

/**
 * The batch's identity writes in ONE statement per chunk (one row per agent; keys unique): a new
 * agent is inserted with its owner, minter and URI (the chain's live agents counter moves by the
 * rows inserted), a known one gets what moves forward and is not touched otherwise. The same rows
 * and the same aggregate moves as ensureAgents + moveOwners + setMinters + setAgentUris one after
 * the other (a new agent's owner reaches the maintained aggregates through the agents INSERT
 * trigger instead of the UPDATE one: both apply "no owner → owner"), in one statement and one
 * firing of the agents triggers instead of four.
 */
export async function upsertAgents(tx: Queryable, rows: readonly AgentWrite[]): Promise<void> {
  for (const c of chunks(rows)) {
    await tx.query(
      `WITH ins AS (
         INSERT INTO agents AS a (network, agent_id, owner, owner_block, owner_log_index, minter, registered_block,
                                  registered_tx, registered_at, agent_uri, uri_block, uri_log_index, uri_declared_type)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::int[], $6::text[], $7::bigint[],
                              $8::text[], $9::timestamptz[], $10::text[], $11::bigint[], $12::int[], $13::text[])
         ON CONFLICT (network, agent_id) DO UPDATE SET
           ${pickCol(OWNER_MOVES, 'owner')}, ${pickCol(OWNER_MOVES, 'owner_block')},
           ${pickCol(OWNER_MOVES, 'owner_log_index')},
           ${pickCol(MINTER_SETS, 'minter')}, ${pickCol(MINTER_SETS, 'registered_block')},
           ${pickCol(MINTER_SETS, 'registered_tx')}, ${pickCol(MINTER_SETS, 'registered_at')},
           ${pickCol(URI_MOVES, 'agent_uri')}, ${pickCol(URI_MOVES, 'uri_block')},
           ${pickCol(URI_MOVES, 'uri_log_index')}, ${pickCol(URI_MOVES, 'uri_declared_type')}
         WHERE ${OWNER_MOVES} OR ${MINTER_SETS} OR ${URI_MOVES}
         RETURNING a.network, (a.xmax = 0) AS inserted),
       bump AS (UPDATE chains c SET agents_count = c.agents_count + x.n
                  FROM (SELECT network, count(*) AS n FROM ins WHERE inserted GROUP BY network) x
                 WHERE c.network = x.network)
       SELECT count(*)::int AS n FROM ins`,
      [
        c.map((e) => e.network),
        c.map((e) => e.agentId),
        c.map((e) => e.owner?.to ?? null),
        c.map((e) => e.owner?.blockNumber ?? null),
        c.map((e) => e.owner?.logIndex ?? null),
        c.map((e) => e.minter?.minter ?? null),
        c.map((e) => e.minter?.blockNumber ?? null),
        c.map((e) => e.minter?.txHash ?? null),
        c.map((e) => iso(e.minter?.blockTime ?? null)),
        c.map((e) => e.uri?.uri ?? null),
        c.map((e) => e.uri?.blockNumber ?? null),
        c.map((e) => e.uri?.logIndex ?? null),
        c.map((e) => e.uri?.declaredType ?? null),
      ],
    );
  }
}

/** Stores ownership transfers (history); returns the rows really inserted. */
export async function insertTransfers(tx: Queryable, transfers: readonly TransferEvent[]): Promise<number> {
  let n = 0;
  for (const c of chunks(transfers)) {
    n += await count(
      tx,
      `WITH ins AS (
         INSERT INTO ownership_transfers (network, tx_hash, log_index, agent_id, from_address, to_address, block_number, block_time)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::timestamptz[])
         ON CONFLICT (network, tx_hash, log_index) DO NOTHING RETURNING 1)
       SELECT count(*)::int AS n FROM ins`,
      [
        c.map((e) => e.network),
        c.map((e) => e.txHash),
        c.map((e) => e.logIndex),
        c.map((e) => e.agentId),
        c.map((e) => e.from),
        c.map((e) => e.to),
        c.map((e) => e.blockNumber),
        c.map((e) => iso(e.blockTime)),
      ],
    );
  }
  return n;
}

interface AgentUriUpdate extends AgentKey {
  uri: string;
  blockNumber: number;
  logIndex: number;
  /** The declared type read from an inline `data:` registration file (null: none). */
  declaredType: string | null;
}

/** Sets each agent's URI (and the type its inline file declares), forward only in chain order. */
export async function setAgentUris(tx: Queryable, latest: readonly AgentUriUpdate[]): Promise<void> {
  for (const c of chunks(latest)) {
    await tx.query(
      `UPDATE agents a SET agent_uri = v.uri, uri_block = v.blk, uri_log_index = v.li, uri_declared_type = v.dtype
         FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::int[], $6::text[])
              AS v(network, agent_id, uri, blk, li, dtype)
        WHERE a.network = v.network AND a.agent_id = v.agent_id
          AND (a.uri_block IS NULL OR (v.blk, v.li) > (a.uri_block, coalesce(a.uri_log_index, -1)))`,
      [
        c.map((e) => e.network),
        c.map((e) => e.agentId),
        c.map((e) => e.uri),
        c.map((e) => e.blockNumber),
        c.map((e) => e.logIndex),
        c.map((e) => e.declaredType),
      ],
    );
  }
}

/** Upserts the latest value per (agent, key), forward only; returns the rows written. */
export async function upsertMetadata(tx: Queryable, latest: readonly MetadataSetEvent[]): Promise<number> {
  let n = 0;
  for (const c of chunks(latest)) {
    n += await count(
      tx,
      `WITH up AS (
         INSERT INTO agent_metadata (network, agent_id, meta_key, value_hex, value_text, block_number, log_index, tx_hash)
         SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bigint[], $7::int[], $8::text[])
         ON CONFLICT (network, agent_id, meta_key) DO UPDATE SET
           value_hex = EXCLUDED.value_hex, value_text = EXCLUDED.value_text, block_number = EXCLUDED.block_number,
           log_index = EXCLUDED.log_index, tx_hash = EXCLUDED.tx_hash
         WHERE (EXCLUDED.block_number, EXCLUDED.log_index) > (agent_metadata.block_number, agent_metadata.log_index)
         RETURNING 1)
       SELECT count(*)::int AS n FROM up`,
      [
        c.map((e) => e.network),
        c.map((e) => e.agentId),
        c.map((e) => e.key),
        c.map((e) => e.valueHex),
        c.map((e) => e.valueText),
        c.map((e) => e.blockNumber),
        c.map((e) => e.logIndex),
        c.map((e) => e.txHash),
      ],
    );
  }
  return n;
}

/**
 * Recomputes the declared type of the named agents: their own metadata keys `type`, `agentType`,
 * `category` (in that order, trimmed, non-empty), else the type of their inline registration file.
 */
export async function refreshDeclaredTypes(tx: Queryable, agents: readonly AgentKey[]): Promise<void> {
  for (const c of chunks(agents)) {
    await tx.query(
      `UPDATE agents a SET declared_type = d.t
         FROM (
           SELECT k.network, k.agent_id, coalesce(
             (SELECT left(btrim(m.value_text), ${MAX_DECLARED_TYPE_CHARS}) FROM agent_metadata m
               WHERE m.network = k.network AND m.agent_id = k.agent_id
                 AND m.meta_key IN ('type', 'agentType', 'category') AND btrim(coalesce(m.value_text, '')) <> ''
               ORDER BY CASE m.meta_key WHEN 'type' THEN 0 WHEN 'agentType' THEN 1 ELSE 2 END
               LIMIT 1),
             ag.uri_declared_type) AS t
             FROM unnest($1::text[], $2::text[]) AS k(network, agent_id)
             JOIN agents ag ON ag.network = k.network AND ag.agent_id = k.agent_id
         ) d
        WHERE a.network = d.network AND a.agent_id = d.agent_id AND a.declared_type IS DISTINCT FROM d.t`,
      [c.map((e) => e.network), c.map((e) => e.agentId)],
    );
  }
}
