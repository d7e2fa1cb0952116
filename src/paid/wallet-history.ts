/**
 * `GET /reputation/wallet/{wallet}/history?bucket=week|month` (default `week`; anything else 422):
 * the subject's score through time by ON-CHAIN block time (scoring.historyFromAggregates over the maintained per-day aggregates), with
 * `coverage.undated_reviews`, and beside it the served `final_score`, `confidence`, `caveats[]`
 * and `policy_version` of the same policy (with undated ratings the last point may sit below it).
 */
import type { PaidContext, PaidHandler, PaidResult, RawPaidRequest, Validated } from './handler.js';
import { readSubjectHistoryInputs } from '../read/subject-aggregates.js';
import {
  DEFAULT_HISTORY_BUCKET,
  HISTORY_BUCKETS,
  historyFromAggregates,
  undatedEligible,
  type HistoryBucket,
} from '../scoring/index.js';
import { invalidParam, rejectUnknownQuery, singleQuery, walletParam } from './common.js';
import { scoreFromInputs } from './wallet-profile.js';

interface WalletHistoryInput {
  wallet: string;
  bucket: HistoryBucket;
}

export const walletHistoryHandler: PaidHandler<WalletHistoryInput> = {
  tier: 'wallet-history',
  validate(_ctx: PaidContext, req: RawPaidRequest): Validated<WalletHistoryInput> {
    const w = walletParam(req);
    if (!w.ok) return w;
    const extra = rejectUnknownQuery(req, ['bucket']);
    if (extra) return extra;
    const b = singleQuery(req, 'bucket');
    if (!b.ok) return b;
    const bucket = b.value ?? DEFAULT_HISTORY_BUCKET;
    if (!(HISTORY_BUCKETS as readonly string[]).includes(bucket)) {
      return invalidParam(['query', 'bucket'], "Input should be 'week' or 'month'.", 'enum', bucket);
    }
    return { ok: true, input: { wallet: w.wallet.address, bucket: bucket as HistoryBucket } };
  },
  async run(ctx: PaidContext, input: WalletHistoryInput): Promise<PaidResult> {
    const { inputs, days } = await readSubjectHistoryInputs(ctx.db, input.wallet);
    const undated = undatedEligible(inputs.aggregates.raters, input.wallet);
    const history = historyFromAggregates(days, undated, input.wallet, input.bucket);
    const s = scoreFromInputs(inputs);
    return {
      status: 200,
      body: {
        ...history,
        final_score: s.final_score,
        total_reviews: s.total_reviews,
        distinct_raters: s.distinct_raters,
        confidence: s.confidence,
        caveats: s.caveats,
        policy_version: s.policy_version,
      },
    };
  },
};
