-- Per-agent aggregate, so the agent-id reading of the free /search never scans an agent's ratings
-- (one agent carries hundreds of thousands in production).
CREATE TABLE IF NOT EXISTS agg_agent (
  network          TEXT NOT NULL,
  agent_id         TEXT NOT NULL,
  ratings          INTEGER NOT NULL,
  total_reviews    INTEGER NOT NULL,
  eligible_sum     NUMERIC,
  distinct_raters  INTEGER NOT NULL,
  PRIMARY KEY (network, agent_id)
);
