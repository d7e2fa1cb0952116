/**
 * Answers served from a receipt row (`payment_receipts`): the stored bytes of a paid answer
 * (reused, step 5 of the paywall), an answer still owed by a settlement recorded without one
 * (computed once, under a lease, in a paid-run slot), and the first run's bytes stored with the
 * receipt (`runAndStore`, first writer wins).
 */
import type { PaidContext, PaidHandler } from '../paid/handler.js';
import { inPaidRunSlot, type Attempt, type PaidResponse, type Presented } from './attempt.js';
import { logger } from '../log.js';
import { findReceipt, leaseReceiptRun, storeReceiptAnswer } from '../store/payments.js';

/**
 * A receipt whose answer is being computed by another request is left to it for this long. A paid
 * answer takes milliseconds (one statement, O(distinct raters)); a request that died holding the
 * lease (its process killed) delays the buyer's next retry by at most this. Past it while the
 * holder still runs, a second run computes the same answer: the first stored bytes win.
 */
const ANSWER_LEASE_SECONDS = 5;

/** Step 5: the same header for the byte-identical resource, unexpired → the stored answer. */
export async function replayReceipt(a: Attempt, p: Presented): Promise<PaidResponse | null> {
  const receipt = await findReceipt(a.ctx.db, p.receiptKey, a.now);
  if (!receipt || receipt.resource !== a.resource) return null;
  return serveReceipt(a, p.receiptKey, receipt);
}

/** Serves the receipt of a settlement just recorded (journal, chain) to the buyer's retry. */
export async function serveOwed(a: Attempt, receiptKey: string): Promise<PaidResponse> {
  const receipt = await findReceipt(a.ctx.db, receiptKey, a.now);
  // Recorded a moment ago, yet not readable as this resource's: the money moved all the same.
  if (!receipt || receipt.resource !== a.resource) return a.spentPending('recording');
  return serveReceipt(a, receiptKey, receipt);
}

/**
 * The answer of a settled payment from its receipt: the stored bytes (`reused`), or, when the
 * paid run never stored them (the answer is still owed: the run failed after settling, or the
 * settlement was recorded later from the journal or the chain), computed now (`served_on_retry`).
 */
async function serveReceipt(
  a: Attempt,
  receiptKey: string,
  receipt: NonNullable<Awaited<ReturnType<typeof findReceipt>>>,
): Promise<PaidResponse> {
  const settlement = { transaction: receipt.settlement_tx, network: receipt.network, payer: receipt.payer };
  a.settled = settlement;
  // Stored bytes: replayed as they are, outside the paid-run slots (no handler runs: one
  // primary-key read, as cheap as a free answer, and refusing it would keep a paid answer from
  // its buyer for nothing).
  if (receipt.body !== null)
    return a.paidAnswer(receipt.body, Number(receipt.body_status ?? 200), settlement, 'reused');
  // The answer is owed: the handler runs, in a paid-run slot like a first run (taken before the
  // lease, so a refusal leaves the lease free for the retry).
  return inPaidRunSlot(a, async () => {
    // Compute it once, under a lease, so concurrent replays never run it twice; the others are
    // told the payment is settled and its answer on its way.
    const staleBefore = new Date(a.now.getTime() - ANSWER_LEASE_SECONDS * 1000);
    if (!(await leaseReceiptRun(a.ctx.db, receiptKey, a.now, staleBefore))) return a.spentPending('answer');
    const v = await a.handler.validate(a.ctx, a.raw);
    if (!v.ok) return a.refused(v.status, v.body);
    const out = await runAndStore(a.ctx, a.handler, v.input, receiptKey, receipt.settlement_tx);
    return a.paidAnswer(out.text, out.status, settlement, 'served_on_retry');
  });
}

/**
 * Runs the handler and stores its answer's bytes on the receipt (first writer wins: a concurrent
 * writer's stored bytes are served instead, so every reuse sees one answer).
 */
export async function runAndStore<I>(
  ctx: PaidContext,
  handler: PaidHandler<I>,
  input: I,
  receiptKey: string,
  tx: string,
): Promise<{ text: string; status: number }> {
  const out = await handler.run(ctx, input, { receipt: tx });
  const text = JSON.stringify(out.body);
  try {
    const earlier = await storeReceiptAnswer(ctx.db, receiptKey, text, out.status);
    if (earlier) return earlier;
  } catch (err) {
    logger('paywall').error({ err, tx }, 'could not store the paid answer');
  }
  return { text, status: out.status };
}
