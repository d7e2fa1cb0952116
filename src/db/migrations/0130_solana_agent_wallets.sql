-- Solana: the agent wallet history, so a response from the agent's wallet (the program's
-- `agent_wallet`, which append_response accepts as a responder besides the owner) is classed
-- `operator`. One row per WalletUpdated or WalletResetOnOwnerSync event at its position (slot,
-- packed log_index as for every Solana row): `wallet` is the wallet in force from there on, NULL
-- when the event cleared it (a reset on owner sync, or a WalletUpdated to the all-zero key). The
-- wallet in force at a response is the row with the latest position at or before it.
-- Slots scanned before this migration wrote no rows here (the events were skipped then): their
-- responses keep the class they had until those slots are read again.
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
