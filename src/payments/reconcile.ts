/**
 * Reconciliation of payment claims left `settling-unknown` (a settle that timed out, a 5xx, a
 * `settlement_pending`): the chain is the authority. Each such claim is decided by `spentOnChain`
 * (authorization-state.ts, the same decision the paywall makes on a buyer's retry: the token's
 * `authorizationState(payer, nonce)` read through the RPC of that payment network, the chain
 * table's `rpcUrl`, e.g. RPC_URL_BASE; the token is the asset the challenges quote there):
 *
 *  - spent → the claim becomes `settled` (its settlement transaction found from the token's
 *    `AuthorizationUsed(authorizer, nonce)` log, or the one the facilitator had reported), and the
 *    receipt of the buyer's header is written: the buyer's retry with the SAME header for the same
 *    resource is then served from that receipt (answer computed once, no new charge).
 *  - spent, but no transaction visible (the provider refused the log range and the facilitator
 *    reported none) → kept `settling-unknown` and reported undecided: settled without a transaction
 *    there would be no receipt to serve the buyer from; the next run tries again.
 *  - the chain unreadable (no RPC for the network, an RPC error) → kept and reported undecided.
 *  - unused and `validBefore` passed → it can never be spent any more: the claim is released
 *    (nothing was charged; a retry with that header is refused as expired).
 *  - unused and still valid → left as it is (`pending`): a retry with the same header re-verifies
 *    and settles it, and the next run decides once the window has closed. Releasing it earlier could
 *    lose a payment whose settlement transaction is still on its way.
 *
 * The x402 facilitator API has no query for a past settlement (only verify/settle/supported), so
 * the facilitator is not asked. Also drops the stored answers of expired receipts (their bytes are
 * only kept for the reuse window). Runs periodically in `serve` (PAYMENT_RECONCILE_SECONDS) and
 * once with `repindex reconcile-payments`.
 */
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { chainAuthorizationReader, spentOnChain, type AuthorizationReader } from './authorization-state.js';
import { offeredNetworks } from './challenge.js';
import { replayJournal, type SettlementJournal } from './journal.js';
import { recordPayment } from '../metrics.js';
import {
  dropExpiredAnswers,
  recordSettlement,
  releaseUnknownClaim,
  reopenStaleClaims,
  settleUnknownClaim,
  unknownClaims,
  type ClaimKey,
} from '../store/payments.js';
import { logger } from '../log.js';

interface ReconcileReport {
  /** Settlements replayed from the journal into the database (their DB write had been lost). */
  journaled: number;
  /** Claims found stuck in `settling` past the settle timeout (examined with the unknown ones). */
  stale: number;
  examined: number;
  settled: number;
  released: number;
  pending: number;
  /** Claims that could not be decided now (no RPC for the network, RPC error), with why. */
  errors: string[];
}

interface ReconcileOptions {
  db: Database;
  config: Config;
  now?: () => Date;
  /** Defaults to {@link chainAuthorizationReader}. */
  readAuthorization?: AuthorizationReader;
  /** The settlement journal to replay first (settlements whose database write was lost). */
  journal?: SettlementJournal | null;
}

export async function reconcilePayments(opts: ReconcileOptions): Promise<ReconcileReport> {
  const now = (opts.now ?? (() => new Date()))();
  const read = opts.readAuthorization ?? chainAuthorizationReader(opts.config);
  const assets = new Map(offeredNetworks(opts.config).map((n) => [n.caip2, n.asset]));
  const report: ReconcileReport = {
    journaled: 0,
    stale: 0,
    examined: 0,
    settled: 0,
    released: 0,
    pending: 0,
    errors: [],
  };
  // 1. Settlements this process journaled but never recorded: the journal is the proof.
  if (opts.journal) {
    report.journaled = await replayJournal(opts.db, opts.journal, now, opts.config.receiptReuseSeconds);
    for (let i = 0; i < report.journaled; i++) recordPayment('reconciled');
    // Then keep it small: only settlements the database does not hold yet stay in it.
    const compacted = await opts.journal.compact().catch((err: unknown) => {
      logger('reconcile').warn(
        { err: (err as Error).message, journal: opts.journal?.path },
        'journal compaction failed',
      );
      return null;
    });
    if (compacted) {
      logger('reconcile').info({ journal: opts.journal.path, ...compacted }, 'settlement journal compacted');
    }
  }
  // 2. Claims stuck in `settling` past the settle timeout have an unknown outcome: decide them too.
  report.stale = await reopenStaleClaims(opts.db, opts.config.paymentSettleTimeoutSeconds);
  const claims = await unknownClaims(opts.db);
  for (const c of claims) {
    report.examined += 1;
    const key: ClaimKey = [c.network, c.payer, c.nonce];
    const spent = await spentOnChain(
      read,
      { network: c.network, asset: assets.get(c.network), payer: c.payer, nonce: c.nonce },
      c.settlement_tx,
    );
    if (spent.kind === 'unreadable') {
      report.errors.push(`${c.network} ${c.payer} ${c.nonce}: ${spent.error}`);
      continue;
    }
    if (spent.kind === 'spent_tx_unknown') {
      // Spent, but the provider did not show the transaction (a refused or too short log
      // range): marking it settled would leave a paid buyer with no receipt to be served from.
      // It stays `settling-unknown` (the buyer's retry answers payment_in_flight) and is tried
      // again by the next reconciliation; this run reports it as undecided.
      report.errors.push(
        `${c.network} ${c.payer} ${c.nonce}: spent on chain, but its settlement transaction was not found; kept for the next run`,
      );
      logger('reconcile').warn(
        { outcome: 'spent_tx_unknown', network: c.network },
        'unknown settlement spent on chain but its transaction was not found: kept, retried next run',
      );
      continue;
    }
    if (spent.kind === 'spent') {
      const { tx } = spent;
      if (c.receipt_key) {
        await recordSettlement(opts.db, {
          claimKey: key,
          receiptKey: c.receipt_key,
          resource: c.resource,
          amount: c.amount,
          tx,
          payer: c.payer,
          expires: new Date(now.getTime() + opts.config.receiptReuseSeconds * 1000),
          runStartedAt: null,
        });
      } else {
        await settleUnknownClaim(opts.db, key, tx);
      }
      recordPayment('reconciled');
      logger('reconcile').info(
        { outcome: 'reconciled', tx, network: c.network },
        'unknown settlement found spent on chain: recorded',
      );
      report.settled += 1;
      continue;
    }
    // Unspent: released once it can never be spent any more, else left pending.
    const expired =
      c.valid_before !== null && BigInt(c.valid_before) <= BigInt(Math.floor(now.getTime() / 1000));
    if (expired) {
      if (await releaseUnknownClaim(opts.db, key)) {
        recordPayment('released');
        report.released += 1;
      }
    } else {
      report.pending += 1;
    }
  }
  // Answers are kept for the reuse window only.
  await dropExpiredAnswers(opts.db, now);
  return report;
}

interface ReconcileScheduler {
  stop(): Promise<void>;
}

/** Runs {@link reconcilePayments} every `config.paymentReconcileSeconds` (0: never). */
export function startReconcileScheduler(
  opts: ReconcileOptions & { log?: (line: string) => void },
): ReconcileScheduler {
  const period = opts.config.paymentReconcileSeconds ?? 300;
  if (period <= 0 || !opts.config.treasuryAddress) return { stop: async () => undefined };
  const log = opts.log ?? ((l: string) => logger('reconcile').info(l));
  let running: Promise<void> | null = null;
  const tick = () => {
    if (running) return;
    running = reconcilePayments(opts)
      .then((r) => {
        if (r.journaled || r.settled || r.released || r.errors.length) {
          log(
            `[payments] ${r.journaled} journaled settlement(s) recorded; reconciled ${r.examined} unknown settlement(s) (${r.stale} stuck in settling): ${r.settled} settled, ${r.released} released, ${r.pending} pending${r.errors.length ? `; ${r.errors.length} undecided (${r.errors[0]})` : ''}`,
          );
        }
      })
      .catch((e: unknown) => log(`[payments] reconciliation failed: ${(e as Error).message}`))
      .finally(() => {
        running = null;
      });
  };
  const timer = setInterval(tick, period * 1000);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
