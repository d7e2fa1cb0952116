-- Incremental refresh of the free aggregates (src/read/aggregates.ts): the per-agent pieces are
-- recomputed only for the agents a pass touched, the small top-level tables are summed from them,
-- and the class-independent distinct counts (raters per chain, per facet, per issuer host;
-- agents per issuer) are kept as membership rows that new ratings only ever add to.

-- Per agent, by class (eligible_sum/total_reviews were already here).
ALTER TABLE agg_agent ADD COLUMN IF NOT EXISTS self_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agg_agent ADD COLUMN IF NOT EXISTS revoked_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agg_agent ADD COLUMN IF NOT EXISTS out_of_domain_count INTEGER NOT NULL DEFAULT 0;
-- not revoked and in domain (self-ratings included): the chain's mean value
ALTER TABLE agg_agent ADD COLUMN IF NOT EXISTS live_count INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agg_agent ADD COLUMN IF NOT EXISTS live_sum NUMERIC;
ALTER TABLE agg_agent ADD COLUMN IF NOT EXISTS last_rating_at TIMESTAMPTZ;

-- Per agent and tag1 (free text: keyed by its md5).
CREATE TABLE IF NOT EXISTS agg_agent_tag (
  network       TEXT NOT NULL,
  agent_id      TEXT NOT NULL,
  tag_key       TEXT NOT NULL,
  tag1          TEXT NOT NULL,
  ratings       INTEGER NOT NULL,
  eligible      INTEGER NOT NULL,
  eligible_sum  NUMERIC,
  PRIMARY KEY (network, agent_id, tag_key)
);

-- Per agent and feedbackURI host ('' = none), keyed by the host's md5.
CREATE TABLE IF NOT EXISTS agg_agent_host (
  network   TEXT NOT NULL,
  agent_id  TEXT NOT NULL,
  host_key  TEXT NOT NULL,
  host      TEXT NOT NULL,
  ratings   INTEGER NOT NULL,
  PRIMARY KEY (network, agent_id, host_key)
);

-- Eligible ratings per (agent, rater): the distinct eligible raters of an agent and of a wallet
-- are counted here (O(raters)), never over the ratings. Rows at 0 are removed.
CREATE TABLE IF NOT EXISTS agg_agent_rater (
  network   TEXT NOT NULL,
  agent_id  TEXT NOT NULL,
  rater     TEXT NOT NULL,
  eligible  INTEGER NOT NULL,
  PRIMARY KEY (network, agent_id, rater)
);

-- Distinct members of a group: dim 'chain_rater' (key network), 'facet_rater' (key network or '*',
-- ':' and md5 of tag1), 'issuer_rater' and 'issuer_agent' (key md5 of the host), 'day_rater'
-- (key network ':' UTC day).
CREATE TABLE IF NOT EXISTS agg_member (
  dim     TEXT NOT NULL,
  key     TEXT NOT NULL,
  member  TEXT NOT NULL,
  PRIMARY KEY (dim, key, member)
);

-- What a pass wrote, found by block: ratings above the last refresh's checkpoint, and ratings
-- revoked by a revocation above it.
CREATE INDEX IF NOT EXISTS ratings_network_block_idx ON ratings (network, block_number);
CREATE INDEX IF NOT EXISTS ratings_network_revoked_block_idx ON ratings (network, revoked_block) WHERE revoked;
CREATE INDEX IF NOT EXISTS ownership_transfers_block_idx ON ownership_transfers (network, block_number);

-- Tables built before this migration lack the new pieces: the next refresh is a full one.
INSERT INTO agg_meta (meta_key, value) VALUES ('rebuild', '{"reason":"migration 0060"}'::jsonb)
  ON CONFLICT (meta_key) DO UPDATE SET value = EXCLUDED.value;
