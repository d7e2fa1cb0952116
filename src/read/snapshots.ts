/**
 * The durable receipt of `?snapshot=true`: the ONLY write the service performs on request.
 *
 * `inputs_digest` (version 3) = sha256 (hex) of a canonical serialisation of what the answer was
 * computed from: the maintained aggregates it read, the rater evidence its weighting read and the
 * per-chain checkpoints they stood at:
 *   JSON.stringify({
 *     digest_version: 3, policy_version, rater_weight_policy, prior,
 *     chain_priors: [[network, prior], …],
 *     checkpoints: [[network, last_scanned_block], …],
 *     agent_raters: [[network, agent_id, rater, live_count, live_sum, revoked_count, out_of_domain_count], …],
 *     facets: [[tag1, eligible_count, eligible_sum, distinct_raters, self_count, revoked_count, out_of_domain_count], …],
 *     rater_subjects: [[rater, s], …],
 *     rater_evidence: [[rater, nonce, independent_subjects, graph_trust, cohort_id, paid_micro_usd, reciprocal], …],
 *     facet_index_means: [[tag1, mean], …]
 *   })
 * every list sorted by its columns in order (strings in code-unit order, numbers numerically),
 * sums as exact decimal strings, counts as integers. Only those fields, in that order: the same
 * index state gives the same digest whatever order the rows were read or ingested in, and anyone
 * holding the index can recompute it (src/read/subject-aggregates.ts reads exactly these rows).
 */
import { createHash } from 'node:crypto';
import type { SnapshotRow } from '../store/snapshots.js';
import type { Queryable } from '../db/database.js';
import { formatDecimal, parseDecimal } from '../scoring/index.js';

const DIGEST_VERSION = 3;

interface DigestInputs {
  policyVersion: string;
  raterWeightPolicy: string;
  prior: number | null;
  chainPriors: ReadonlyMap<string, number | null> | readonly [string, number | null][];
  checkpoints: readonly { network: string; last_scanned_block: number | null }[];
  agentRaters: readonly {
    network: string;
    agentId: string;
    rater: string;
    liveCount: number;
    liveSum: string;
    revokedCount: number;
    oodCount: number;
  }[];
  facets: readonly {
    tag1: string;
    eligibleCount: number;
    eligibleSum: string;
    distinctRaters: number;
    selfCount: number;
    revokedCount: number;
    oodCount: number;
  }[];
  raterSubjects: ReadonlyMap<string, number> | readonly [string, number][];
  /** Per rater of the subject: [rater, nonce, independent subjects, graph trust, cohort id, paid micro-USD, reciprocal 0/1]. */
  raterEvidence: readonly Cell[][];
  facetIndexMeans: ReadonlyMap<string, number | null> | readonly [string, number | null][];
}

type Cell = string | number | null;

function compareCells(a: readonly Cell[], b: readonly Cell[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x === null) return -1;
    if (y === null) return 1;
    if (typeof x === 'number' && typeof y === 'number') return x - y;
    const sx = String(x);
    const sy = String(y);
    return sx < sy ? -1 : sx > sy ? 1 : 0;
  }
  return a.length - b.length;
}

const sorted = (rows: Cell[][]) => rows.sort(compareCells);
/** Exact sums in one spelling ("160.50" and "160.5" are the same input). */
const canon = (sum: string) => {
  const d = parseDecimal(sum);
  return d === null ? sum : formatDecimal(d);
};

/** The canonical serialisation hashed into `inputs_digest`. */
function canonicalInputs(inputs: DigestInputs): string {
  return JSON.stringify({
    digest_version: DIGEST_VERSION,
    policy_version: inputs.policyVersion,
    rater_weight_policy: inputs.raterWeightPolicy,
    prior: inputs.prior,
    chain_priors: sorted([...inputs.chainPriors].map(([n, p]) => [n, p])),
    checkpoints: sorted(inputs.checkpoints.map((c) => [c.network, c.last_scanned_block])),
    agent_raters: sorted(
      inputs.agentRaters.map((r) => [
        r.network,
        r.agentId,
        r.rater,
        r.liveCount,
        canon(r.liveSum),
        r.revokedCount,
        r.oodCount,
      ]),
    ),
    facets: sorted(
      inputs.facets.map((f) => [
        f.tag1,
        f.eligibleCount,
        canon(f.eligibleSum),
        f.distinctRaters,
        f.selfCount,
        f.revokedCount,
        f.oodCount,
      ]),
    ),
    rater_subjects: sorted([...inputs.raterSubjects].map(([r, n]) => [r, n])),
    rater_evidence: sorted(inputs.raterEvidence.map((row) => [...row])),
    facet_index_means: sorted([...inputs.facetIndexMeans].map(([t, m]) => [t, m])),
  });
}

export function inputsDigest(inputs: DigestInputs): string {
  return createHash('sha256').update(canonicalInputs(inputs), 'utf8').digest('hex');
}

/** One receipt row by id, or null. */
export async function readSnapshot(db: Queryable, snapshotId: string): Promise<SnapshotRow | null> {
  const [r] = await db.query<Record<string, unknown>>(
    `SELECT snapshot_id, wallet, inputs_digest, policy_version, payment_receipt, response, created_at
       FROM snapshot_receipts WHERE snapshot_id = $1`,
    [snapshotId],
  );
  if (!r) return null;
  const created = r.created_at;
  return {
    snapshot_id: String(r.snapshot_id),
    wallet: String(r.wallet),
    inputs_digest: String(r.inputs_digest),
    policy_version: String(r.policy_version),
    payment_receipt: (r.payment_receipt as string | null) ?? null,
    response: r.response,
    created_at: created instanceof Date ? created.toISOString() : String(created),
  };
}
