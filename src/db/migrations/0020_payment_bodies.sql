-- Paid answers kept per receipt: a reuse of the receipt serves these exact bytes (no query re-run,
-- no new row), and the claim remembers its receipt key so that a settlement of unknown outcome,
-- once reconciled as settled, serves the buyer's retry from the receipt.
ALTER TABLE payment_receipts ADD COLUMN IF NOT EXISTS body TEXT;
ALTER TABLE payment_receipts ADD COLUMN IF NOT EXISTS body_status INTEGER;
ALTER TABLE payment_receipts ADD COLUMN IF NOT EXISTS run_started_at TIMESTAMPTZ;
ALTER TABLE payment_claims ADD COLUMN IF NOT EXISTS receipt_key TEXT;
CREATE INDEX IF NOT EXISTS payment_claims_unknown_idx ON payment_claims (updated_at) WHERE status = 'settling-unknown';
CREATE INDEX IF NOT EXISTS payment_receipts_expires_idx ON payment_receipts (expires_at) WHERE body IS NOT NULL;
-- The authorization's validBefore: once it has passed unused on chain, a settling-unknown claim
-- can never be spent and is released by the reconciliation.
ALTER TABLE payment_claims ADD COLUMN IF NOT EXISTS valid_before NUMERIC(78, 0);
