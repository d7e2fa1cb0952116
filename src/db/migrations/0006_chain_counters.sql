-- Exact live totals for GET /health without counting the ratings table on every request: the
-- ingest moves these counters by the rows it really inserted, in the same transaction.
ALTER TABLE chains ADD COLUMN IF NOT EXISTS agents_count BIGINT NOT NULL DEFAULT 0;
ALTER TABLE chains ADD COLUMN IF NOT EXISTS ratings_count BIGINT NOT NULL DEFAULT 0;
UPDATE chains c SET
  agents_count = (SELECT count(*) FROM agents a WHERE a.network = c.network),
  ratings_count = (SELECT count(*) FROM ratings r WHERE r.network = c.network);
