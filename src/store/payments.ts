/**
 * Every SQL statement of the payment tables (`payment_claims`, `payment_receipts`), in one place:
 * the paywall (src/payments/paywall.ts) and the reconciliation job (src/payments/reconcile.ts)
 * call these and hold no SQL of their own. All parameterised.
 *
 * A claim is keyed by (network, payer, nonce): one EIP-3009 authorization pays at most one call.
 * Its status goes `settling` → `settled`, or back to nothing (released), or `settling-unknown` when
 * the settle's outcome is unknown (then the reconciliation job or a retry decides).
 */
import type { Database, Queryable } from '../db/database.js';

/** (network, payer, nonce) of one authorization, payer and nonce lower-cased. */
export type ClaimKey = readonly [string, string, string];

interface ReceiptRow {
  resource: string;
  settlement_tx: string;
  network: string;
  payer: string;
  body: string | null;
  body_status: number | null;
}

/** The unexpired receipt of a receipt key, if any. */
export async function findReceipt(
  db: Queryable,
  receiptKey: string,
  now: Date,
): Promise<ReceiptRow | undefined> {
  const rows = await db.query<ReceiptRow & Record<string, unknown>>(
    `SELECT resource, settlement_tx, network, payer, body, body_status
       FROM payment_receipts WHERE receipt_key = $1 AND expires_at > $2`,
    [receiptKey, now],
  );
  return rows[0];
}

/**
 * Takes the lease to compute a receipt's missing answer: true when no other request holds a lease
 * younger than `staleBefore`.
 */
export async function leaseReceiptRun(
  db: Queryable,
  receiptKey: string,
  now: Date,
  staleBefore: Date,
): Promise<boolean> {
  const leased = await db.query(
    `UPDATE payment_receipts SET run_started_at = $2
      WHERE receipt_key = $1 AND body IS NULL AND (run_started_at IS NULL OR run_started_at < $3) RETURNING receipt_key`,
    [receiptKey, now, staleBefore],
  );
  return leased.length > 0;
}

/**
 * Stores the answer's bytes on the receipt, first writer wins. Returns null when stored, or the
 * bytes another writer stored first (null too when there are none).
 */
export async function storeReceiptAnswer(
  db: Queryable,
  receiptKey: string,
  text: string,
  status: number,
): Promise<{ text: string; status: number } | null> {
  const stored = await db.query(
    'UPDATE payment_receipts SET body = $2, body_status = $3 WHERE receipt_key = $1 AND body IS NULL RETURNING receipt_key',
    [receiptKey, text, status],
  );
  if (stored.length > 0) return null;
  const [r] = await db.query<{ body: string | null; body_status: number | null }>(
    'SELECT body, body_status FROM payment_receipts WHERE receipt_key = $1',
    [receiptKey],
  );
  return r?.body != null ? { text: r.body, status: Number(r.body_status ?? 200) } : null;
}

interface ClaimRow {
  status: string;
  resource: string;
  settlement_tx: string | null;
  receipt_key: string | null;
  /** `settling` for longer than the settle timeout (by the database clock): its outcome is unknown. */
  stale: boolean;
}

/** The claim of an authorization, if one exists (`stale` after `settleTimeoutSeconds` in `settling`). */
export async function findClaim(
  db: Queryable,
  key: ClaimKey,
  settleTimeoutSeconds: number,
): Promise<ClaimRow | undefined> {
  const claims = await db.query<ClaimRow & Record<string, unknown>>(
    `SELECT status, resource, settlement_tx, receipt_key,
            (status = 'settling' AND updated_at < now() - $4::int * interval '1 second') AS stale
       FROM payment_claims WHERE network = $1 AND payer = $2 AND nonce = $3`,
    [...key, settleTimeoutSeconds],
  );
  return claims[0];
}

/**
 * A claim stuck in `settling` for longer than the settle timeout (the process that settled it died,
 * or lost its database, before recording the outcome) becomes `settling-unknown`, atomically: true
 * for the one caller that moved it. From there a retry or the reconciliation decides it.
 */
export async function reopenStaleClaim(
  db: Queryable,
  key: ClaimKey,
  settleTimeoutSeconds: number,
): Promise<boolean> {
  const moved = await db.query(
    `UPDATE payment_claims SET status = 'settling-unknown', updated_at = now()
      WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling'
        AND updated_at < now() - $4::int * interval '1 second' RETURNING nonce`,
    [...key, settleTimeoutSeconds],
  );
  return moved.length > 0;
}

/** Every claim stuck in `settling` past the settle timeout becomes `settling-unknown`; how many. */
export async function reopenStaleClaims(db: Queryable, settleTimeoutSeconds: number): Promise<number> {
  const moved = await db.query(
    `UPDATE payment_claims SET status = 'settling-unknown', updated_at = now()
      WHERE status = 'settling' AND updated_at < now() - $1::int * interval '1 second' RETURNING nonce`,
    [settleTimeoutSeconds],
  );
  return moved.length;
}

/**
 * Claims an authorization for `resource` (status `settling`), atomically: true when this request
 * holds it. A claim left `settling-unknown` for the same resource is taken over (the facilitator
 * has just verified the authorization as unused; one retry wins).
 */
export async function claimAuthorization(
  db: Queryable,
  key: ClaimKey,
  c: { resource: string; amount: string; receiptKey: string; validBefore: string; token?: string },
): Promise<boolean> {
  const token = c.token ?? null;
  const inserted = await db.query(
    `INSERT INTO payment_claims (network, payer, nonce, resource, amount, status, receipt_key, valid_before, claim_token)
     VALUES ($1, $2, $3, $4, $5, 'settling', $6, $7, $8) ON CONFLICT (network, payer, nonce) DO NOTHING RETURNING nonce`,
    [...key, c.resource, c.amount, c.receiptKey, c.validBefore, token],
  );
  if (inserted.length > 0) return true;
  const taken = await db.query(
    `UPDATE payment_claims SET status = 'settling', receipt_key = $5, valid_before = $6, claim_token = $7, updated_at = now()
     WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling-unknown' AND resource = $4 RETURNING nonce`,
    [...key, c.resource, c.receiptKey, c.validBefore, token],
  );
  return taken.length > 0;
}

/**
 * Releases a `settling` claim that the request holding `token` never sent to settlement (nothing
 * was charged); a claim taken since by another request (another token) is left alone. True when
 * released.
 */
export async function releaseOwnClaim(db: Queryable, key: ClaimKey, token: string): Promise<boolean> {
  const gone = await db.query(
    `DELETE FROM payment_claims WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling' AND claim_token = $4 RETURNING nonce`,
    [...key, token],
  );
  return gone.length > 0;
}

/**
 * A `settling` claim held by `token` whose settle outcome that request never heard becomes
 * `settling-unknown` (the retry decides it from the chain at once). True when moved.
 */
export async function markOwnClaimUnknown(db: Queryable, key: ClaimKey, token: string): Promise<boolean> {
  const moved = await db.query(
    `UPDATE payment_claims SET status = 'settling-unknown', updated_at = now()
      WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling' AND claim_token = $4 RETURNING nonce`,
    [...key, token],
  );
  return moved.length > 0;
}

/** Drops a `settling` claim (the settle failed or was never sent: nothing was charged). */
export async function releaseClaim(db: Queryable, key: ClaimKey): Promise<void> {
  await db.query(
    "DELETE FROM payment_claims WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling'",
    [...key],
  );
}

/** A `settling` claim whose settle outcome is unknown becomes `settling-unknown` (kept, bound to its resource). */
export async function markClaimUnknown(db: Queryable, key: ClaimKey, tx: string | null): Promise<void> {
  await db.query(
    `UPDATE payment_claims SET status = 'settling-unknown', settlement_tx = COALESCE($4, settlement_tx), updated_at = now()
     WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling'`,
    [...key, tx],
  );
}

/**
 * A settled authorization: the claim becomes `settled` and its receipt row is written (answer
 * bytes still empty), in one transaction.
 */
export async function recordSettlement(
  db: Pick<Database, 'transaction'>,
  s: {
    claimKey: ClaimKey;
    receiptKey: string;
    resource: string;
    amount: string;
    tx: string;
    payer: string;
    expires: Date;
    runStartedAt: Date | null;
  },
): Promise<void> {
  await db.transaction(async (q) => {
    await q.query(
      "UPDATE payment_claims SET status = 'settled', settlement_tx = $4, updated_at = now() WHERE network = $1 AND payer = $2 AND nonce = $3",
      [...s.claimKey, s.tx],
    );
    await q.query(
      `INSERT INTO payment_receipts (receipt_key, resource, network, payer, nonce, amount, settlement_tx, expires_at, run_started_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT (receipt_key) DO NOTHING`,
      [
        s.receiptKey,
        s.resource,
        s.claimKey[0],
        s.payer,
        s.claimKey[2],
        s.amount,
        s.tx,
        s.expires,
        s.runStartedAt,
      ],
    );
  });
}

interface UnknownClaim {
  network: string;
  payer: string;
  nonce: string;
  resource: string;
  amount: string;
  settlement_tx: string | null;
  receipt_key: string | null;
  valid_before: string | null;
}

/** The claims whose settle outcome is unknown, oldest first (at most 1000 per run). */
export async function unknownClaims(db: Queryable): Promise<UnknownClaim[]> {
  return db.query<UnknownClaim & Record<string, unknown>>(
    `SELECT network, payer, nonce, resource, amount::text AS amount, settlement_tx, receipt_key, valid_before::text AS valid_before
       FROM payment_claims WHERE status = 'settling-unknown' ORDER BY updated_at LIMIT 1000`,
  );
}

/** A `settling-unknown` claim found used on chain, without a receipt to write: just `settled`. */
export async function settleUnknownClaim(db: Queryable, key: ClaimKey, tx: string | null): Promise<void> {
  await db.query(
    `UPDATE payment_claims SET status = 'settled', settlement_tx = COALESCE($4, settlement_tx), updated_at = now()
      WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling-unknown'`,
    [...key, tx],
  );
}

/** Drops a `settling-unknown` claim that can never be spent any more; true when dropped. */
export async function releaseUnknownClaim(db: Queryable, key: ClaimKey): Promise<boolean> {
  const gone = await db.query(
    `DELETE FROM payment_claims WHERE network = $1 AND payer = $2 AND nonce = $3 AND status = 'settling-unknown' RETURNING nonce`,
    [...key],
  );
  return gone.length > 0;
}

/** Answers are kept for the reuse window only: drops the bytes of expired receipts. */
export async function dropExpiredAnswers(db: Queryable, now: Date): Promise<void> {
  await db.query('UPDATE payment_receipts SET body = NULL WHERE body IS NOT NULL AND expires_at <= $1', [
    now,
  ]);
}
