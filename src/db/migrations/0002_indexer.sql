-- Indexer state beyond the core schema (0001 stays untouched).

-- The first block worth scanning when the configuration does not give one: found once by a
-- binary search on eth_getCode, then kept here.
ALTER TABLE chains ADD COLUMN IF NOT EXISTS start_block BIGINT;

-- Position of the log that set agents.agent_uri (Registered or URIUpdated), so replays and
-- out-of-order batches never move the URI backwards, and the declared type read from an inline
-- data: registration file at that URI (agents.declared_type prefers the MetadataSet keys).
ALTER TABLE agents ADD COLUMN IF NOT EXISTS uri_block BIGINT;
ALTER TABLE agents ADD COLUMN IF NOT EXISTS uri_log_index INTEGER;
ALTER TABLE agents ADD COLUMN IF NOT EXISTS uri_declared_type TEXT;

-- Small key/value facts of the indexer itself (e.g. 'demo': this database holds the offline demo,
-- so `repindex demo` may reset it; a database without that mark is never touched by the demo).
CREATE TABLE IF NOT EXISTS indexer_meta (
  meta_key  TEXT PRIMARY KEY,
  value     TEXT NOT NULL
);

-- ratings_feedback_idx (network, agent_id, rater, feedback_index) serves every lookup by
-- (network, agent_id) as well; the narrower ratings_agent_idx only cost ingest time and, without
-- statistics (PGlite has no autovacuum), led the planner to scan a big agent's ratings when a
-- revocation names one (network, agent_id, rater, feedback_index).
DROP INDEX IF EXISTS ratings_agent_idx;
