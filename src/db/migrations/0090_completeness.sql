-- Completeness of each chain's index (issue 22).

-- The lowest block the index has scanned, contiguous up to last_scanned_block: a start block
-- moved below it later makes the next pass scan the missing range first.
ALTER TABLE chains ADD COLUMN IF NOT EXISTS scanned_from_block BIGINT;

-- The last completeness census of the chain (counted agents, sampled owners and feedback counts
-- against the registries' own view): 'ok' or 'mismatch' (NULL: never checked), what differed
-- (JSON), the block it was checked at and when.
ALTER TABLE chains ADD COLUMN IF NOT EXISTS census_state TEXT;
ALTER TABLE chains ADD COLUMN IF NOT EXISTS census_detail TEXT;
ALTER TABLE chains ADD COLUMN IF NOT EXISTS census_block BIGINT;
ALTER TABLE chains ADD COLUMN IF NOT EXISTS census_at TIMESTAMPTZ;

-- Configuration warnings of the last pass (e.g. registries that never emitted an event), one per
-- line; NULL: none. Configuration errors fail the chain and go to last_error.
ALTER TABLE chains ADD COLUMN IF NOT EXISTS config_warning TEXT;
