-- Solana: the agent wallet history, so a response from the agent's wallet (the program's
-- `agent_wallet`, which append_response accepts as a responder besides the owner) is classed
-- `operator`. One row per WalletUpdated or WalletResetOnOwnerSync event at its position (slot,
-- packed log_index as for every Solana row): `wallet` is the wallet in force from there on, NULL
-- when the event cleared it (a reset on owner sync, or a WalletUpdated to the all-zero key). The
-- wallet in force at a response is the row with the latest position at or before it.
-- Slots scanned before this migration skipped these events, and ResponseAppended too: the end of
-- this file resets the Solana checkpoint so the next pass reads the program's history again.
CREATE TABLE IF NOT EXISTS solana_agent_wallets (
  network       TEXT NOT NULL,
  tx_hash       TEXT NOT NULL,
  log_index     INTEGER NOT NULL,
  agent_id      TEXT NOT NULL,
  wallet        TEXT,
  block_number  BIGINT NOT NULL,
  block_time    TIMESTAMPTZ,
  PRIMARY KEY (network, tx_hash, log_index)
);
CREATE INDEX IF NOT EXISTS solana_agent_wallets_agent_idx
  ON solana_agent_wallets (network, agent_id, block_number, log_index);

-- Read the Solana history again: before this migration ResponseAppended, WalletUpdated and
-- WalletResetOnOwnerSync were skipped, so an index scanned then holds no Solana response and no
-- wallet history. Nothing is deleted: every write of the scan is idempotent (a row already held is
-- not inserted twice, and the chain's counters move only by the rows really inserted), so the
-- re-read adds exactly what was skipped and classes the responses by the history it reads. An
-- interrupted walk's cursor is dropped with it. A database that never scanned Solana: no row changes.
UPDATE chains SET last_scanned_block = NULL, backfill_complete = FALSE WHERE network = 'solana';
DELETE FROM solana_scan_cursor WHERE network = 'solana';
