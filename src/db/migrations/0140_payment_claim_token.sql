-- The request that holds a payment claim: a random token written with the claim (and again when a
-- retry takes a claim of unknown outcome over). A process that lost its database before it could
-- release a claim it never sent to settlement (the claim's INSERT committed as the connection
-- dropped, or the release itself failed) releases that very claim, and no other, once the database
-- answers again; until now such a claim waited PAYMENT_SETTLE_TIMEOUT_SECONDS.
ALTER TABLE payment_claims ADD COLUMN IF NOT EXISTS claim_token TEXT;
