-- Rater evidence (issue 32): the facts `one-voice-per-counterparty+bounded-trust@3` weighs a voice
-- by, kept per rater so a paid answer reads one row per distinct rater, never the ratings.
--
-- rater_first_tx: each rater's first rating in the index (any state; earliest block time, then
-- network, block, log index), kept by triggers on `ratings` in the same transaction as the rows
-- (an insert of an earlier rating moves it; a reorg rollback that deletes it finds the next one).
-- The row is also the durable queue of the account-history lookup: on an EVM chain the rating
-- transaction is read once (eth_getTransactionByHash) for its sender and nonce; on other chains
-- there is nothing to read (`unavailable`).
CREATE TABLE IF NOT EXISTS rater_first_tx (
  rater             TEXT PRIMARY KEY,
  network           TEXT NOT NULL,
  tx_hash           TEXT NOT NULL,
  log_index         INTEGER NOT NULL,
  block_number      BIGINT NOT NULL,
  block_time        TIMESTAMPTZ,
  state             TEXT NOT NULL DEFAULT 'queued'
                    CHECK (state IN ('queued', 'leased', 'retry', 'fetched', 'failed', 'unavailable')),
  attempts          INTEGER NOT NULL DEFAULT 0,
  next_try_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  lease_owner       TEXT,
  lease_expires_at  TIMESTAMPTZ,
  -- why the job is where it is (last error code); NULL after a success
  reason            TEXT,
  -- the transaction's sender (lower-cased) and nonce, once fetched
  tx_from           TEXT,
  nonce             BIGINT,
  fetched_at        TIMESTAMPTZ,
  updated_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS rater_first_tx_due_idx ON rater_first_tx (state, next_try_at);
CREATE INDEX IF NOT EXISTS rater_first_tx_key_idx ON rater_first_tx (network, tx_hash, log_index);

-- The first rating of each rater among `rows` (a transition table or the whole table), as the
-- queue wants it: EVM chains queue a lookup, others have no account history to read.
CREATE OR REPLACE FUNCTION rater_first_tx_upsert_from_ratings(only_raters TEXT[])
RETURNS void LANGUAGE sql AS $$
  INSERT INTO rater_first_tx AS t (rater, network, tx_hash, log_index, block_number, block_time, state)
  SELECT DISTINCT ON (r.rater) r.rater, r.network, r.tx_hash, r.log_index, r.block_number, r.block_time,
         CASE WHEN coalesce(c.kind, 'evm') = 'evm' THEN 'queued' ELSE 'unavailable' END
    FROM ratings r LEFT JOIN chains c ON c.network = r.network
   WHERE only_raters IS NULL OR r.rater = ANY (only_raters)
   ORDER BY r.rater, coalesce(r.block_time, 'infinity'::timestamptz), r.network, r.block_number, r.log_index
  ON CONFLICT (rater) DO NOTHING;
$$;

CREATE OR REPLACE FUNCTION rater_first_tx_ins() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO rater_first_tx AS t (rater, network, tx_hash, log_index, block_number, block_time, state)
  SELECT DISTINCT ON (n.rater) n.rater, n.network, n.tx_hash, n.log_index, n.block_number, n.block_time,
         CASE WHEN coalesce(c.kind, 'evm') = 'evm' THEN 'queued' ELSE 'unavailable' END
    FROM rater_first_new n LEFT JOIN chains c ON c.network = n.network
   ORDER BY n.rater, coalesce(n.block_time, 'infinity'::timestamptz), n.network, n.block_number, n.log_index
  ON CONFLICT (rater) DO UPDATE SET
    network = EXCLUDED.network, tx_hash = EXCLUDED.tx_hash, log_index = EXCLUDED.log_index,
    block_number = EXCLUDED.block_number, block_time = EXCLUDED.block_time, state = EXCLUDED.state,
    attempts = 0, next_try_at = now(), lease_owner = NULL, lease_expires_at = NULL, reason = NULL,
    tx_from = NULL, nonce = NULL, fetched_at = NULL, updated_at = now()
  WHERE (coalesce(EXCLUDED.block_time, 'infinity'::timestamptz), EXCLUDED.network, EXCLUDED.block_number, EXCLUDED.log_index)
      < (coalesce(t.block_time, 'infinity'::timestamptz), t.network, t.block_number, t.log_index);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION rater_first_tx_del() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  moved TEXT[];
BEGIN
  WITH gone AS (
    DELETE FROM rater_first_tx t USING rater_first_old o
     WHERE t.network = o.network AND t.tx_hash = o.tx_hash AND t.log_index = o.log_index
    RETURNING t.rater)
  SELECT array_agg(rater) INTO moved FROM gone;
  IF moved IS NOT NULL THEN
    PERFORM rater_first_tx_upsert_from_ratings(moved);
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS rater_first_tx_ins ON ratings;
CREATE TRIGGER rater_first_tx_ins AFTER INSERT ON ratings
  REFERENCING NEW TABLE AS rater_first_new
  FOR EACH STATEMENT EXECUTE FUNCTION rater_first_tx_ins();
DROP TRIGGER IF EXISTS rater_first_tx_del ON ratings;
CREATE TRIGGER rater_first_tx_del AFTER DELETE ON ratings
  REFERENCING OLD TABLE AS rater_first_old
  FOR EACH STATEMENT EXECUTE FUNCTION rater_first_tx_del();

-- Ratings already there (an index upgraded with ratings in it).
SELECT rater_first_tx_upsert_from_ratings(NULL);

-- Per rater, what the background job computed over the whole index (src/raters/refresh.ts).
CREATE TABLE IF NOT EXISTS rater_evidence (
  rater                 TEXT PRIMARY KEY,
  -- distinct subjects with an eligible rating (s), and those someone outside its cohort rated too
  subjects              INTEGER NOT NULL,
  independent_subjects  INTEGER NOT NULL,
  -- ratings with a verified proofOfPayment (any token), and the valued total in micro-USD
  verified_ratings      INTEGER NOT NULL DEFAULT 0,
  paid_micro_usd        NUMERIC NOT NULL DEFAULT 0,
  seed                  BOOLEAN NOT NULL DEFAULT FALSE,
  cohort_id             TEXT,
  cohort_size           INTEGER NOT NULL DEFAULT 0,
  -- comma-separated: first_rating_window, gas_payer, reciprocal_ring
  cohort_reasons        TEXT NOT NULL DEFAULT '',
  -- personalized PageRank of its node, and 0..1 against the seeds (NULL: no seed in the index)
  trust                 DOUBLE PRECISION NOT NULL DEFAULT 0,
  graph_trust           DOUBLE PRECISION,
  -- what a paid statement reads of the row, in one text (src/read/raters.ts encodeFacts): the
  -- lookup state, sender (= the rater itself), nonce, independent subjects, graph trust, cohort
  -- id and size, seed; one column per rater keeps a subject with thousands of raters cheap
  facts                 TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS rater_evidence_cohort_idx ON rater_evidence (cohort_id) WHERE cohort_id IS NOT NULL;

-- Per (rater, subject), only where there is something to say: verified payments to that subject
-- and whether the subject rated the rater back.
CREATE TABLE IF NOT EXISTS rater_subject_evidence (
  rater             TEXT NOT NULL,
  subject           TEXT NOT NULL,
  verified_ratings  INTEGER NOT NULL DEFAULT 0,
  paid_micro_usd    NUMERIC NOT NULL DEFAULT 0,
  reciprocal        BOOLEAN NOT NULL DEFAULT FALSE,
  PRIMARY KEY (rater, subject)
);
CREATE INDEX IF NOT EXISTS rater_subject_evidence_subject_idx ON rater_subject_evidence (subject);

-- The last run: when, over which inputs (a fingerprint), and the graph's figures.
CREATE TABLE IF NOT EXISTS rater_evidence_meta (
  meta_key  TEXT PRIMARY KEY,
  value     JSONB NOT NULL
);
