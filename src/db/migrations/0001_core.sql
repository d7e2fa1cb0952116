-- Core ingest schema. Plain SQL that runs unchanged on PGlite and PostgreSQL.
-- Addresses are stored as the chain gives them, EVM ones lower-cased by the indexer.

CREATE TABLE IF NOT EXISTS chains (
  network             TEXT PRIMARY KEY,
  kind                TEXT NOT NULL,
  chain_id            BIGINT,
  enabled             BOOLEAN NOT NULL DEFAULT TRUE,
  last_scanned_block  BIGINT,
  head_at_last_sync   BIGINT,
  backfill_complete   BOOLEAN NOT NULL DEFAULT FALSE,
  last_success_at     TIMESTAMPTZ,
  last_error          TEXT,
  last_error_at       TIMESTAMPTZ
);

CREATE TABLE IF NOT EXISTS agents (
  network           TEXT NOT NULL,
  agent_id          TEXT NOT NULL,
  -- Registered.owner: the minter, often a relaying facilitator. NULL until Registered is seen.
  minter            TEXT,
  -- Current ERC-721 owner, from Transfer. NULL while only feedback has been seen.
  owner             TEXT,
  agent_uri         TEXT,
  declared_type     TEXT,
  registered_block  BIGINT,
  registered_tx     TEXT,
  registered_at     TIMESTAMPTZ,
  -- Position of the log that set the current owner, so replays never move ownership backwards.
  owner_block       BIGINT,
  owner_log_index   INTEGER,
  PRIMARY KEY (network, agent_id)
);
CREATE INDEX IF NOT EXISTS agents_owner_idx ON agents (owner);

CREATE TABLE IF NOT EXISTS ownership_transfers (
  network       TEXT NOT NULL,
  tx_hash       TEXT NOT NULL,
  log_index     INTEGER NOT NULL,
  agent_id      TEXT NOT NULL,
  from_address  TEXT NOT NULL,
  to_address    TEXT NOT NULL,
  block_number  BIGINT NOT NULL,
  block_time    TIMESTAMPTZ,
  PRIMARY KEY (network, tx_hash, log_index)
);
CREATE INDEX IF NOT EXISTS ownership_transfers_agent_idx ON ownership_transfers (network, agent_id);

CREATE TABLE IF NOT EXISTS agent_metadata (
  network       TEXT NOT NULL,
  agent_id      TEXT NOT NULL,
  meta_key      TEXT NOT NULL,
  -- hex of the raw bytes (0x...), and its UTF-8 reading when it decodes cleanly
  value_hex     TEXT NOT NULL,
  value_text    TEXT,
  block_number  BIGINT NOT NULL,
  log_index     INTEGER NOT NULL,
  tx_hash       TEXT NOT NULL,
  PRIMARY KEY (network, agent_id, meta_key)
);

CREATE TABLE IF NOT EXISTS ratings (
  network         TEXT NOT NULL,
  tx_hash         TEXT NOT NULL,
  log_index       INTEGER NOT NULL,
  agent_id        TEXT NOT NULL,
  rater           TEXT NOT NULL,
  -- uint64 on EVM, u64 on Solana: NUMERIC so the full range fits
  feedback_index  NUMERIC(20, 0) NOT NULL,
  -- int128 raw value and its decimals, plus the exact decimal value = raw / 10^decimals
  value_raw       NUMERIC(40, 0) NOT NULL,
  value_decimals  SMALLINT NOT NULL,
  value           NUMERIC NOT NULL,
  tag1            TEXT NOT NULL DEFAULT '',
  tag2            TEXT NOT NULL DEFAULT '',
  endpoint        TEXT NOT NULL DEFAULT '',
  feedback_uri    TEXT NOT NULL DEFAULT '',
  feedback_hash   TEXT,
  block_number    BIGINT NOT NULL,
  -- on-chain time of the block; NULL = undated
  block_time      TIMESTAMPTZ,
  revoked         BOOLEAN NOT NULL DEFAULT FALSE,
  revoked_tx      TEXT,
  revoked_block   BIGINT,
  revoked_at      TIMESTAMPTZ,
  PRIMARY KEY (network, tx_hash, log_index)
);
CREATE INDEX IF NOT EXISTS ratings_agent_idx ON ratings (network, agent_id);
CREATE INDEX IF NOT EXISTS ratings_rater_idx ON ratings (rater);
CREATE INDEX IF NOT EXISTS ratings_feedback_idx ON ratings (network, agent_id, rater, feedback_index);
CREATE INDEX IF NOT EXISTS ratings_time_idx ON ratings (block_time DESC, network, block_number DESC, log_index DESC);

-- Revocations as logged; applied to ratings by (network, agent_id, rater, feedback_index).
CREATE TABLE IF NOT EXISTS revocations (
  network         TEXT NOT NULL,
  tx_hash         TEXT NOT NULL,
  log_index       INTEGER NOT NULL,
  agent_id        TEXT NOT NULL,
  rater           TEXT NOT NULL,
  feedback_index  NUMERIC(20, 0) NOT NULL,
  block_number    BIGINT NOT NULL,
  block_time      TIMESTAMPTZ,
  PRIMARY KEY (network, tx_hash, log_index)
);
CREATE INDEX IF NOT EXISTS revocations_target_idx ON revocations (network, agent_id, rater, feedback_index);

-- x402: one row per payment authorization (payer + nonce on a network), claimed atomically
-- BEFORE settlement so one authorization pays at most one call.
CREATE TABLE IF NOT EXISTS payment_claims (
  network        TEXT NOT NULL,
  payer          TEXT NOT NULL,
  nonce          TEXT NOT NULL,
  resource       TEXT NOT NULL,
  amount         NUMERIC(78, 0) NOT NULL,
  status         TEXT NOT NULL,
  settlement_tx  TEXT,
  claimed_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (network, payer, nonce)
);

-- Receipts: sha256(payment header + resource) → reusable for the byte-identical resource until expiry.
CREATE TABLE IF NOT EXISTS payment_receipts (
  receipt_key    TEXT PRIMARY KEY,
  resource       TEXT NOT NULL,
  network        TEXT NOT NULL,
  payer          TEXT NOT NULL,
  nonce          TEXT NOT NULL,
  amount         NUMERIC(78, 0) NOT NULL,
  settlement_tx  TEXT NOT NULL,
  created_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
  expires_at     TIMESTAMPTZ NOT NULL
);

-- The durable receipt of ?snapshot=true: the only row the service writes on request.
CREATE TABLE IF NOT EXISTS snapshot_receipts (
  snapshot_id     TEXT PRIMARY KEY,
  wallet          TEXT NOT NULL,
  inputs_digest   TEXT NOT NULL,
  policy_version  TEXT NOT NULL,
  payment_receipt TEXT,
  response        JSONB NOT NULL,
  created_at      TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS snapshot_receipts_wallet_idx ON snapshot_receipts (wallet, created_at DESC);
