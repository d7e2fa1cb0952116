/**
 * `GET /reputation/wallet/{wallet}`: the decomposition of one subject wallet. Two tiers share it:
 * `wallet-lookup` (no `snapshot`, or `snapshot=false`) and `wallet-snapshot` (`snapshot=true`),
 * which additionally writes the durable receipt row (the only write of the service) and serves it
 * as `snapshot: {snapshot_id, inputs_digest, policy_version, created_at, computed_at}`.
 *
 * The tier decides the write, never the query alone: the lookup handler answers `snapshot=true`
 * with 422 (the paywall routes it to the dearer tier: `matchTier` picks the tier, src/paid/index.ts
 * `routeHandler` the tier's handler), and the snapshot handler requires `snapshot=true`. Any other `snapshot` value is 422.
 *
 * A wallet with no data is a 200 with null scores and the `no-score` caveat, never a 404.
 */
import type { PaidContext, PaidHandler, PaidResult, RawPaidRequest, Validated } from './handler.js';
import type { SubjectInputs } from '../read/subject.js';
import { readSubjectAggregateInputs, type SubjectAggregateInputs } from '../read/subject-aggregates.js';
import { inputsDigest } from '../read/snapshots.js';
import { insertSnapshot } from '../store/snapshots.js';
import {
  accountNonce,
  evidenceLookup,
  ORDERING_POLICY,
  RATER_WEIGHT_POLICY,
  scoreSubject,
  scoreSubjectFromAggregates,
  SHRINKAGE_K,
  round6,
  votingRaters,
  type SubjectContext,
  type SubjectScore,
} from '../scoring/index.js';
import { invalidParam, rejectUnknownQuery, singleQuery, walletParam } from './common.js';
import { raterEvidenceCounts } from './rater-evidence.js';

interface WalletProfileInput {
  /** Normalised wallet (EVM lower-case, Solana verbatim). */
  wallet: string;
  snapshot: boolean;
}

function contextOf(
  inputs: SubjectInputs | SubjectAggregateInputs,
  onVoters?: SubjectContext['onVoters'],
): SubjectContext {
  return {
    onVoters,
    prior: round6(inputs.prior),
    chainPriors: new Map([...inputs.chainPriors].map(([n, p]) => [n, round6(p)])),
    raterSubjectCounts: inputs.raterSubjectCounts,
    raterEvidence: evidenceLookup(inputs.raterFacts),
    degraded: inputs.degraded,
    facetIndexMeans: inputs.facetIndexMeans,
    identities: inputs.identities,
  };
}

/**
 * The scored composition of a subject (shared by the wallet routes): from the maintained
 * aggregates (what the routes serve, O(distinct raters)) or from raw rows (the reference).
 */
export function scoreFromInputs(
  inputs: SubjectInputs | SubjectAggregateInputs,
  onVoters?: SubjectContext['onVoters'],
): SubjectScore {
  const context = contextOf(inputs, onVoters);
  if ('aggregates' in inputs) return scoreSubjectFromAggregates(inputs.wallet, inputs.aggregates, context);
  return scoreSubject(inputs.wallet, inputs.ratings, context);
}

/**
 * The served body of the wallet profile (without the snapshot block). `onVoters` receives the
 * raters of the voices the weighted score was weighed from (one per distinct voting rater).
 */
export function walletProfileBody(
  inputs: SubjectInputs | SubjectAggregateInputs,
  onVoters?: SubjectContext['onVoters'],
): Record<string, unknown> {
  const s = scoreFromInputs(inputs, onVoters);
  return {
    ...s,
    first_rating_at: s.activity.first_rating_at,
    last_rating_at: s.activity.last_rating_at,
    ordering_policy: ORDERING_POLICY,
    shrinkage: { k: SHRINKAGE_K, prior: round6(inputs.prior) },
  };
}

function makeValidate(tier: 'wallet-lookup' | 'wallet-snapshot') {
  return (_ctx: PaidContext, req: RawPaidRequest): Validated<WalletProfileInput> => {
    const w = walletParam(req);
    if (!w.ok) return w;
    const extra = rejectUnknownQuery(req, ['snapshot']);
    if (extra) return extra;
    const s = singleQuery(req, 'snapshot');
    if (!s.ok) return s;
    if (s.value !== undefined && s.value !== 'true' && s.value !== 'false') {
      return invalidParam(['query', 'snapshot'], 'Input should be true or false.', 'bool_parsing', s.value);
    }
    const snapshot = s.value === 'true';
    if (tier === 'wallet-lookup' && snapshot) {
      return invalidParam(
        ['query', 'snapshot'],
        'snapshot=true is the wallet-snapshot tier.',
        'value_error',
        s.value,
      );
    }
    if (tier === 'wallet-snapshot' && !snapshot) {
      return invalidParam(
        ['query', 'snapshot'],
        'The wallet-snapshot tier answers snapshot=true only.',
        'value_error',
        s.value,
      );
    }
    return { ok: true, input: { wallet: w.wallet.address, snapshot } };
  };
}

async function run(
  ctx: PaidContext,
  input: WalletProfileInput,
  payment: { receipt: string | null },
): Promise<PaidResult> {
  // One statement: the score's inputs and, beside them, the evidence counts (documents that match
  // their commitment, verified payments), which move no score and are not part of inputs_digest.
  const inputs = await readSubjectAggregateInputs(ctx.db, input.wallet);
  // The voting raters are the voices the score already weighed (the same set as `votingRaters`,
  // sorted): taken from there instead of a second pass over thousands of (agent, rater) rows.
  const weighed: { voters?: readonly string[] } = {};
  const scored = walletProfileBody(inputs, (raters) => {
    weighed.voters = raters;
  });
  const body: Record<string, unknown> = {
    ...scored,
    evidence: { ...inputs.evidence, moves_score: false },
    // What weighted_score was weighed by: counts over the wallet's raters (docs/API.md).
    rater_evidence: raterEvidenceCounts(
      weighed.voters ?? votingRaters(inputs.wallet, inputs.aggregates.raters),
      inputs.raterFacts,
      inputs.evidenceComputedAt,
    ),
  };
  if (!input.snapshot) return { status: 200, body };
  const policyVersion = String(body.policy_version);
  const digest = snapshotDigest(inputs, policyVersion);
  const row = await insertSnapshot(ctx.db, {
    wallet: input.wallet,
    inputsDigest: digest,
    policyVersion,
    paymentReceipt: payment.receipt,
    response: body,
    createdAt: ctx.now(),
  });
  return {
    status: 200,
    body: {
      ...body,
      snapshot: {
        snapshot_id: row.snapshot_id,
        inputs_digest: row.inputs_digest,
        policy_version: row.policy_version,
        created_at: row.created_at,
        computed_at: row.created_at,
      },
    },
  };
}

/** `inputs_digest` of a subject answer (docs: src/read/snapshots.ts, docs/API.md). */
export function snapshotDigest(inputs: SubjectAggregateInputs, policyVersion: string): string {
  const networks = new Set([
    ...inputs.aggregates.raters.map((r) => r.network),
    ...inputs.identities.map((i) => i.network),
  ]);
  const tags = new Set(inputs.aggregates.facets.map((f) => f.tag1));
  return inputsDigest({
    policyVersion,
    raterWeightPolicy: RATER_WEIGHT_POLICY,
    prior: round6(inputs.prior),
    chainPriors: [...inputs.chainPriors]
      .filter(([n]) => networks.has(n))
      .map(([n, p]): [string, number | null] => [n, round6(p)]),
    checkpoints: inputs.checkpoints,
    agentRaters: inputs.aggregates.raters,
    facets: inputs.aggregates.facets,
    raterSubjects: inputs.raterSubjectCounts,
    raterEvidence: [...inputs.raterFacts.values()].map((f) => [
      f.rater,
      accountNonce(f),
      f.independentSubjects,
      f.graphTrust,
      f.cohortId,
      String(f.paidMicroUsd),
      f.reciprocal ? 1 : 0,
    ]),
    facetIndexMeans: [...inputs.facetIndexMeans].filter(([t]) => tags.has(t)),
  });
}

export const walletLookupHandler: PaidHandler<WalletProfileInput> = {
  tier: 'wallet-lookup',
  validate: makeValidate('wallet-lookup'),
  run,
};

export const walletSnapshotHandler: PaidHandler<WalletProfileInput> = {
  tier: 'wallet-snapshot',
  validate: makeValidate('wallet-snapshot'),
  run,
};
