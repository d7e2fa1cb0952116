/**
 * The background run of the rater evidence: reads the whole index's pairs, first ratings and
 * verified payments (src/read/raters.ts: O(pairs + raters + verified documents), never the
 * ratings), computes cohorts, independent breadth, reciprocity and graph trust
 * (src/scoring/rater-evidence.ts, pure), and writes one row per rater and per notable
 * (rater, subject) pair (src/store/raters.ts, one transaction). Skipped when its inputs did not
 * move since the last run. Never inside an index pass: nothing here blocks indexing.
 */
import type { Database } from '../db/database.js';
import {
  encodeFacts,
  readEvidenceFingerprint,
  readEvidenceWorld,
  readLastRunFingerprint,
} from '../read/raters.js';
import {
  computeRaterEvidence,
  meanOfSum,
  pairKey,
  parseDecimal,
  RATER_WEIGHT_POLICY,
  type HistoryState,
  type WorldRater,
} from '../scoring/index.js';
import { writeEvidenceRun, type PairEvidenceWrite, type RaterEvidenceWrite } from '../store/raters.js';
import { microUsdOf, valuedTokenTable, type ValuedToken } from './valued-tokens.js';

export interface EvidenceRefreshOptions {
  knownRelayers: readonly string[];
  valuedTokens: readonly ValuedToken[];
  now?: () => Date;
  /** Run even when the inputs did not move. */
  force?: boolean;
}

export interface EvidenceRefreshReport {
  skipped: boolean;
  raters: number;
  pairs: number;
  cohorts: number;
  seeds: number;
  iterations: number;
  millis: number;
}

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const toNumber = (v: bigint) => Number(v > MAX_SAFE ? MAX_SAFE : v);

/** The history a lookup row tells (the gas payer when another address sent the transaction). */
function historyOf(
  state: string,
  from: string | null,
  rater: string,
): { history: HistoryState; gasPayer: string | null } {
  if (state === 'fetched') {
    if (from !== null && from.toLowerCase() !== rater.toLowerCase())
      return { history: 'relayed', gasPayer: from.toLowerCase() };
    return { history: 'fetched', gasPayer: null };
  }
  if (state === 'failed') return { history: 'failed', gasPayer: null };
  if (state === 'unavailable') return { history: 'unavailable', gasPayer: null };
  return { history: 'pending', gasPayer: null };
}

export async function refreshRaterEvidence(
  db: Database,
  o: EvidenceRefreshOptions,
): Promise<EvidenceRefreshReport> {
  const t0 = performance.now();
  const fingerprint = await readEvidenceFingerprint(db);
  if (!o.force && (await readLastRunFingerprint(db)) === fingerprint) {
    return {
      skipped: true,
      raters: 0,
      pairs: 0,
      cohorts: 0,
      seeds: 0,
      iterations: 0,
      millis: performance.now() - t0,
    };
  }
  const world = await readEvidenceWorld(db);
  const tokens = valuedTokenTable(o.valuedTokens);

  // Verified payments: per pair and per rater (ratings of any token; micro-USD of valued tokens).
  const pairPaid = new Map<string, { verified: number; micro: bigint }>();
  const raterPaid = new Map<string, { verified: number; micro: bigint }>();
  for (const p of world.payments) {
    const micro = microUsdOf(tokens, p.chain_id, p.token, p.amount) ?? 0n;
    for (const [map, key] of [
      [pairPaid, pairKey(p.rater, p.subject)],
      [raterPaid, p.rater],
    ] as const) {
      const acc = map.get(key) ?? { verified: 0, micro: 0n };
      acc.verified += 1;
      acc.micro += micro;
      map.set(key, acc);
    }
  }

  const pairs = world.pairs.map((p) => {
    const sum = parseDecimal(p.sum);
    if (sum === null) throw new RangeError(`not a decimal sum: ${JSON.stringify(p.sum)}`);
    return { rater: p.rater, subject: p.subject, voice: meanOfSum(sum, p.count) as number };
  });
  const raters: WorldRater[] = world.raters.map((r) => {
    const h = historyOf(r.state, r.tx_from, r.rater);
    const time = r.block_time === null ? null : new Date(r.block_time).getTime();
    return {
      rater: r.rater,
      firstAt: time !== null && Number.isFinite(time) ? time : null,
      history: h.history,
      nonce: h.history === 'fetched' ? r.nonce : null,
      gasPayer: h.gasPayer,
      paidMicroUsd: toNumber(raterPaid.get(r.rater)?.micro ?? 0n),
    };
  });
  const run = computeRaterEvidence({ pairs, raters, knownRelayers: new Set(o.knownRelayers) });

  const lookups = new Map(world.raters.map((r) => [r.rater, r]));
  const raterRows: RaterEvidenceWrite[] = [...run.raters.values()].map((e) => ({
    rater: e.rater,
    subjects: e.subjects,
    independentSubjects: e.independentSubjects,
    verifiedRatings: raterPaid.get(e.rater)?.verified ?? 0,
    paidMicroUsd: (raterPaid.get(e.rater)?.micro ?? 0n).toString(),
    seed: e.seed,
    cohortId: e.cohortId,
    cohortSize: e.cohortSize,
    cohortReasons: e.cohortReasons.join(','),
    trust: e.trust,
    graphTrust: e.graphTrust,
    facts: encodeFacts(e.rater, {
      state: lookups.get(e.rater)?.state ?? null,
      txFrom: lookups.get(e.rater)?.tx_from ?? null,
      nonce: lookups.get(e.rater)?.nonce ?? null,
      independentSubjects: e.independentSubjects,
      graphTrust: e.graphTrust,
      cohortId: e.cohortId,
      cohortSize: e.cohortSize,
      seed: e.seed,
    }),
  }));
  const pairRows = new Map<string, PairEvidenceWrite>();
  for (const [key, paid] of pairPaid) {
    const [rater, subject] = key.split('\u0000') as [string, string];
    pairRows.set(key, {
      rater,
      subject,
      verifiedRatings: paid.verified,
      paidMicroUsd: paid.micro.toString(),
      reciprocal: run.reciprocal.has(key),
    });
  }
  for (const key of run.reciprocal) {
    if (pairRows.has(key)) continue;
    const [rater, subject] = key.split('\u0000') as [string, string];
    pairRows.set(key, { rater, subject, verifiedRatings: 0, paidMicroUsd: '0', reciprocal: true });
  }
  const computedAt = (o.now ?? (() => new Date()))().toISOString();
  await writeEvidenceRun(db, raterRows, [...pairRows.values()], {
    computed_at: computedAt,
    fingerprint,
    rater_weight_policy: RATER_WEIGHT_POLICY,
    raters: raterRows.length,
    pairs: world.pairs.length,
    cohorts: run.cohorts,
    graph: run.graph,
  });
  return {
    skipped: false,
    raters: raterRows.length,
    pairs: pairRows.size,
    cohorts: run.cohorts,
    seeds: run.graph.seeds,
    iterations: run.graph.iterations,
    millis: performance.now() - t0,
  };
}
