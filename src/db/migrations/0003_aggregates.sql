-- Free aggregates: recomputed after each index pass (src/read/aggregates.ts) in one transaction,
-- so a free request reads a small table instead of scanning the ratings.

CREATE TABLE IF NOT EXISTS agg_wallet_chain (
  wallet               TEXT NOT NULL,
  network              TEXT NOT NULL,
  agent_ids            TEXT[] NOT NULL,
  agent_count          INTEGER NOT NULL,
  declared_types       TEXT[] NOT NULL,
  -- every rating received on this chain, whatever its class
  ratings              INTEGER NOT NULL,
  -- eligible ratings: not revoked, value in 0..100, rater is not the current owner
  total_reviews        INTEGER NOT NULL,
  eligible_sum         NUMERIC,
  final_score          DOUBLE PRECISION,
  distinct_raters      INTEGER NOT NULL,
  self_count           INTEGER NOT NULL,
  revoked_count        INTEGER NOT NULL,
  out_of_domain_count  INTEGER NOT NULL,
  last_rating_at       TIMESTAMPTZ,
  -- pulled toward this chain's prior (the chain's own ranking)
  shrunk_score         DOUBLE PRECISION,
  PRIMARY KEY (wallet, network)
);
CREATE INDEX IF NOT EXISTS agg_wallet_chain_rank_idx
  ON agg_wallet_chain (network, shrunk_score DESC NULLS LAST, distinct_raters DESC, wallet);

CREATE TABLE IF NOT EXISTS agg_wallet (
  wallet                  TEXT PRIMARY KEY,
  final_score             DOUBLE PRECISION,
  shrunk_score            DOUBLE PRECISION,
  distinct_raters         INTEGER NOT NULL,
  total_reviews           INTEGER NOT NULL,
  ratings                 INTEGER NOT NULL,
  chain_count             INTEGER NOT NULL,
  networks                TEXT[] NOT NULL,
  identity_count          INTEGER NOT NULL,
  chains_with_identity    INTEGER NOT NULL,
  chains_with_reputation  INTEGER NOT NULL,
  declared_types          TEXT[] NOT NULL,
  last_rating_at          TIMESTAMPTZ
);
CREATE INDEX IF NOT EXISTS agg_wallet_rank_idx
  ON agg_wallet (shrunk_score DESC NULLS LAST, distinct_raters DESC, wallet);

CREATE TABLE IF NOT EXISTS agg_chain (
  network          TEXT PRIMARY KEY,
  agents           INTEGER NOT NULL,
  ratings          INTEGER NOT NULL,
  distinct_raters  INTEGER NOT NULL,
  rated_agents     INTEGER NOT NULL,
  scored_wallets   INTEGER NOT NULL,
  mean_value       DOUBLE PRECISION,
  prior            DOUBLE PRECISION
);

CREATE TABLE IF NOT EXISTS agg_chain_day (
  network          TEXT NOT NULL,
  day              DATE NOT NULL,
  ratings          INTEGER NOT NULL,
  distinct_raters  INTEGER NOT NULL,
  PRIMARY KEY (network, day)
);

-- network '*' holds the all-chains row of each facet
CREATE TABLE IF NOT EXISTS agg_facet (
  network          TEXT NOT NULL,
  tag1             TEXT NOT NULL,
  ratings          INTEGER NOT NULL,
  eligible         INTEGER NOT NULL,
  mean             DOUBLE PRECISION,
  distinct_agents  INTEGER NOT NULL,
  distinct_raters  INTEGER NOT NULL,
  PRIMARY KEY (network, tag1)
);

CREATE TABLE IF NOT EXISTS agg_type (
  -- '' stands for "declares no type" (declared = false)
  declared_type      TEXT NOT NULL,
  declared           BOOLEAN NOT NULL,
  agent_count        INTEGER NOT NULL,
  rated_agent_count  INTEGER NOT NULL,
  total_reviews      INTEGER NOT NULL,
  avg_score          DOUBLE PRECISION,
  PRIMARY KEY (declared_type, declared)
);

CREATE TABLE IF NOT EXISTS agg_issuer (
  -- '' = the feedbackURI has no http(s) host
  host             TEXT PRIMARY KEY,
  ratings          INTEGER NOT NULL,
  distinct_agents  INTEGER NOT NULL,
  distinct_raters  INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS agg_meta (
  meta_key  TEXT PRIMARY KEY,
  value     JSONB NOT NULL
);

CREATE INDEX IF NOT EXISTS ratings_network_time_idx ON ratings (network, block_time DESC, block_number DESC, log_index DESC);
CREATE INDEX IF NOT EXISTS agents_agent_id_idx ON agents (agent_id);
