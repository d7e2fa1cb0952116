-- Solana: exact order inside a slot. An event's position is now (slot, the transaction's index
-- among the program's transactions of that slot, the event's index in its transaction), packed
-- into log_index as tx_index * 4096 + event_index * 2 (+ 1 for the transfer a registration
-- implies). Rows written with the old positions (the event index alone) compare wrongly inside a
-- slot, so they are deleted and the Solana checkpoint is reset: the next pass reads the program's
-- history again with the new positions (the free aggregates follow at that pass's refresh).
DELETE FROM ratings WHERE network = 'solana';
DELETE FROM revocations WHERE network = 'solana';
DELETE FROM ownership_transfers WHERE network = 'solana';
DELETE FROM agent_metadata WHERE network = 'solana';
DELETE FROM agents WHERE network = 'solana';
UPDATE chains SET last_scanned_block = NULL, backfill_complete = FALSE, agents_count = 0, ratings_count = 0
 WHERE network = 'solana';

-- The bounded backfill's cursor: a walk over the program's signatures, newest to oldest, over the
-- slots [from_slot, to_slot]. Every committed page moves `before_signature` (the oldest signature
-- written so far; the walk goes on below it) in the same transaction as the page's events; the
-- chain's checkpoint moves to to_slot only when the walk reaches from_slot. A crash resumes the walk
-- here instead of listing the history again.
CREATE TABLE IF NOT EXISTS solana_scan_cursor (
  network           TEXT PRIMARY KEY,
  from_slot         BIGINT NOT NULL,
  to_slot           BIGINT NOT NULL,
  before_signature  TEXT NOT NULL,
  low_slot          BIGINT NOT NULL,
  updated_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Transactions the node listed but would not serve (getTransaction → null): the checkpoint moves
-- on and later passes try them again (with their position, so healed events land in order).
CREATE TABLE IF NOT EXISTS scan_gaps (
  network          TEXT NOT NULL,
  tx_hash          TEXT NOT NULL,
  block_number     BIGINT NOT NULL,
  tx_index         INTEGER NOT NULL,
  attempts         INTEGER NOT NULL DEFAULT 1,
  first_seen_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  last_attempt_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (network, tx_hash)
);
CREATE INDEX IF NOT EXISTS scan_gaps_order_idx ON scan_gaps (network, block_number, tx_index);

-- Transactions whose events are known to be incomplete (the node cut the logs: "Log truncated"):
-- the events before the cut are kept, the rest cannot be read from that node.
CREATE TABLE IF NOT EXISTS incomplete_transactions (
  network        TEXT NOT NULL,
  tx_hash        TEXT NOT NULL,
  block_number   BIGINT NOT NULL,
  reason         TEXT NOT NULL,
  events_kept    INTEGER NOT NULL,
  recorded_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (network, tx_hash)
);
