-- Feedback documents as evidence (issue 23) and responses to ratings.
--
-- feedback_documents: one row per rating that names a feedbackURI, keyed like the rating
-- (network, tx_hash, log_index) so re-ingesting an event never duplicates it, and carrying the
-- rating's block_number so a reorg rollback deletes it with the rating. The row is also the
-- durable fetch queue: `state` queued → leased → succeeded | retry → … | failed; a lease has an
-- owner and an expiry, so a crashed fetcher's job is leased again once the lease runs out.
CREATE TABLE IF NOT EXISTS feedback_documents (
  network            TEXT NOT NULL,
  tx_hash            TEXT NOT NULL,
  log_index          INTEGER NOT NULL,
  agent_id           TEXT NOT NULL,
  rater              TEXT NOT NULL,
  block_number       BIGINT NOT NULL,
  uri                TEXT NOT NULL,
  -- the rating's feedbackHash (NULL or the zero hash: no commitment)
  feedback_hash      TEXT,
  state              TEXT NOT NULL DEFAULT 'queued'
                     CHECK (state IN ('queued', 'leased', 'retry', 'succeeded', 'failed')),
  attempts           INTEGER NOT NULL DEFAULT 0,
  next_try_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
  lease_owner        TEXT,
  lease_expires_at   TIMESTAMPTZ,
  -- why the job is where it is (last error code, or e.g. 'no_ipfs_gateway'); NULL after a success
  reason             TEXT,
  created_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at         TIMESTAMPTZ NOT NULL DEFAULT now(),
  fetched_at         TIMESTAMPTZ,
  -- the blob as fetched (never served): its hashes and length
  blob_sha256        TEXT,
  blob_keccak256     TEXT,
  byte_length        INTEGER,
  content_type       TEXT,
  -- the keccak256 of the first bytes fetched: a later fetch that differs is `changed`
  first_keccak256    TEXT,
  parser_version     TEXT,
  integrity_state    TEXT CHECK (integrity_state IN
                       ('match', 'mismatch', 'no_commitment', 'unreachable', 'not_json', 'changed')),
  -- JSON array of the parsed fields that disagree with the log: [{field, document, log}]
  mismatches         JSONB,
  -- proofOfPayment as the document states it ({fromAddress, toAddress, chainId, txHash}) and its check
  payment_proof      JSONB,
  payment_state      TEXT CHECK (payment_state IN ('verified', 'not_found', 'mismatch', 'unsupported_chain')),
  payment_reason     TEXT,
  PRIMARY KEY (network, tx_hash, log_index)
);
CREATE INDEX IF NOT EXISTS feedback_documents_due_idx ON feedback_documents (state, next_try_at);
CREATE INDEX IF NOT EXISTS feedback_documents_block_idx ON feedback_documents (network, block_number);
-- The evidence counts of an agent (or a wallet's agents) read this index only.
CREATE INDEX IF NOT EXISTS feedback_documents_agent_idx ON feedback_documents (network, agent_id)
  INCLUDE (state, integrity_state, payment_state);
CREATE INDEX IF NOT EXISTS feedback_documents_rater_idx ON feedback_documents (rater);

-- ResponseAppended(agentId, clientAddress, feedbackIndex, responder, responseURI, responseHash):
-- kept as logged, keyed by the log; joined to its rating by (network, agent_id, rater, feedback_index).
-- responder_class is fixed at ingest from the agent's owner / agentWallet known then.
CREATE TABLE IF NOT EXISTS rating_responses (
  network          TEXT NOT NULL,
  tx_hash          TEXT NOT NULL,
  log_index        INTEGER NOT NULL,
  agent_id         TEXT NOT NULL,
  rater            TEXT NOT NULL,
  feedback_index   NUMERIC(20, 0) NOT NULL,
  responder        TEXT NOT NULL,
  response_uri     TEXT NOT NULL DEFAULT '',
  response_hash    TEXT,
  responder_class  TEXT NOT NULL CHECK (responder_class IN ('owner', 'operator', 'third_party')),
  block_number     BIGINT NOT NULL,
  block_time       TIMESTAMPTZ,
  PRIMARY KEY (network, tx_hash, log_index)
);
CREATE INDEX IF NOT EXISTS rating_responses_target_idx ON rating_responses (network, agent_id, rater, feedback_index);
CREATE INDEX IF NOT EXISTS rating_responses_block_idx ON rating_responses (network, block_number);
