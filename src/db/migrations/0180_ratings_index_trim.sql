-- ratings_rater_time_idx (rater, block_time) serves every lookup by rater as well: the narrower
-- ratings_rater_idx (rater) only cost write time. Every rating inserted (a backfill writes
-- millions) and every revocation applied (`revoked_block` is indexed, so that UPDATE is never HOT)
-- wrote one entry into it.
DROP INDEX IF EXISTS ratings_rater_idx;
