/**
 * The shared ingest: writes one batch of normalised events (from any scanner) together with the
 * chain's checkpoint in ONE database transaction, so a crash at any moment loses nothing and
 * duplicates nothing: the next pass restarts from the last committed checkpoint and every insert
 * is idempotent (keyed by network + tx hash + log index).
 *
 * Rules (the subject and rating rules are written out in docs/POLICIES.md):
 *  - ownership follows ERC-721 Transfer and only moves forward in chain order
 *    ((block, log index) compared with agents.owner_block / owner_log_index); Registered sets the
 *    minter, never the owner;
 *  - feedback for an agent the index has not seen is kept as is (no placeholder agent): it joins
 *    the agent by (network, agent_id) once Registered/Transfer arrive;
 *  - revocations are stored, then applied to every matching rating (network, agent, rater,
 *    feedback index), also when the rating arrives after its revocation; the rating stays;
 *  - declared type: the agent's own MetadataSet keys `type`, `agentType`, `category` (in that
 *    order of preference; UTF-8 text, trimmed, non-empty), else the `agentType`/`category` of an
 *    inline `data:` registration file; never fetched over the network.
 * Every statement is parameterised; rows go in as arrays through unnest(), a few thousand per
 * statement.
 */
import type { Database, Queryable } from '../db/database.js';
import {
  sanitizeText,
  type FeedbackEvent,
  type IndexEvent,
  type MetadataSetEvent,
  type RegisteredEvent,
  type RevocationEvent,
  type TransferEvent,
  type UriUpdatedEvent,
} from './scanner.js';

/** Rows per multi-row statement. */
const CHUNK = 4_000;
/** Longest declared type kept (it is a grouping key of the free aggregates). */
const MAX_DECLARED_TYPE_CHARS = 200;
/** Largest inline data: registration file read for a declared type. */
const MAX_DATA_URI_CHARS = 64 * 1024;

export interface CheckpointUpdate {
  network: string;
  /** The batch's last block: everything up to it is now written (null: unchanged). */
  lastScannedBlock: number | null;
  /** The head seen at the start of this pass (before the confirmation margin). */
  headAtLastSync: number;
  /** The checkpoint has reached head − confirmations: the backfill is complete (sticky). */
  caughtUp: boolean;
  /** Set on the pass's last batch of a chain: records last_success_at and clears last_error. */
  successAt?: Date | null;
}

export interface IngestCounts {
  ratings: number;
  revocations: number;
  transfers: number;
  metadata: number;
  /** Ratings whose revoked flag this batch set. */
  revokedApplied: number;
}

export interface IngestHooks {
  /** Called inside the transaction after every write, before COMMIT (tests inject crashes here). */
  beforeCommit?: (tx: Queryable) => Promise<void> | void;
}

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function chunks<T>(rows: T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK));
  return out;
}

/** Position comparison: is a after b in chain order? */
function after(
  a: { blockNumber: number; logIndex: number },
  b: { blockNumber: number; logIndex: number },
): boolean {
  return a.blockNumber > b.blockNumber || (a.blockNumber === b.blockNumber && a.logIndex > b.logIndex);
}

/** Keeps the last (or first) event per key in chain order. */
function pick<T extends { blockNumber: number; logIndex: number }>(
  rows: T[],
  key: (r: T) => string,
  which: 'last' | 'first',
): T[] {
  const m = new Map<string, T>();
  for (const r of rows) {
    const k = key(r);
    const cur = m.get(k);
    if (!cur || (which === 'last' ? after(r, cur) : after(cur, r))) m.set(k, r);
  }
  return [...m.values()];
}

/**
 * Wraps an INSERT so the chain's live counter (GET /health) moves by the rows it really inserted,
 * in the same statement and transaction; selects that number as `n`.
 */
function countedInsert(insert: string, counter: 'agents_count' | 'ratings_count'): string {
  return `WITH ins AS (${insert} RETURNING network),
    bump AS (UPDATE chains c SET ${counter} = c.${counter} + x.n
               FROM (SELECT network, count(*) AS n FROM ins GROUP BY network) x WHERE c.network = x.network)
    SELECT count(*)::int AS n FROM ins`;
}

async function count(tx: Queryable, sql: string, params: unknown[]): Promise<number> {
  const [row] = await tx.query<{ n: number }>(sql, params);
  return Number(row?.n ?? 0);
}

/** Declared type from an inline `data:` JSON registration file (agentType, category). */
export function declaredTypeFromUri(uri: string): string | null {
  if (!uri.startsWith('data:') || uri.length > MAX_DATA_URI_CHARS) return null;
  const comma = uri.indexOf(',');
  if (comma < 0) return null;
  const header = uri.slice(5, comma).toLowerCase();
  if (!header.startsWith('application/json')) return null;
  let body = uri.slice(comma + 1);
  try {
    body = header.split(';').includes('base64')
      ? Buffer.from(body, 'base64').toString('utf8')
      : decodeURIComponent(body);
    const doc: unknown = JSON.parse(body);
    if (typeof doc !== 'object' || doc === null) return null;
    for (const k of ['agentType', 'category']) {
      const v = (doc as Record<string, unknown>)[k];
      if (typeof v === 'string' && v.trim() !== '')
        return sanitizeText(v.trim()).slice(0, MAX_DECLARED_TYPE_CHARS);
    }
  } catch {
    return null;
  }
  return null;
}

/** Writes the events (no transaction of its own: call it inside one). */
export async function writeEvents(tx: Queryable, events: readonly IndexEvent[]): Promise<IngestCounts> {
  const registered: RegisteredEvent[] = [];
  const transfers: TransferEvent[] = [];
  const uris: UriUpdatedEvent[] = [];
  const metadata: MetadataSetEvent[] = [];
  const feedback: FeedbackEvent[] = [];
  const revocations: RevocationEvent[] = [];
  for (const e of events) {
    switch (e.kind) {
      case 'registered':
        registered.push(e);
        break;
      case 'transfer':
        transfers.push(e);
        break;
      case 'uri':
        uris.push(e);
        break;
      case 'metadata':
        metadata.push(e);
        break;
      case 'feedback':
        feedback.push(e);
        break;
      case 'revocation':
        revocations.push(e);
        break;
    }
  }
  const counts: IngestCounts = { ratings: 0, revocations: 0, transfers: 0, metadata: 0, revokedApplied: 0 };
  const agentKey = (e: { network: string; agentId: string }) => `${e.network}\u0000${e.agentId}`;

  // ---- identity: make sure every agent an identity event names has a row
  const identityEvents = [...registered, ...transfers, ...uris, ...metadata];
  if (identityEvents.length > 0) {
    const agents = pick(identityEvents, agentKey, 'first');
    for (const c of chunks(agents)) {
      await tx.query(
        countedInsert(
          `INSERT INTO agents (network, agent_id)
           SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (network, agent_id) DO NOTHING`,
          'agents_count',
        ),
        [c.map((e) => e.network), c.map((e) => e.agentId)],
      );
    }
  }

  // ---- ownership transfers (history) and the current owner (forward only)
  for (const c of chunks(transfers)) {
    counts.transfers += await count(
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
  for (const c of chunks(pick(transfers, agentKey, 'last'))) {
    await tx.query(
      `UPDATE agents a SET owner = v.owner, owner_block = v.blk, owner_log_index = v.li
         FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::int[]) AS v(network, agent_id, owner, blk, li)
        WHERE a.network = v.network AND a.agent_id = v.agent_id
          AND (a.owner_block IS NULL OR (v.blk, v.li) > (a.owner_block, coalesce(a.owner_log_index, -1)))`,
      [
        c.map((e) => e.network),
        c.map((e) => e.agentId),
        c.map((e) => e.to),
        c.map((e) => e.blockNumber),
        c.map((e) => e.logIndex),
      ],
    );
  }

  // ---- registration (minter; the first Registered of an agent wins)
  for (const c of chunks(pick(registered, agentKey, 'first'))) {
    await tx.query(
      `UPDATE agents a SET minter = v.minter, registered_block = v.blk, registered_tx = v.tx, registered_at = v.at
         FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $6::timestamptz[])
              AS v(network, agent_id, minter, blk, tx, at)
        WHERE a.network = v.network AND a.agent_id = v.agent_id
          AND (a.registered_block IS NULL OR v.blk < a.registered_block)`,
      [
        c.map((e) => e.network),
        c.map((e) => e.agentId),
        c.map((e) => e.minter),
        c.map((e) => e.blockNumber),
        c.map((e) => e.txHash),
        c.map((e) => iso(e.blockTime)),
      ],
    );
  }

  // ---- agent URI: the latest of Registered.agentURI and URIUpdated.newURI, forward only
  const uriEvents = pick(
    [...registered.map((e) => ({ ...e, uri: e.agentUri })), ...uris.map((e) => ({ ...e }))],
    agentKey,
    'last',
  );
  for (const c of chunks(uriEvents)) {
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
        c.map((e) => declaredTypeFromUri(e.uri)),
      ],
    );
  }

  // ---- metadata: latest value per key, forward only
  const metaLatest = pick(metadata, (e) => `${agentKey(e)}\u0000${e.key}`, 'last');
  for (const c of chunks(metaLatest)) {
    counts.metadata += await count(
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

  // ---- declared type of every agent whose metadata or URI this batch touched
  const typed = pick([...metaLatest, ...uriEvents], agentKey, 'first');
  for (const c of chunks(typed)) {
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

  // ---- ratings
  for (const c of chunks(feedback)) {
    counts.ratings += await count(
      tx,
      countedInsert(
        `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals,
                              value, tag1, tag2, endpoint, feedback_uri, feedback_hash, block_number, block_time)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::numeric[], $7::numeric[],
                              $8::smallint[], $9::numeric[], $10::text[], $11::text[], $12::text[], $13::text[],
                              $14::text[], $15::bigint[], $16::timestamptz[])
         ON CONFLICT (network, tx_hash, log_index) DO NOTHING`,
        'ratings_count',
      ),
      [
        c.map((e) => e.network),
        c.map((e) => e.txHash),
        c.map((e) => e.logIndex),
        c.map((e) => e.agentId),
        c.map((e) => e.rater),
        c.map((e) => e.feedbackIndex),
        c.map((e) => e.valueRaw),
        c.map((e) => e.valueDecimals),
        c.map((e) => e.value),
        c.map((e) => e.tag1),
        c.map((e) => e.tag2),
        c.map((e) => e.endpoint),
        c.map((e) => e.feedbackUri),
        c.map((e) => e.feedbackHash),
        c.map((e) => e.blockNumber),
        c.map((e) => iso(e.blockTime)),
      ],
    );
  }

  // ---- revocations: stored as logged ...
  for (const c of chunks(revocations)) {
    counts.revocations += await count(
      tx,
      `WITH ins AS (
         INSERT INTO revocations (network, tx_hash, log_index, agent_id, rater, feedback_index, block_number, block_time)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::numeric[], $7::bigint[], $8::timestamptz[])
         ON CONFLICT (network, tx_hash, log_index) DO NOTHING RETURNING 1)
       SELECT count(*)::int AS n FROM ins`,
      [
        c.map((e) => e.network),
        c.map((e) => e.txHash),
        c.map((e) => e.logIndex),
        c.map((e) => e.agentId),
        c.map((e) => e.rater),
        c.map((e) => e.feedbackIndex),
        c.map((e) => e.blockNumber),
        c.map((e) => iso(e.blockTime)),
      ],
    );
  }

  // ... then applied to the matching ratings, whichever of the two arrived first (the earliest
  // revocation of a rating wins; already revoked ratings are left alone: idempotent).
  const targets = pick(
    [...feedback, ...revocations],
    (e) => `${agentKey(e)}\u0000${e.rater}\u0000${e.feedbackIndex}`,
    'first',
  );
  for (const c of chunks(targets)) {
    // Look the revocations up first (an index probe per key, almost always nothing found), then
    // update only the ratings they name: the UPDATE never has to plan against a big key list.
    const found = await tx.query<{
      network: string;
      agent_id: string;
      rater: string;
      feedback_index: string;
      tx_hash: string;
      block_number: number;
      block_time: Date | null;
    }>(
      `SELECT DISTINCT ON (r.network, r.agent_id, r.rater, r.feedback_index)
              r.network, r.agent_id, r.rater, r.feedback_index::text AS feedback_index, r.tx_hash, r.block_number, r.block_time
         FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[]) AS k(network, agent_id, rater, feedback_index)
         JOIN revocations r ON r.network = k.network AND r.agent_id = k.agent_id AND r.rater = k.rater
                           AND r.feedback_index = k.feedback_index
        ORDER BY r.network, r.agent_id, r.rater, r.feedback_index, r.block_number, r.log_index`,
      [
        c.map((e) => e.network),
        c.map((e) => e.agentId),
        c.map((e) => e.rater),
        c.map((e) => e.feedbackIndex),
      ],
    );
    if (found.length === 0) continue;
    counts.revokedApplied += await count(
      tx,
      `WITH up AS (
         UPDATE ratings t SET revoked = TRUE, revoked_tx = v.tx_hash, revoked_block = v.block_number, revoked_at = v.block_time
           FROM unnest($1::text[], $2::text[], $3::text[], $4::numeric[], $5::text[], $6::bigint[], $7::timestamptz[])
                AS v(network, agent_id, rater, feedback_index, tx_hash, block_number, block_time)
          WHERE t.network = v.network AND t.agent_id = v.agent_id AND t.rater = v.rater
            AND t.feedback_index = v.feedback_index AND NOT t.revoked
         RETURNING 1)
       SELECT count(*)::int AS n FROM up`,
      [
        found.map((f) => f.network),
        found.map((f) => f.agent_id),
        found.map((f) => f.rater),
        found.map((f) => f.feedback_index),
        found.map((f) => f.tx_hash),
        found.map((f) => f.block_number),
        found.map((f) => (f.block_time ? new Date(f.block_time).toISOString() : null)),
      ],
    );
  }
  return counts;
}

/** Moves a chain's checkpoint (inside the batch's transaction). */
export async function writeCheckpoint(tx: Queryable, cp: CheckpointUpdate): Promise<void> {
  const rows = await tx.query(
    `UPDATE chains SET
        last_scanned_block = GREATEST(last_scanned_block, $2::bigint),
        head_at_last_sync = $3::bigint,
        backfill_complete = backfill_complete OR $4::boolean,
        last_success_at = coalesce($5::timestamptz, last_success_at),
        last_error = CASE WHEN $5::timestamptz IS NULL THEN last_error ELSE NULL END
      WHERE network = $1
      RETURNING network`,
    [cp.network, cp.lastScannedBlock, cp.headAtLastSync, cp.caughtUp, iso(cp.successAt ?? null)],
  );
  if (rows.length === 0) throw new Error(`chain "${cp.network}" is not registered in the chains table`);
}

/**
 * Writes one batch and its checkpoint in ONE transaction: either both land or neither does.
 */
export async function ingestBatch(
  db: Database,
  events: readonly IndexEvent[],
  checkpoint: CheckpointUpdate,
  hooks: IngestHooks = {},
): Promise<IngestCounts> {
  return db.transaction(async (tx) => {
    const counts = await writeEvents(tx, events);
    await writeCheckpoint(tx, checkpoint);
    if (hooks.beforeCommit) await hooks.beforeCommit(tx);
    return counts;
  });
}
