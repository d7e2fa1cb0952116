-- The host of each feedback document's URI, kept on its row: /stats/documents and the document
-- coverage of /stats/issuers group by it, instead of running the URI regex over every row of
-- feedback_documents on each call.
--
-- uri_host() is the one definition of "the host of a feedbackURI" (src/db/sql-fragments.ts's
-- URI_HOST calls it; the free issuer aggregates derive their hosts from ratings with it): the
-- host of an http(s) URI (scheme in any case), lower-cased, without userinfo or port, an IPv6
-- literal with its brackets; NULL for any other URI (ipfs:, data:, no scheme, no host). An SQL
-- function of one expression: the planner inlines it where it is called.
CREATE OR REPLACE FUNCTION uri_host(uri TEXT) RETURNS TEXT
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT lower(substring(uri from '^[Hh][Tt][Tt][Pp][Ss]?://(?:[^@/?#]*@)?(\[[^]/?#]*\]|[^/?#:]+)')) $$;

-- Set once per row by the database, from uri_host(uri): adding the column computes it for the
-- documents already queued (the backfill: the table is rewritten once), and every enqueue after
-- this gets it with its insert. The uri of a row never changes. No index on it: the coverage
-- sums every row per host either way; a covering index (host) INCLUDE (first_keccak256,
-- integrity_state, payment_state) measured no faster than the scan of the column (about 230 ms
-- for 1M documents on PostgreSQL 15, against 6 s for the regex over every row) and would cost
-- every enqueue and every fetch's update.
ALTER TABLE feedback_documents
  ADD COLUMN IF NOT EXISTS host TEXT GENERATED ALWAYS AS (uri_host(uri)) STORED;
