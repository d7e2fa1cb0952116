-- Per (network, agent, tag1) totals of the maintained per-(agent, rater, tag1) rows, so the facets
-- of one agent read O(tags) rows instead of O(raters x tags): counts and exact sums by class
-- (whatever the rater), and live_raters = how many raters have a live rating in the tag. The
-- self/eligible split against the CURRENT owner is made at read time by subtracting the owner's
-- own per-(agent, rater, tag1) rows (src/read/subject-aggregates.ts).
--
-- Kept by statement-level triggers ON live_agent_rater_tag itself (which only the ratings/agents
-- triggers of 0050 write), so every path that moves those rows (ingest, revocation, ownership
-- transfer, reorg delete) moves these totals in the same statement.
CREATE TABLE IF NOT EXISTS live_agent_tag (
  network        TEXT NOT NULL,
  agent_id       TEXT NOT NULL,
  tag_key        TEXT NOT NULL,
  tag1           TEXT NOT NULL,
  live_count     BIGINT NOT NULL DEFAULT 0,
  live_sum       NUMERIC NOT NULL DEFAULT 0,
  revoked_count  BIGINT NOT NULL DEFAULT 0,
  ood_count      BIGINT NOT NULL DEFAULT 0,
  live_raters    BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (network, agent_id, tag_key)
) WITH (fillfactor = 70);

-- Applies signed per-row deltas (one row per changed live_agent_rater_tag row, already signed)
-- staged by the trigger functions below; drops the totals that fall to all-zero.
CREATE OR REPLACE FUNCTION live_agent_tag_apply(nets TEXT[], ids TEXT[], keys TEXT[], tags TEXT[],
                                                lc BIGINT[], ls NUMERIC[], rc BIGINT[], oc BIGINT[], lr BIGINT[])
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  IF nets IS NULL OR cardinality(nets) = 0 THEN RETURN; END IF;
  INSERT INTO live_agent_tag AS t (network, agent_id, tag_key, tag1, live_count, live_sum, revoked_count,
                                   ood_count, live_raters)
  SELECT d.network, d.agent_id, d.tag_key, min(d.tag1), sum(d.lc), sum(d.ls), sum(d.rc), sum(d.oc), sum(d.lr)
    FROM unnest(nets, ids, keys, tags, lc, ls, rc, oc, lr) AS d(network, agent_id, tag_key, tag1, lc, ls, rc, oc, lr)
   GROUP BY d.network, d.agent_id, d.tag_key
  ON CONFLICT (network, agent_id, tag_key) DO UPDATE SET
    live_count = t.live_count + EXCLUDED.live_count,
    live_sum = t.live_sum + EXCLUDED.live_sum,
    revoked_count = t.revoked_count + EXCLUDED.revoked_count,
    ood_count = t.ood_count + EXCLUDED.ood_count,
    live_raters = t.live_raters + EXCLUDED.live_raters;
  DELETE FROM live_agent_tag t
   USING (SELECT DISTINCT network, agent_id, tag_key FROM unnest(nets, ids, keys) AS k(network, agent_id, tag_key)) k
   WHERE t.network = k.network AND t.agent_id = k.agent_id AND t.tag_key = k.tag_key
     AND t.live_count = 0 AND t.revoked_count = 0 AND t.ood_count = 0;
END $$;

CREATE OR REPLACE FUNCTION live_agent_tag_ins() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE n TEXT[]; i TEXT[]; k TEXT[]; g TEXT[]; a BIGINT[]; b NUMERIC[]; c BIGINT[]; o BIGINT[]; r BIGINT[];
BEGIN
  SELECT array_agg(network), array_agg(agent_id), array_agg(tag_key), array_agg(tag1), array_agg(live_count),
         array_agg(live_sum), array_agg(revoked_count), array_agg(ood_count), array_agg(live)
    INTO n, i, k, g, a, b, c, o, r
    FROM (SELECT network, agent_id, tag_key, min(tag1) AS tag1, sum(live_count)::bigint AS live_count,
                 sum(live_sum) AS live_sum, sum(revoked_count)::bigint AS revoked_count,
                 sum(ood_count)::bigint AS ood_count, count(*) FILTER (WHERE live_count > 0)::bigint AS live
            FROM live_tag_new GROUP BY network, agent_id, tag_key) x;
  PERFORM live_agent_tag_apply(n, i, k, g, a, b, c, o, r);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION live_agent_tag_del() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE n TEXT[]; i TEXT[]; k TEXT[]; g TEXT[]; a BIGINT[]; b NUMERIC[]; c BIGINT[]; o BIGINT[]; r BIGINT[];
BEGIN
  SELECT array_agg(network), array_agg(agent_id), array_agg(tag_key), array_agg(tag1), array_agg(-live_count),
         array_agg(-live_sum), array_agg(-revoked_count), array_agg(-ood_count), array_agg(-live)
    INTO n, i, k, g, a, b, c, o, r
    FROM (SELECT network, agent_id, tag_key, min(tag1) AS tag1, sum(live_count)::bigint AS live_count,
                 sum(live_sum) AS live_sum, sum(revoked_count)::bigint AS revoked_count,
                 sum(ood_count)::bigint AS ood_count, count(*) FILTER (WHERE live_count > 0)::bigint AS live
            FROM live_tag_old GROUP BY network, agent_id, tag_key) x;
  PERFORM live_agent_tag_apply(n, i, k, g, a, b, c, o, r);
  RETURN NULL;
END $$;

CREATE OR REPLACE FUNCTION live_agent_tag_upd() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE n TEXT[]; i TEXT[]; k TEXT[]; g TEXT[]; a BIGINT[]; b NUMERIC[]; c BIGINT[]; o BIGINT[]; r BIGINT[];
BEGIN
  SELECT array_agg(network), array_agg(agent_id), array_agg(tag_key), array_agg(tag1), array_agg(live_count),
         array_agg(live_sum), array_agg(revoked_count), array_agg(ood_count), array_agg(live)
    INTO n, i, k, g, a, b, c, o, r
    FROM (SELECT network, agent_id, tag_key, min(tag1) AS tag1, sum(live_count)::bigint AS live_count,
                 sum(live_sum) AS live_sum, sum(revoked_count)::bigint AS revoked_count,
                 sum(ood_count)::bigint AS ood_count, sum(live)::bigint AS live
            FROM (SELECT network, agent_id, tag_key, tag1, live_count, live_sum, revoked_count, ood_count,
                         CASE WHEN live_count > 0 THEN 1 ELSE 0 END AS live
                    FROM live_tag_new
                  UNION ALL
                  SELECT network, agent_id, tag_key, tag1, -live_count, -live_sum, -revoked_count, -ood_count,
                         CASE WHEN live_count > 0 THEN -1 ELSE 0 END
                    FROM live_tag_old) u
           GROUP BY network, agent_id, tag_key) x;
  PERFORM live_agent_tag_apply(n, i, k, g, a, b, c, o, r);
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS live_agent_tag_ins ON live_agent_rater_tag;
DROP TRIGGER IF EXISTS live_agent_tag_del ON live_agent_rater_tag;
DROP TRIGGER IF EXISTS live_agent_tag_upd ON live_agent_rater_tag;
CREATE TRIGGER live_agent_tag_ins AFTER INSERT ON live_agent_rater_tag REFERENCING NEW TABLE AS live_tag_new
  FOR EACH STATEMENT EXECUTE FUNCTION live_agent_tag_ins();
CREATE TRIGGER live_agent_tag_del AFTER DELETE ON live_agent_rater_tag REFERENCING OLD TABLE AS live_tag_old
  FOR EACH STATEMENT EXECUTE FUNCTION live_agent_tag_del();
CREATE TRIGGER live_agent_tag_upd AFTER UPDATE ON live_agent_rater_tag
  REFERENCING OLD TABLE AS live_tag_old NEW TABLE AS live_tag_new
  FOR EACH STATEMENT EXECUTE FUNCTION live_agent_tag_upd();

-- The totals of what is already indexed.
DELETE FROM live_agent_tag;
INSERT INTO live_agent_tag (network, agent_id, tag_key, tag1, live_count, live_sum, revoked_count, ood_count,
                            live_raters)
SELECT network, agent_id, tag_key, min(tag1), sum(live_count), sum(live_sum), sum(revoked_count), sum(ood_count),
       count(*) FILTER (WHERE live_count > 0)
  FROM live_agent_rater_tag
 GROUP BY network, agent_id, tag_key;
