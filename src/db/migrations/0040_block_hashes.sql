-- Deep reorgs: the hash of each checkpoint block (the last block of every committed batch), kept
-- for the most recent checkpoints of each chain. At the start of a pass the newest is compared
-- with the chain; on a mismatch the indexer walks back to the newest one the chain still has (the
-- common ancestor), deletes everything written above it in one transaction and rescans.
CREATE TABLE IF NOT EXISTS chain_block_hashes (
  network       TEXT NOT NULL,
  block_number  BIGINT NOT NULL,
  block_hash    TEXT NOT NULL,
  PRIMARY KEY (network, block_number)
);
