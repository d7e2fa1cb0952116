-- The full completeness census (issue 31): every agent checked, its differences kept row by row.

-- The last census's reach and how it read the chain: scope 'full' (every minted agent) or
-- 'sample' (CENSUS_SAMPLE agents, between full censuses or where a full one is not affordable);
-- method 'multicall3' (batched through Multicall3's aggregate3) or 'eth_call' (plain calls).
ALTER TABLE chains ADD COLUMN IF NOT EXISTS census_scope TEXT;
ALTER TABLE chains ADD COLUMN IF NOT EXISTS census_method TEXT;
-- The block and time of the last FULL census, and the passes since (CENSUS_FULL_EVERY).
ALTER TABLE chains ADD COLUMN IF NOT EXISTS census_full_block BIGINT;
ALTER TABLE chains ADD COLUMN IF NOT EXISTS census_full_at TIMESTAMPTZ;
ALTER TABLE chains ADD COLUMN IF NOT EXISTS census_passes_since_full INTEGER NOT NULL DEFAULT 0;

-- Every difference of the chain's last census (replaced by each census): per agent (registered,
-- owner, uri), per (agent, client) pair (feedback, revoked), or the chain's agent count (agents).
CREATE TABLE IF NOT EXISTS census_differences (
  network      TEXT    NOT NULL,
  seq          INTEGER NOT NULL,
  census_block BIGINT  NOT NULL,
  what         TEXT    NOT NULL,
  agent_id     TEXT,
  client       TEXT,
  chain_value  TEXT    NOT NULL,
  index_value  TEXT    NOT NULL,
  PRIMARY KEY (network, seq)
);
