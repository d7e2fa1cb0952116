/**
 * Write statements for ResponseAppended: one row per log, idempotent (keyed by network + tx hash +
 * log index). The responder is classed when the row is written, from what the index knows of the
 * agent then: its current owner (`owner`), its `agentWallet` metadata (`operator`), anyone else
 * (`third_party`). Call it after the batch's ownership and metadata were written. EVM addresses
 * (`0x…`) compare case-insensitively; Solana base58 keys exactly (two keys may differ only in case).
 * On Solana that first class is provisional (a base58 key never starts with `0x`, base58 has no
 * `0`, so it never equals a metadata value's hex): the Solana scanner then re-classes by history
 * (reclassRespondersByHistory): `owner` when the responder is the owner at the response's position,
 * `operator` when it is the agent wallet in force there (the program's WalletUpdated and
 * WalletResetOnOwnerSync, kept in solana_agent_wallets by insertAgentWallets), else `third_party`.
 */
import type { Queryable } from '../db/database.js';
import type { AgentWalletEvent, ResponseEvent, TransferEvent } from '../index-events.js';
import { chunks, count, iso } from './rows.js';

/** Stores responses as logged; returns the rows really inserted. */
export async function insertResponses(tx: Queryable, responses: readonly ResponseEvent[]): Promise<number> {
  let n = 0;
  for (const c of chunks(responses)) {
    n += await count(
      tx,
      `WITH v AS (
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::numeric[], $7::text[],
                              $8::text[], $9::text[], $10::bigint[], $11::timestamptz[])
           AS v(network, tx_hash, log_index, agent_id, rater, feedback_index, responder, response_uri, response_hash,
                block_number, block_time)),
       ins AS (
         INSERT INTO rating_responses (network, tx_hash, log_index, agent_id, rater, feedback_index, responder,
                                       response_uri, response_hash, responder_class, block_number, block_time)
         SELECT v.network, v.tx_hash, v.log_index, v.agent_id, v.rater, v.feedback_index, v.responder, v.response_uri,
                v.response_hash,
                CASE WHEN a.owner = v.responder
                       OR (v.responder LIKE '0x%' AND lower(a.owner) = lower(v.responder)) THEN 'owner'
                     WHEN m.value_hex IS NOT NULL AND lower(m.value_hex) = lower(v.responder) THEN 'operator'
                     ELSE 'third_party' END,
                v.block_number, v.block_time
           FROM v
           LEFT JOIN agents a ON a.network = v.network AND a.agent_id = v.agent_id
           LEFT JOIN agent_metadata m ON m.network = v.network AND m.agent_id = v.agent_id AND m.meta_key = 'agentWallet'
         ON CONFLICT (network, tx_hash, log_index) DO NOTHING RETURNING 1)
       SELECT count(*)::int AS n FROM ins`,
      [
        c.map((e) => e.network),
        c.map((e) => e.txHash),
        c.map((e) => e.logIndex),
        c.map((e) => e.agentId),
        c.map((e) => e.rater),
        c.map((e) => e.feedbackIndex),
        c.map((e) => e.responder),
        c.map((e) => e.responseUri),
        c.map((e) => e.responseHash),
        c.map((e) => e.blockNumber),
        c.map((e) => iso(e.blockTime)),
      ],
    );
  }
  return n;
}

/**
 * Stores Solana agent wallet changes as logged (null wallet: cleared), idempotent (keyed like every
 * event); returns the rows really inserted.
 */
export async function insertAgentWallets(
  tx: Queryable,
  wallets: readonly AgentWalletEvent[],
): Promise<number> {
  let n = 0;
  for (const c of chunks(wallets))
    n += await count(
      tx,
      `WITH ins AS (
         INSERT INTO solana_agent_wallets (network, tx_hash, log_index, agent_id, wallet, block_number, block_time)
         SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::bigint[], $7::timestamptz[])
         ON CONFLICT (network, tx_hash, log_index) DO NOTHING RETURNING 1)
       SELECT count(*)::int AS n FROM ins`,
      [
        c.map((e) => e.network),
        c.map((e) => e.txHash),
        c.map((e) => e.logIndex),
        c.map((e) => e.agentId),
        c.map((e) => e.wallet),
        c.map((e) => e.blockNumber),
        c.map((e) => iso(e.blockTime)),
      ],
    );
  return n;
}

/**
 * The class of response `x` by history: the owner at its position (the latest indexed transfer at
 * or before it), else the agent wallet in force there (the latest wallet change at or before it; a
 * cleared wallet is NULL and equals nothing), else a third party. Keys compare exactly.
 */
const CLASS_BY_HISTORY = `CASE WHEN (SELECT t.to_address FROM ownership_transfers t
                                WHERE t.network = x.network AND t.agent_id = x.agent_id
                                  AND (t.block_number, t.log_index) <= (x.block_number, x.log_index)
                                ORDER BY t.block_number DESC, t.log_index DESC LIMIT 1) = x.responder
                         THEN 'owner'
                         WHEN (SELECT w.wallet FROM solana_agent_wallets w
                                WHERE w.network = x.network AND w.agent_id = x.agent_id
                                  AND (w.block_number, w.log_index) <= (x.block_number, x.log_index)
                                ORDER BY w.block_number DESC, w.log_index DESC LIMIT 1) = x.responder
                         THEN 'operator' ELSE 'third_party' END`;

/** Sets the class by history of the responses `x` the FROM/WHERE text selects; returns the rows changed. */
function reclassStatement(selectResponses: string): string {
  return `WITH up AS (
     UPDATE rating_responses r SET responder_class = k.cls
       FROM (SELECT x.network, x.tx_hash, x.log_index, ${CLASS_BY_HISTORY} AS cls ${selectResponses}) k
      WHERE r.network = k.network AND r.tx_hash = k.tx_hash AND r.log_index = k.log_index
        AND r.responder_class <> k.cls
     RETURNING 1)
   SELECT count(*)::int AS n FROM up`;
}

/**
 * Re-classes responders by the ownership and agent wallet history (Solana): `owner` when the
 * responder is the recipient of the agent's latest indexed transfer at or before the response's
 * position, `operator` when it is the agent wallet in force there (solana_agent_wallets), else
 * `third_party`. Covers the `responses` just written and, for each of the `changes` just written
 * (transfers and wallet changes), its agent's responses from its block on (the only ones a change
 * can move). The Solana scanner calls it with every batch: its backfill walks newest to oldest, so
 * a response is often written before the transfers and wallet changes that precede it, and the
 * owner or wallet known then would depend on the page boundaries; once the history is indexed the
 * class no longer depends on the order it arrived in. Returns the rows changed.
 */
export async function reclassRespondersByHistory(
  tx: Queryable,
  network: string,
  responses: readonly ResponseEvent[],
  changes: readonly (TransferEvent | AgentWalletEvent)[],
): Promise<number> {
  let n = 0;
  for (const c of chunks(responses))
    n += await count(
      tx,
      reclassStatement(`FROM rating_responses x
         JOIN unnest($2::text[], $3::int[]) AS k(tx_hash, log_index)
           ON x.network = $1 AND x.tx_hash = k.tx_hash AND x.log_index = k.log_index`),
      [network, c.map((e) => e.txHash), c.map((e) => e.logIndex)],
    );
  // the lowest block of each agent's transfers and wallet changes: its responses from there on
  const since = new Map<string, number>();
  for (const t of changes)
    since.set(t.agentId, Math.min(since.get(t.agentId) ?? t.blockNumber, t.blockNumber));
  for (const c of chunks([...since]))
    n += await count(
      tx,
      reclassStatement(`FROM rating_responses x
         JOIN unnest($2::text[], $3::bigint[]) AS s(agent_id, block_number)
           ON x.network = $1 AND x.agent_id = s.agent_id AND x.block_number >= s.block_number`),
      [network, c.map(([a]) => a), c.map(([, b]) => b)],
    );
  return n;
}
