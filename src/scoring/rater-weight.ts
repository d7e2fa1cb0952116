/**
 * `one-voice-per-counterparty+bounded-trust@3`: the weight of each voice on one subject from its
 * rater's evidence (docs/POLICIES.md, "Rater weighting"). Pure: the evidence is read per rater by
 * src/read/ (computed in the background by src/raters/), one row per distinct rater.
 *
 *   base    = max(history · breadth · graph, payment lift)     (reciprocal voices × 0.1)
 *   cohort  : each member's voice ÷ the members voicing on the subject (a cohort is one voice;
 *             proven and unproven members counted apart)
 *   unproven: fresh or unknown history and no payment lift; together at most 3 % of the proven
 *             weight when the subject has any
 *   weighted_score = Σ w · voice / Σ w, six decimals
 *
 * Every factor is positive, so `weighted_score` is defined wherever a voice (and so `final_score`) is.
 */
import { normalizeAddress } from './address.js';
import type { DecimalSum } from './decimal.js';
import { round6 } from './display.js';
import { RATER_EVIDENCE_POLICY } from './policies.js';
import { raterWeight, type RaterSubjectCounts } from './score.js';

/** What the weight reads of one rater (and of its pair with the rated subject). */
export interface VoiceEvidence {
  /** Nonce of its first rating transaction (sent by the rater); null: not known. */
  nonce: number | null;
  /** Subjects rated by someone outside its cohort; null: not computed yet (the live s is used). */
  independentSubjects: number | null;
  /** 0..1, null: no graph trust in the index (no seed yet): a neutral factor. */
  graphTrust: number | null;
  cohortId: string | null;
  /** Verified payments to THIS subject in valued tokens (micro-USD). */
  paidMicroUsd: number;
  /** The rated subject rated this rater back. */
  reciprocal: boolean;
}

/** A rater with no evidence row yet (a new rater between two evidence runs). */
export const NO_EVIDENCE: Readonly<VoiceEvidence> = Object.freeze({
  nonce: null,
  independentSubjects: null,
  graphTrust: null,
  cohortId: null,
  paidMicroUsd: 0,
  reciprocal: false,
});

/**
 * Each rater's evidence by its (normalized) address; a `ReadonlyMap` is one. The weight reads the
 * answer's fields before it asks again, so a lookup may hand out one object it refills per call.
 */
export interface RaterEvidenceLookup {
  get(rater: string): Readonly<VoiceEvidence> | undefined;
}

/** Where the lookup of a rater's first rating transaction stands (`null`: no row yet). */
export type AccountHistoryState = 'queued' | 'leased' | 'retry' | 'fetched' | 'failed' | 'unavailable' | null;

/** The stored facts of one rater as read back (one row per rater, and its pair with the subject). */
export interface RaterFacts {
  rater: string;
  historyState: AccountHistoryState;
  /** Sender and nonce of the first rating transaction, once fetched. */
  txFrom: string | null;
  txNonce: number | null;
  /** From the background run; null while the rater has no evidence row yet. */
  independentSubjects: number | null;
  graphTrust: number | null;
  cohortId: string | null;
  cohortSize: number;
  seed: boolean;
  /** Verified payments to the rated subject: ratings (any token) and valued micro-USD. */
  verifiedRatings: number;
  paidMicroUsd: number;
  reciprocal: boolean;
}

/** The nonce that tells the rater's own account history: only when the rater sent the transaction. */
export function accountNonce(
  f: Pick<RaterFacts, 'rater' | 'historyState' | 'txFrom' | 'txNonce'>,
): number | null {
  if (f.historyState !== 'fetched' || f.txNonce === null || f.txFrom === null) return null;
  // the same string (what the paid reads give for a self-sent transaction) skips two lower-casings
  return f.txFrom === f.rater || f.txFrom.toLowerCase() === f.rater.toLowerCase() ? f.txNonce : null;
}

/**
 * The weight's lookup from the stored facts of a subject's raters: each rater's evidence read when
 * the weight asks for it (once per voice), not a copy of every rater's facts up front, into ONE
 * object refilled per call (a subject has thousands of voices; see `RaterEvidenceLookup`).
 */
export function evidenceLookup(facts: ReadonlyMap<string, RaterFacts>): RaterEvidenceLookup {
  const ev: VoiceEvidence = { ...NO_EVIDENCE };
  return {
    get(rater: string): Readonly<VoiceEvidence> | undefined {
      const f = facts.get(rater);
      if (f === undefined) return undefined;
      ev.nonce = accountNonce(f);
      ev.independentSubjects = f.independentSubjects;
      ev.graphTrust = f.graphTrust;
      ev.cohortId = f.cohortId;
      ev.paidMicroUsd = f.paidMicroUsd;
      ev.reciprocal = f.reciprocal;
      return ev;
    },
  };
}

/** The account-history class of a rater, as served (`nonce`: its `accountNonce`, when known). */
export function historyClass(
  f: Pick<RaterFacts, 'rater' | 'historyState' | 'txFrom' | 'txNonce'>,
  nonce: number | null = accountNonce(f),
): 'fresh' | 'established' | 'relayed' | 'pending' | 'unavailable' {
  if (nonce !== null) return isFresh(nonce) ? 'fresh' : 'established';
  if (f.historyState === 'fetched') return 'relayed';
  if (f.historyState === 'unavailable' || f.historyState === 'failed') return 'unavailable';
  return 'pending';
}

/** How one voice was weighed (served per rating, so the weighted score can be recomputed). */
export interface VoiceWeight {
  rater: string;
  /** Mean of the rater's eligible values on the subject (its voice). */
  voice: number;
  history_factor: number;
  breadth_factor: number;
  graph_factor: number;
  payment_lift: number;
  reciprocal: boolean;
  /** Members of its cohort voicing on the subject, of its own proof (proven or not); 1 when none. */
  cohort_members: number;
  proven: boolean;
  /** The scale the unproven bound applied (1 when none). */
  unproven_scale: number;
  /** The weight used in `weighted_score`. */
  weight: number;
}

const P = RATER_EVIDENCE_POLICY;

/** The account-history factor of a nonce (null: unknown). */
export function historyFactor(nonce: number | null): number {
  if (nonce === null || !Number.isFinite(nonce) || nonce < 0) return P.history.unknown;
  for (const [lowest, factor] of P.history.tiers) if (nonce >= lowest) return factor;
  return P.history.fresh;
}

/** A nonce at or below `freshMaxNonce`: a fresh wallet. */
export const isFresh = (nonce: number | null) => nonce !== null && nonce <= P.history.freshMaxNonce;

/** The payment lift (0..1) of verified payments to the rated subject: log scale from dust to full. */
export function paymentLift(microUsd: number): number {
  if (!(microUsd > P.payment.dustMicroUsd)) return 0;
  const lift =
    Math.log10(microUsd / P.payment.dustMicroUsd) /
    Math.log10(P.payment.fullMicroUsd / P.payment.dustMicroUsd);
  return Math.min(1, lift);
}

/** A proven voice: its rater's history is past fresh, or it carries a payment lift. */
export function isProven(ev: Pick<VoiceEvidence, 'nonce' | 'paidMicroUsd'>): boolean {
  return paymentLift(ev.paidMicroUsd) > 0 || (ev.nonce !== null && !isFresh(ev.nonce));
}

/** The graph factor: floor + (1 − floor) · graph trust; 1 when the index has no graph trust. */
export function graphFactor(graphTrust: number | null): number {
  if (graphTrust === null) return 1;
  const g = Math.min(1, Math.max(0, graphTrust));
  return P.graph.floor + (1 - P.graph.floor) * g;
}

function lookup<T>(m: ReadonlyMap<string, T> | Readonly<Record<string, T>>, key: string): T | undefined {
  if (m instanceof Map) return m.get(key) as T | undefined;
  const rec = m as Readonly<Record<string, T>>;
  return Object.hasOwn(rec, key) ? rec[key] : undefined;
}

/**
 * The weights of a subject's voices as columns, one entry per voice sorted by rater (what the rows
 * of `voiceWeights` are made of): a subject with thousands of voices gets its weighted score
 * without an object per voice. See `voiceWeights` for the arguments.
 */
export interface VoiceTable {
  raters: string[];
  voice: Float64Array;
  history: Float64Array;
  breadth: Float64Array;
  graph: Float64Array;
  lift: Float64Array;
  reciprocal: Uint8Array;
  members: Float64Array;
  proven: Uint8Array;
  unprovenScale: Float64Array;
  weight: Float64Array;
}

export function voiceTable(
  byRater: ReadonlyMap<string, DecimalSum>,
  subjectCounts: RaterSubjectCounts,
  evidence: RaterEvidenceLookup | undefined,
): VoiceTable {
  // The default sort orders strings by UTF-16 code units, as `<` does (no comparator call per pair).
  const keys = [...byRater.keys()].sort();
  const size = keys.length;
  const t: VoiceTable = {
    raters: [],
    voice: new Float64Array(size),
    history: new Float64Array(size),
    breadth: new Float64Array(size),
    graph: new Float64Array(size),
    lift: new Float64Array(size),
    reciprocal: new Uint8Array(size),
    members: new Float64Array(size).fill(1),
    proven: new Uint8Array(size),
    unprovenScale: new Float64Array(size).fill(1),
    weight: new Float64Array(size),
  };
  /** Each voice's cohort id, in the table's order (one lookup of the evidence per voice). */
  const cohorts: (string | null)[] = [];
  let any = false;
  let n = 0;
  for (const rater of keys) {
    const acc = byRater.get(rater)!;
    if (acc.count <= 0) continue;
    const ev = evidence?.get(rater) ?? NO_EVIDENCE;
    const cohort = ev.cohortId ?? null;
    cohorts.push(cohort);
    if (cohort !== null) any = true;
    const s = ev.independentSubjects ?? lookup(subjectCounts, rater) ?? 1;
    const history = historyFactor(ev.nonce);
    const breadth = raterWeight(Math.max(1, s));
    const graph = graphFactor(ev.graphTrust);
    const lift = paymentLift(ev.paidMicroUsd);
    let base = Math.max(history * breadth * graph, lift);
    if (ev.reciprocal) base *= P.reciprocalFactor;
    t.raters.push(rater);
    t.voice[n] = acc.mean() as number;
    t.history[n] = history;
    t.breadth[n] = breadth;
    t.graph[n] = graph;
    t.lift[n] = lift;
    t.reciprocal[n] = ev.reciprocal ? 1 : 0;
    t.proven[n] = isProven(ev) ? 1 : 0;
    t.weight[n] = base;
    n++;
  }
  // A cohort is one voice: its members share it, proven members apart from unproven ones (which
  // the unproven bound holds anyway), so wallets with nothing to show cannot thin a proven voice
  // out by joining its window. (Nothing to share when no voice has a cohort.)
  if (any) {
    const keyOf = (i: number) => {
      const c = cohorts[i]!;
      return c === null ? null : `${t.proven[i] ? 'p' : 'u'}\u0000${c}`;
    };
    const members = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const k = keyOf(i);
      if (k !== null) members.set(k, (members.get(k) ?? 0) + 1);
    }
    for (let i = 0; i < n; i++) {
      const k = keyOf(i);
      const m = k === null ? 1 : members.get(k)!;
      t.members[i] = m;
      t.weight[i]! /= m;
    }
  }
  // Unproven voices together weigh at most `unprovenShare` of the proven weight (when there is any).
  let proven = 0;
  let unproven = 0;
  for (let i = 0; i < n; i++) {
    if (t.proven[i]) proven += t.weight[i]!;
    else unproven += t.weight[i]!;
  }
  const cap = P.unprovenShare * proven;
  if (proven > 0 && unproven > cap) {
    const scale = cap / unproven;
    for (let i = 0; i < n; i++) {
      if (t.proven[i]) continue;
      t.unprovenScale[i] = scale;
      t.weight[i]! *= scale;
    }
  }
  return n === size
    ? t
    : {
        ...t,
        voice: t.voice.subarray(0, n),
        history: t.history.subarray(0, n),
        breadth: t.breadth.subarray(0, n),
        graph: t.graph.subarray(0, n),
        lift: t.lift.subarray(0, n),
        reciprocal: t.reciprocal.subarray(0, n),
        members: t.members.subarray(0, n),
        proven: t.proven.subarray(0, n),
        unprovenScale: t.unprovenScale.subarray(0, n),
        weight: t.weight.subarray(0, n),
      };
}

/** The rows of a voice table (one object per voice, in its order). */
export function voiceRows(t: VoiceTable): VoiceWeight[] {
  return t.raters.map((rater, i) => ({
    rater,
    voice: t.voice[i]!,
    history_factor: t.history[i]!,
    breadth_factor: t.breadth[i]!,
    graph_factor: t.graph[i]!,
    payment_lift: t.lift[i]!,
    reciprocal: t.reciprocal[i] === 1,
    cohort_members: t.members[i]!,
    proven: t.proven[i] === 1,
    unproven_scale: t.unprovenScale[i]!,
    weight: t.weight[i]!,
  }));
}

/**
 * The weight of every voice of one subject, sorted by rater. `byRater` holds the exact sums of each
 * rater's eligible values (keys normalized), `subjectCounts` the live s of each rater (the breadth
 * while no evidence row says otherwise), `evidence` one row per rater (missing: NO_EVIDENCE).
 */
export function voiceWeights(
  byRater: ReadonlyMap<string, DecimalSum>,
  subjectCounts: RaterSubjectCounts,
  evidence: RaterEvidenceLookup | undefined,
): VoiceWeight[] {
  return voiceRows(voiceTable(byRater, subjectCounts, evidence));
}

/** The weighted mean of the voices in their (rater) order, six decimals; null without voices. */
export function weightedFromWeights(weights: readonly VoiceWeight[]): number | null {
  if (weights.length === 0) return null;
  let num = 0;
  let den = 0;
  for (const v of weights) {
    num += v.weight * v.voice;
    den += v.weight;
  }
  return round6(num / den);
}

/** `weightedFromWeights` of a voice table's rows, read from its columns (the same sums, in order). */
export function weightedFromTable(t: VoiceTable): number | null {
  if (t.raters.length === 0) return null;
  let num = 0;
  let den = 0;
  for (let i = 0; i < t.raters.length; i++) {
    num += t.weight[i]! * t.voice[i]!;
    den += t.weight[i]!;
  }
  return round6(num / den);
}

/** The distinct raters with a voice on a subject, from its maintained (agent, rater) rows. */
export function votingRaters(
  subjectWallet: string,
  raters: readonly { rater: string; liveCount: number }[],
): string[] {
  const subject = normalizeAddress(subjectWallet);
  const out = new Set<string>();
  for (const r of raters) {
    if (r.liveCount <= 0) continue;
    const rater = normalizeAddress(r.rater);
    if (rater !== subject) out.add(rater);
  }
  return [...out];
}
