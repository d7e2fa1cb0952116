-- Evidence counts per agent, maintained in the same transaction as the feedback_documents rows, so
-- a paid answer reads them in O(agents), never O(ratings): documents fetched (once fetched,
-- always: `first_keccak256` is written by the first fetch and never cleared, so a re-check in
-- flight or one that fails moves no count), documents that match their on-chain commitment, and
-- payment proofs verified. Kept by a row trigger (documents change
-- one job at a time; ingest inserts them `queued`, which changes no count, and the trigger's WHEN
-- skips rows whose counted states did not move).
CREATE TABLE IF NOT EXISTS agent_evidence (
  network    TEXT NOT NULL,
  agent_id   TEXT NOT NULL,
  fetched    BIGINT NOT NULL DEFAULT 0,
  matching   BIGINT NOT NULL DEFAULT 0,
  verified   BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (network, agent_id)
);

CREATE OR REPLACE FUNCTION agent_evidence_apply(p_network TEXT, p_agent TEXT, d_f BIGINT, d_m BIGINT, d_v BIGINT)
RETURNS void LANGUAGE sql AS $$
  INSERT INTO agent_evidence AS t (network, agent_id, fetched, matching, verified)
  VALUES (p_network, p_agent, d_f, d_m, d_v)
  ON CONFLICT (network, agent_id) DO UPDATE
     SET fetched = t.fetched + EXCLUDED.fetched,
         matching = t.matching + EXCLUDED.matching,
         verified = t.verified + EXCLUDED.verified;
$$;

CREATE OR REPLACE FUNCTION feedback_documents_evidence() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    PERFORM agent_evidence_apply(OLD.network, OLD.agent_id,
      -(OLD.first_keccak256 IS NOT NULL)::int, -(OLD.integrity_state IS NOT DISTINCT FROM 'match')::int,
      -(OLD.payment_state IS NOT DISTINCT FROM 'verified')::int);
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    PERFORM agent_evidence_apply(NEW.network, NEW.agent_id,
      (NEW.first_keccak256 IS NOT NULL)::int, (NEW.integrity_state IS NOT DISTINCT FROM 'match')::int,
      (NEW.payment_state IS NOT DISTINCT FROM 'verified')::int);
  END IF;
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS feedback_documents_evidence_ins ON feedback_documents;
CREATE TRIGGER feedback_documents_evidence_ins AFTER INSERT ON feedback_documents
  FOR EACH ROW WHEN (NEW.first_keccak256 IS NOT NULL OR NEW.integrity_state = 'match' OR NEW.payment_state = 'verified')
  EXECUTE FUNCTION feedback_documents_evidence();
DROP TRIGGER IF EXISTS feedback_documents_evidence_upd ON feedback_documents;
CREATE TRIGGER feedback_documents_evidence_upd AFTER UPDATE ON feedback_documents
  FOR EACH ROW WHEN ((OLD.first_keccak256 IS NOT NULL) IS DISTINCT FROM (NEW.first_keccak256 IS NOT NULL)
                  OR (OLD.integrity_state IS NOT DISTINCT FROM 'match') IS DISTINCT FROM (NEW.integrity_state IS NOT DISTINCT FROM 'match')
                  OR (OLD.payment_state IS NOT DISTINCT FROM 'verified') IS DISTINCT FROM (NEW.payment_state IS NOT DISTINCT FROM 'verified')
                  OR OLD.network IS DISTINCT FROM NEW.network OR OLD.agent_id IS DISTINCT FROM NEW.agent_id)
  EXECUTE FUNCTION feedback_documents_evidence();
DROP TRIGGER IF EXISTS feedback_documents_evidence_del ON feedback_documents;
CREATE TRIGGER feedback_documents_evidence_del AFTER DELETE ON feedback_documents
  FOR EACH ROW WHEN (OLD.first_keccak256 IS NOT NULL OR OLD.integrity_state = 'match' OR OLD.payment_state = 'verified')
  EXECUTE FUNCTION feedback_documents_evidence();

-- Rows already there (an index upgraded with documents in it).
INSERT INTO agent_evidence (network, agent_id, fetched, matching, verified)
SELECT network, agent_id,
       count(*) FILTER (WHERE first_keccak256 IS NOT NULL),
       count(*) FILTER (WHERE integrity_state = 'match'),
       count(*) FILTER (WHERE payment_state = 'verified')
  FROM feedback_documents GROUP BY network, agent_id
ON CONFLICT (network, agent_id) DO UPDATE
   SET fetched = EXCLUDED.fetched, matching = EXCLUDED.matching, verified = EXCLUDED.verified;
