-- ratings_time_idx (block_time DESC, network, block_number DESC, log_index DESC) served one
-- statement: the global GET /feed. That statement now takes the newest `limit` ratings of each
-- network through ratings_network_time_idx (network, block_time DESC, block_number DESC,
-- log_index DESC) and merges them (src/read/feed.ts): the same rows in the same order, since
-- the global order breaks block-time ties by network and so its top `limit` is among the
-- per-network tops. Every rating inserted wrote one entry into it (about 5 µs a rating on
-- PGlite, `npm run bench:writes`, of ~60); nothing else reads it.
DROP INDEX IF EXISTS ratings_time_idx;
