-- A copy of each rater's evidence facts (rater_evidence.facts) beside its s in live_rater, which
-- every paid statement already joins per rater: a subject with thousands of raters then reads its
-- raters' facts from rows it reads anyway instead of one probe of rater_evidence per rater (about
-- 40 % of the statement of a 5,000-rater subject). NULL means "not copied": the statements fall
-- back to the probe (a rater whose live_rater row the triggers created since the last evidence
-- run), so the copy can lag (NULL) but never differ. Only the evidence run writes rater_evidence,
-- and it rewrites the copies of the raters it changed in the same transaction (src/store/raters.ts).
ALTER TABLE live_rater ADD COLUMN IF NOT EXISTS facts TEXT;

UPDATE live_rater l SET facts = e.facts FROM rater_evidence e WHERE e.rater = l.rater;
