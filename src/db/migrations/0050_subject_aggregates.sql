-- Maintained per-subject aggregates for the paid read model (docs/POLICIES.md, "Maintained
-- aggregates"). Kept by STATEMENT-LEVEL triggers with transition tables on `ratings` (insert,
-- update, delete: the reorg rollback deletes too) and on `agents` (owner set, changed, cleared,
-- row removed), so they move in the same transaction as the rows that cause them, on PGlite and
-- PostgreSQL alike. A paid answer reads O(distinct raters) rows of these, never the ratings.
--
-- "live" = not revoked and value in the scoring domain 0..100 (exact NUMERIC). Whether a live
-- rating is eligible or a self-rating depends on the agent's CURRENT owner, so the per-rater tables
-- keep live ratings whatever the rater, and the reader splits them (rater = owner → self). The two
-- tables that depend on the owner (live_agent_day, live_rater_subject) are moved by the agents
-- trigger when the owner changes. Sums are exact NUMERIC: any order of ingestion gives the same
-- numbers.

-- Per (network, agent, rater): counts by class and exact sums of the live values.
CREATE TABLE IF NOT EXISTS live_agent_rater (
  network        TEXT NOT NULL,
  agent_id       TEXT NOT NULL,
  rater          TEXT NOT NULL,
  live_count     BIGINT NOT NULL DEFAULT 0,
  live_sum       NUMERIC NOT NULL DEFAULT 0,
  live_sumsq     NUMERIC NOT NULL DEFAULT 0,
  -- live ratings without a block time (absent from history)
  live_undated   BIGINT NOT NULL DEFAULT 0,
  revoked_count  BIGINT NOT NULL DEFAULT 0,
  -- not revoked, value outside 0..100
  ood_count      BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (network, agent_id, rater)
) WITH (fillfactor = 70);
CREATE INDEX IF NOT EXISTS live_agent_rater_rater_idx ON live_agent_rater (rater);

-- Per (network, agent, rater, tag1): the same, for facets. tag1 is free text of any length, so the
-- key holds its md5 and the text sits beside it.
CREATE TABLE IF NOT EXISTS live_agent_rater_tag (
  network        TEXT NOT NULL,
  agent_id       TEXT NOT NULL,
  rater          TEXT NOT NULL,
  tag_key        TEXT NOT NULL,
  tag1           TEXT NOT NULL,
  live_count     BIGINT NOT NULL DEFAULT 0,
  live_sum       NUMERIC NOT NULL DEFAULT 0,
  revoked_count  BIGINT NOT NULL DEFAULT 0,
  ood_count      BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (network, agent_id, rater, tag_key)
) WITH (fillfactor = 70);
CREATE INDEX IF NOT EXISTS live_agent_rater_tag_rater_idx ON live_agent_rater_tag (rater);

-- Per (network, agent, UTC day of block time): ELIGIBLE dated ratings (rater is not the current
-- owner). Weeks and months are unions of days, so history reads this table.
CREATE TABLE IF NOT EXISTS live_agent_day (
  network         TEXT NOT NULL,
  agent_id        TEXT NOT NULL,
  day             DATE NOT NULL,
  eligible_count  BIGINT NOT NULL DEFAULT 0,
  eligible_sum    NUMERIC NOT NULL DEFAULT 0,
  PRIMARY KEY (network, agent_id, day)
) WITH (fillfactor = 70);

-- Per (rater, subject): eligible ratings; subject = the agent's current owner, or
-- `network:agent_id` for an agent with no known owner.
CREATE TABLE IF NOT EXISTS live_rater_subject (
  rater           TEXT NOT NULL,
  subject         TEXT NOT NULL,
  eligible_count  BIGINT NOT NULL,
  PRIMARY KEY (rater, subject)
) WITH (fillfactor = 70);

-- Per rater: distinct subjects with at least one eligible rating (s of the rater weight).
CREATE TABLE IF NOT EXISTS live_rater (
  rater     TEXT PRIMARY KEY,
  subjects  BIGINT NOT NULL
) WITH (fillfactor = 70);

-- fillfactor 70: the triggers update these rows in place all the time (counters only, never a key),
-- so leaving room on each page keeps those updates HOT (no index writes).

-- Keyset paging of an agent's ratings and the first/last eligible rating of a subject.
CREATE INDEX IF NOT EXISTS ratings_agent_pos_idx ON ratings (network, agent_id, block_number, log_index, tx_hash);
CREATE INDEX IF NOT EXISTS ratings_agent_time_idx ON ratings (network, agent_id, block_time);
CREATE INDEX IF NOT EXISTS ratings_rater_time_idx ON ratings (rater, block_time);

-- Moves (rater, subject) eligible counts by the given deltas and live_rater.subjects by the
-- subjects that crossed zero.
CREATE OR REPLACE FUNCTION live_rater_subject_apply(raters TEXT[], subjects TEXT[], deltas BIGINT[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF raters IS NULL OR cardinality(raters) = 0 THEN RETURN; END IF;
  WITH d AS (
    SELECT k.rater, k.subject, sum(k.delta)::bigint AS delta
      FROM unnest(raters, subjects, deltas) AS k(rater, subject, delta)
     GROUP BY k.rater, k.subject
    HAVING sum(k.delta) <> 0
  ), before AS (
    SELECT d.rater, d.subject, d.delta, coalesce(s.eligible_count, 0) AS c0
      FROM d LEFT JOIN live_rater_subject s ON s.rater = d.rater AND s.subject = d.subject
  ), up AS (
    INSERT INTO live_rater_subject AS t (rater, subject, eligible_count)
    SELECT rater, subject, delta FROM d
    ON CONFLICT (rater, subject) DO UPDATE SET eligible_count = t.eligible_count + EXCLUDED.eligible_count
    RETURNING 1
  ), moved AS (
    SELECT rater, sum((CASE WHEN c0 + delta > 0 THEN 1 ELSE 0 END) - (CASE WHEN c0 > 0 THEN 1 ELSE 0 END))::bigint AS n
      FROM before GROUP BY rater
  )
  INSERT INTO live_rater AS t (rater, subjects)
  SELECT rater, n FROM moved WHERE n <> 0
  ON CONFLICT (rater) DO UPDATE SET subjects = t.subjects + EXCLUDED.subjects;
  IF EXISTS (SELECT 1 FROM unnest(deltas) AS d WHERE d < 0) THEN
    DELETE FROM live_rater_subject s
     USING unnest(raters, subjects) AS k(rater, subject)
     WHERE s.rater = k.rater AND s.subject = k.subject AND s.eligible_count = 0;
    DELETE FROM live_rater r USING unnest(raters) AS k(rater) WHERE r.rater = k.rater AND r.subjects = 0;
  END IF;
END $$;

-- A statement's ratings rows are staged in a session temp table (emptied after each use and at
-- commit) with their class inputs and the agent's current owner, then applied set-wise: no array
-- of rows is ever built, so one INSERT … SELECT of millions of rows is maintained like a batch.
CREATE OR REPLACE FUNCTION live_stage_ready() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF to_regclass('pg_temp.live_stage') IS NULL THEN
    CREATE TEMP TABLE live_stage (
      network TEXT, agent_id TEXT, rater TEXT, value NUMERIC, tag1 TEXT, block_time TIMESTAMPTZ,
      revoked BOOLEAN, live BOOLEAN, owner TEXT
    ) ON COMMIT DELETE ROWS;
  END IF;
END $$;

-- Adds (sgn = 1) or removes (sgn = -1) the staged ratings rows from every maintained aggregate,
-- against the agents' owners as they stand now, then empties the stage.
CREATE OR REPLACE FUNCTION live_apply_stage(sgn INTEGER)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  rt TEXT[];
  sj TEXT[];
  dl BIGINT[];
BEGIN

  INSERT INTO live_agent_rater AS t (network, agent_id, rater, live_count, live_sum, live_sumsq, live_undated,
                                     revoked_count, ood_count)
  SELECT network, agent_id, rater,
         sgn * count(*) FILTER (WHERE live),
         sgn * coalesce(sum(value) FILTER (WHERE live), 0),
         sgn * coalesce(sum(value * value) FILTER (WHERE live), 0),
         sgn * count(*) FILTER (WHERE live AND block_time IS NULL),
         sgn * count(*) FILTER (WHERE revoked),
         sgn * count(*) FILTER (WHERE NOT revoked AND NOT live)
    FROM live_stage GROUP BY network, agent_id, rater
  ON CONFLICT (network, agent_id, rater) DO UPDATE SET
    live_count = t.live_count + EXCLUDED.live_count,
    live_sum = t.live_sum + EXCLUDED.live_sum,
    live_sumsq = t.live_sumsq + EXCLUDED.live_sumsq,
    live_undated = t.live_undated + EXCLUDED.live_undated,
    revoked_count = t.revoked_count + EXCLUDED.revoked_count,
    ood_count = t.ood_count + EXCLUDED.ood_count;
  -- Removing rows (sgn < 0) can leave all-zero aggregate rows: drop them. Adding never does.
  IF sgn < 0 THEN
  DELETE FROM live_agent_rater t USING (SELECT DISTINCT network, agent_id, rater FROM live_stage) k
   WHERE t.network = k.network AND t.agent_id = k.agent_id AND t.rater = k.rater
     AND t.live_count = 0 AND t.revoked_count = 0 AND t.ood_count = 0;
  END IF;

  INSERT INTO live_agent_rater_tag AS t (network, agent_id, rater, tag_key, tag1, live_count, live_sum,
                                         revoked_count, ood_count)
  SELECT network, agent_id, rater, md5(tag1), tag1,
         sgn * count(*) FILTER (WHERE live),
         sgn * coalesce(sum(value) FILTER (WHERE live), 0),
         sgn * count(*) FILTER (WHERE revoked),
         sgn * count(*) FILTER (WHERE NOT revoked AND NOT live)
    FROM live_stage GROUP BY network, agent_id, rater, tag1
  ON CONFLICT (network, agent_id, rater, tag_key) DO UPDATE SET
    live_count = t.live_count + EXCLUDED.live_count,
    live_sum = t.live_sum + EXCLUDED.live_sum,
    revoked_count = t.revoked_count + EXCLUDED.revoked_count,
    ood_count = t.ood_count + EXCLUDED.ood_count;
  IF sgn < 0 THEN
  DELETE FROM live_agent_rater_tag t USING (SELECT DISTINCT network, agent_id, rater, md5(tag1) AS tag_key FROM live_stage) k
   WHERE t.network = k.network AND t.agent_id = k.agent_id AND t.rater = k.rater AND t.tag_key = k.tag_key
     AND t.live_count = 0 AND t.revoked_count = 0 AND t.ood_count = 0;
  END IF;

  INSERT INTO live_agent_day AS t (network, agent_id, day, eligible_count, eligible_sum)
  SELECT network, agent_id, (block_time AT TIME ZONE 'UTC')::date, sgn * count(*), sgn * sum(value)
    FROM live_stage
   WHERE live AND block_time IS NOT NULL AND rater <> coalesce(owner, '')
   GROUP BY network, agent_id, (block_time AT TIME ZONE 'UTC')::date
  ON CONFLICT (network, agent_id, day) DO UPDATE SET
    eligible_count = t.eligible_count + EXCLUDED.eligible_count,
    eligible_sum = t.eligible_sum + EXCLUDED.eligible_sum;
  IF sgn < 0 THEN
  DELETE FROM live_agent_day t
   USING (SELECT DISTINCT network, agent_id, (block_time AT TIME ZONE 'UTC')::date AS day FROM live_stage
           WHERE block_time IS NOT NULL) k
   WHERE t.network = k.network AND t.agent_id = k.agent_id AND t.day = k.day AND t.eligible_count = 0;
  END IF;

  SELECT array_agg(rater), array_agg(subject), array_agg(n)
    INTO rt, sj, dl
    FROM (SELECT rater, coalesce(owner, network || ':' || agent_id) AS subject, sgn * count(*) AS n
            FROM live_stage WHERE live AND rater <> coalesce(owner, '')
           GROUP BY 1, 2) x;
  PERFORM live_rater_subject_apply(rt, sj, dl);
  DELETE FROM live_stage;
END $$;

-- An agent's owner moved from old_owner to new_owner (either may be NULL: unknown / row gone).
CREATE OR REPLACE FUNCTION live_owners_apply(nets TEXT[], ids TEXT[], olds TEXT[], news TEXT[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  rt TEXT[];
  sj TEXT[];
  dl BIGINT[];
BEGIN
  IF nets IS NULL OR cardinality(nets) = 0 THEN RETURN; END IF;
  -- Eligible counts leave the old subject and reach the new one; the old owner's own ratings
  -- become eligible, the new owner's become self-ratings.
  SELECT array_agg(rater), array_agg(subject), array_agg(n)
    INTO rt, sj, dl
    FROM (
      SELECT ar.rater, coalesce(c.old_owner, c.network || ':' || c.agent_id) AS subject, -ar.live_count AS n
        FROM unnest(nets, ids, olds, news) AS c(network, agent_id, old_owner, new_owner)
        JOIN live_agent_rater ar ON ar.network = c.network AND ar.agent_id = c.agent_id
       WHERE ar.live_count > 0 AND ar.rater <> coalesce(c.old_owner, '')
      UNION ALL
      SELECT ar.rater, coalesce(c.new_owner, c.network || ':' || c.agent_id), ar.live_count
        FROM unnest(nets, ids, olds, news) AS c(network, agent_id, old_owner, new_owner)
        JOIN live_agent_rater ar ON ar.network = c.network AND ar.agent_id = c.agent_id
       WHERE ar.live_count > 0 AND ar.rater <> coalesce(c.new_owner, '')
    ) x;
  PERFORM live_rater_subject_apply(rt, sj, dl);

  INSERT INTO live_agent_day AS t (network, agent_id, day, eligible_count, eligible_sum)
  SELECT network, agent_id, day, sum(n), sum(s) FROM (
    SELECT r.network, r.agent_id, (r.block_time AT TIME ZONE 'UTC')::date AS day, 1 AS n, r.value AS s
      FROM unnest(nets, ids, olds, news) AS c(network, agent_id, old_owner, new_owner)
      JOIN ratings r ON r.network = c.network AND r.agent_id = c.agent_id AND r.rater = c.old_owner
     WHERE NOT r.revoked AND r.value >= 0 AND r.value <= 100 AND r.block_time IS NOT NULL
    UNION ALL
    SELECT r.network, r.agent_id, (r.block_time AT TIME ZONE 'UTC')::date, -1, -r.value
      FROM unnest(nets, ids, olds, news) AS c(network, agent_id, old_owner, new_owner)
      JOIN ratings r ON r.network = c.network AND r.agent_id = c.agent_id AND r.rater = c.new_owner
     WHERE NOT r.revoked AND r.value >= 0 AND r.value <= 100 AND r.block_time IS NOT NULL
  ) x GROUP BY network, agent_id, day
  ON CONFLICT (network, agent_id, day) DO UPDATE SET
    eligible_count = t.eligible_count + EXCLUDED.eligible_count,
    eligible_sum = t.eligible_sum + EXCLUDED.eligible_sum;
  DELETE FROM live_agent_day t USING unnest(nets, ids) AS c(network, agent_id)
   WHERE t.network = c.network AND t.agent_id = c.agent_id AND t.eligible_count = 0;
END $$;

CREATE OR REPLACE FUNCTION live_ratings_ins() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM live_stage_ready();
  INSERT INTO live_stage
  SELECT r.network, r.agent_id, r.rater, r.value, r.tag1, r.block_time, r.revoked,
         (NOT r.revoked AND r.value >= 0 AND r.value <= 100), a.owner
    FROM live_new r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id;
  IF FOUND THEN PERFORM live_apply_stage(1); END IF;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION live_ratings_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM live_stage_ready();
  INSERT INTO live_stage
  SELECT r.network, r.agent_id, r.rater, r.value, r.tag1, r.block_time, r.revoked,
         (NOT r.revoked AND r.value >= 0 AND r.value <= 100), a.owner
    FROM live_old r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id;
  IF FOUND THEN PERFORM live_apply_stage(-1); END IF;
  RETURN NULL;
END $$;

-- Only rows whose class-deciding columns moved are re-applied (a revocation, mostly).
CREATE OR REPLACE FUNCTION live_ratings_upd() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM live_stage_ready();
  INSERT INTO live_stage
  SELECT o.network, o.agent_id, o.rater, o.value, o.tag1, o.block_time, o.revoked,
         (NOT o.revoked AND o.value >= 0 AND o.value <= 100), a.owner
    FROM live_old o JOIN live_new n ON n.network = o.network AND n.tx_hash = o.tx_hash AND n.log_index = o.log_index
    LEFT JOIN agents a ON a.network = o.network AND a.agent_id = o.agent_id
   WHERE (o.agent_id, o.rater, o.value, o.tag1, o.block_time, o.revoked)
         IS DISTINCT FROM (n.agent_id, n.rater, n.value, n.tag1, n.block_time, n.revoked);
  IF NOT FOUND THEN RETURN NULL; END IF;
  PERFORM live_apply_stage(-1);
  INSERT INTO live_stage
  SELECT n.network, n.agent_id, n.rater, n.value, n.tag1, n.block_time, n.revoked,
         (NOT n.revoked AND n.value >= 0 AND n.value <= 100), a.owner
    FROM live_old o JOIN live_new n ON n.network = o.network AND n.tx_hash = o.tx_hash AND n.log_index = o.log_index
    LEFT JOIN agents a ON a.network = n.network AND a.agent_id = n.agent_id
   WHERE (o.agent_id, o.rater, o.value, o.tag1, o.block_time, o.revoked)
         IS DISTINCT FROM (n.agent_id, n.rater, n.value, n.tag1, n.block_time, n.revoked);
  PERFORM live_apply_stage(1);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION live_agents_ins() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM live_owners_apply(array_agg(network), array_agg(agent_id), array_agg(NULL::text), array_agg(owner))
     FROM live_new WHERE owner IS NOT NULL;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION live_agents_del() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM live_owners_apply(array_agg(network), array_agg(agent_id), array_agg(owner), array_agg(NULL::text))
     FROM live_old WHERE owner IS NOT NULL;
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION live_agents_upd() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM live_owners_apply(array_agg(n.network), array_agg(n.agent_id), array_agg(o.owner), array_agg(n.owner))
     FROM live_old o JOIN live_new n ON n.network = o.network AND n.agent_id = o.agent_id
    WHERE o.owner IS DISTINCT FROM n.owner;
  RETURN NULL;
END $$;

-- Backfill from the rows already indexed (the triggers keep them from here on).
INSERT INTO live_agent_rater (network, agent_id, rater, live_count, live_sum, live_sumsq, live_undated, revoked_count, ood_count)
SELECT network, agent_id, rater,
       count(*) FILTER (WHERE live),
       coalesce(sum(value) FILTER (WHERE live), 0),
       coalesce(sum(value * value) FILTER (WHERE live), 0),
       count(*) FILTER (WHERE live AND block_time IS NULL),
       count(*) FILTER (WHERE revoked),
       count(*) FILTER (WHERE NOT revoked AND NOT live)
  FROM (SELECT r.*, (NOT r.revoked AND r.value >= 0 AND r.value <= 100) AS live FROM ratings r) x
 GROUP BY network, agent_id, rater
ON CONFLICT DO NOTHING;

INSERT INTO live_agent_rater_tag (network, agent_id, rater, tag_key, tag1, live_count, live_sum, revoked_count, ood_count)
SELECT network, agent_id, rater, md5(tag1), tag1,
       count(*) FILTER (WHERE live),
       coalesce(sum(value) FILTER (WHERE live), 0),
       count(*) FILTER (WHERE revoked),
       count(*) FILTER (WHERE NOT revoked AND NOT live)
  FROM (SELECT r.*, (NOT r.revoked AND r.value >= 0 AND r.value <= 100) AS live FROM ratings r) x
 GROUP BY network, agent_id, rater, tag1
ON CONFLICT DO NOTHING;

INSERT INTO live_agent_day (network, agent_id, day, eligible_count, eligible_sum)
SELECT r.network, r.agent_id, (r.block_time AT TIME ZONE 'UTC')::date, count(*), sum(r.value)
  FROM ratings r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
 WHERE NOT r.revoked AND r.value >= 0 AND r.value <= 100 AND r.block_time IS NOT NULL
   AND r.rater <> coalesce(a.owner, '')
 GROUP BY r.network, r.agent_id, (r.block_time AT TIME ZONE 'UTC')::date
ON CONFLICT DO NOTHING;

INSERT INTO live_rater_subject (rater, subject, eligible_count)
SELECT r.rater, coalesce(a.owner, r.network || ':' || r.agent_id), count(*)
  FROM ratings r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id
 WHERE NOT r.revoked AND r.value >= 0 AND r.value <= 100 AND r.rater <> coalesce(a.owner, '')
 GROUP BY 1, 2
ON CONFLICT DO NOTHING;

INSERT INTO live_rater (rater, subjects)
SELECT rater, count(*) FROM live_rater_subject GROUP BY rater
ON CONFLICT DO NOTHING;

DROP TRIGGER IF EXISTS live_ratings_ins ON ratings;
DROP TRIGGER IF EXISTS live_ratings_del ON ratings;
DROP TRIGGER IF EXISTS live_ratings_upd ON ratings;
DROP TRIGGER IF EXISTS live_agents_ins ON agents;
DROP TRIGGER IF EXISTS live_agents_del ON agents;
DROP TRIGGER IF EXISTS live_agents_upd ON agents;
CREATE TRIGGER live_ratings_ins AFTER INSERT ON ratings REFERENCING NEW TABLE AS live_new
  FOR EACH STATEMENT EXECUTE FUNCTION live_ratings_ins();
CREATE TRIGGER live_ratings_del AFTER DELETE ON ratings REFERENCING OLD TABLE AS live_old
  FOR EACH STATEMENT EXECUTE FUNCTION live_ratings_del();
CREATE TRIGGER live_ratings_upd AFTER UPDATE ON ratings REFERENCING OLD TABLE AS live_old NEW TABLE AS live_new
  FOR EACH STATEMENT EXECUTE FUNCTION live_ratings_upd();
CREATE TRIGGER live_agents_ins AFTER INSERT ON agents REFERENCING NEW TABLE AS live_new
  FOR EACH STATEMENT EXECUTE FUNCTION live_agents_ins();
CREATE TRIGGER live_agents_del AFTER DELETE ON agents REFERENCING OLD TABLE AS live_old
  FOR EACH STATEMENT EXECUTE FUNCTION live_agents_del();
CREATE TRIGGER live_agents_upd AFTER UPDATE ON agents REFERENCING OLD TABLE AS live_old NEW TABLE AS live_new
  FOR EACH STATEMENT EXECUTE FUNCTION live_agents_upd();
