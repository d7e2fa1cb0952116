/**
 * Rater evidence computed over the whole index (pure: no I/O, no clock): what the background job
 * (src/raters/) reads from the maintained aggregates, the fetched transactions and the verified
 * payments, turned into per-rater facts the paid answers read back one row per rater:
 *
 *  - cohorts: raters that act as one: their first ratings fall in one short window and they rate
 *    the same few subjects with near-identical values, or their rating transactions were sent by
 *    the same gas payer (not a known relayer), or their owners rate each other in a ring;
 *  - independent breadth: the subjects a rater rated that someone outside its own cohort rated
 *    too (a decoy only its cohort rates adds nothing);
 *  - reciprocity: the rated subject, as a rater, rated the rater back;
 *  - graph trust: personalized PageRank over the rater→subject graph (raters with an account
 *    history past fresh or a payment above dust; cohorts collapsed into one node), restarting at
 *    the raters whose verified payments reach the seed amount.
 *
 * Parameters: RATER_EVIDENCE_POLICY (policies.ts), documented in docs/POLICIES.md.
 */
import { round6 } from './display.js';
import { RATER_EVIDENCE_POLICY } from './policies.js';

/** One (rater, subject) pair with an eligible rating: the rater's voice on that subject. */
export interface WorldPair {
  rater: string;
  subject: string;
  /** Mean of the rater's eligible values on the subject. */
  voice: number;
}

/** Where a rater's account history stands (the nonce of its first rating transaction). */
export type HistoryState = 'fetched' | 'pending' | 'failed' | 'relayed' | 'unavailable';

export interface WorldRater {
  rater: string;
  /** Block time (ms) of its first rating in the index, any state; null when undated. */
  firstAt: number | null;
  history: HistoryState;
  /** Nonce of its first rating transaction when `history` is `fetched` (sent by the rater itself). */
  nonce: number | null;
  /** The sender of its first rating transaction when that is not the rater (a relayer, a gas payer). */
  gasPayer: string | null;
  /** Verified payments in valued tokens, every subject together (micro-USD). */
  paidMicroUsd: number;
}

export interface EvidenceWorld {
  pairs: readonly WorldPair[];
  raters: readonly WorldRater[];
  /** Lower-cased addresses of known relayers (never a cohort link). */
  knownRelayers?: ReadonlySet<string>;
}

export type CohortReason = 'first_rating_window' | 'gas_payer' | 'reciprocal_ring';

export interface ComputedRaterEvidence {
  rater: string;
  /** Distinct subjects with an eligible rating (s). */
  subjects: number;
  /** Of those, the subjects someone outside the rater's cohort rated too. */
  independentSubjects: number;
  /** The cohort's id (its lowest member), or null. */
  cohortId: string | null;
  cohortSize: number;
  cohortReasons: CohortReason[];
  /** Raw personalized PageRank of the rater's node (its cohort's), 0 without seeds. */
  trust: number;
  /** 0..1, six decimals: trust per edge against the seeds' median, on a log scale; null: no seed. */
  graphTrust: number | null;
  seed: boolean;
}

export interface EvidenceRun {
  raters: Map<string, ComputedRaterEvidence>;
  /** `rater\u0000subject` of every reciprocal pair. */
  reciprocal: Set<string>;
  graph: { nodes: number; edges: number; seeds: number; iterations: number; seedMedianTrust: number | null };
  cohorts: number;
}

export const pairKey = (rater: string, subject: string) => `${rater}\u0000${subject}`;

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Union-find over indexes, with the link reasons of each root. */
class Groups {
  private parent: Int32Array;
  readonly reasons = new Map<number, Set<CohortReason>>();
  constructor(n: number) {
    this.parent = new Int32Array(n);
    for (let i = 0; i < n; i++) this.parent[i] = i;
  }
  find(i: number): number {
    let r = i;
    while (this.parent[r] !== r) r = this.parent[r]!;
    while (this.parent[i] !== r) {
      const next = this.parent[i]!;
      this.parent[i] = r;
      i = next;
    }
    return r;
  }
  union(a: number, b: number, reason: CohortReason): void {
    const ra = this.find(a);
    const rb = this.find(b);
    const root = Math.min(ra, rb);
    const other = Math.max(ra, rb);
    if (ra !== rb) this.parent[other] = root;
    const set = this.reasons.get(root) ?? new Set<CohortReason>();
    for (const r of this.reasons.get(other) ?? []) set.add(r);
    if (ra !== rb) this.reasons.delete(other);
    set.add(reason);
    this.reasons.set(root, set);
  }
}

/** The whole computation, deterministic (everything is iterated in sorted order). */
export function computeRaterEvidence(world: EvidenceWorld): EvidenceRun {
  const P = RATER_EVIDENCE_POLICY;
  const relayers = world.knownRelayers ?? new Set<string>();
  const raterInfo = new Map(world.raters.map((r) => [r.rater, r]));
  // Every rater with a pair or a row, sorted: its index is its id below.
  const names = [...new Set([...world.pairs.map((p) => p.rater), ...world.raters.map((r) => r.rater)])].sort(
    byString,
  );
  const idOf = new Map(names.map((n, i) => [n, i]));
  const voices = names.map(() => new Map<string, number>());
  const ratersOf = new Map<string, number[]>();
  for (const p of world.pairs) {
    const i = idOf.get(p.rater)!;
    voices[i]!.set(p.subject, p.voice);
    let list = ratersOf.get(p.subject);
    if (!list) ratersOf.set(p.subject, (list = []));
    list.push(i);
  }
  const groups = new Groups(names.length);

  // 1. First-rating windows: same few subjects, near-identical voices, first ratings close.
  const bySignature = new Map<string, number[]>();
  for (let i = 0; i < names.length; i++) {
    const v = voices[i]!;
    const first = raterInfo.get(names[i]!)?.firstAt ?? null;
    if (v.size === 0 || v.size > P.cohort.maxSubjects || first === null) continue;
    const sig = [...v.keys()].sort(byString).join('\u0001');
    let list = bySignature.get(sig);
    if (!list) bySignature.set(sig, (list = []));
    list.push(i);
  }
  const windowMs = P.cohort.windowSeconds * 1000;
  const firstOf = (i: number) => raterInfo.get(names[i]!)!.firstAt!;
  for (const sig of [...bySignature.keys()].sort(byString)) {
    const list = bySignature.get(sig)!;
    if (list.length < 2) continue;
    const span = voices[list[0]!]!.size >= P.cohort.windowlessSubjects ? Infinity : windowMs;
    list.sort((a, b) => firstOf(a) - firstOf(b) || a - b);
    const taken = new Uint8Array(list.length);
    for (let x = 0; x < list.length; x++) {
      if (taken[x]) continue;
      const anchor = list[x]!;
      const t0 = firstOf(anchor);
      const va = voices[anchor]!;
      for (let y = x + 1; y < list.length && firstOf(list[y]!) - t0 <= span; y++) {
        if (taken[y]) continue;
        const vb = voices[list[y]!]!;
        let close = true;
        for (const [subject, value] of va) {
          if (Math.abs(value - vb.get(subject)!) > P.cohort.valueTolerance) {
            close = false;
            break;
          }
        }
        if (!close) continue;
        taken[y] = 1;
        groups.union(anchor, list[y]!, 'first_rating_window');
      }
    }
  }

  // 2. Shared gas payer: the first rating transactions of several raters sent by one other address.
  const byPayer = new Map<string, number[]>();
  for (let i = 0; i < names.length; i++) {
    const payer = raterInfo.get(names[i]!)?.gasPayer ?? null;
    if (payer === null || payer === names[i] || relayers.has(payer.toLowerCase())) continue;
    let list = byPayer.get(payer);
    if (!list) byPayer.set(payer, (list = []));
    list.push(i);
  }
  for (const list of byPayer.values())
    for (let k = 1; k < list.length; k++) groups.union(list[0]!, list[k]!, 'gas_payer');

  // 3. Reciprocity, and rings: owners that rate each other (components of three or more).
  const reciprocal = new Set<string>();
  const ring = new Groups(names.length);
  const inRing = new Uint8Array(names.length);
  for (let i = 0; i < names.length; i++) {
    const r = names[i]!;
    for (const subject of voices[i]!.keys()) {
      const j = idOf.get(subject);
      if (j === undefined || !voices[j]!.has(r)) continue;
      reciprocal.add(pairKey(r, subject));
      if (i < j) {
        ring.union(i, j, 'reciprocal_ring');
        inRing[i] = 1;
        inRing[j] = 1;
      }
    }
  }
  const ringSize = new Map<number, number>();
  for (let i = 0; i < names.length; i++)
    if (inRing[i]) ringSize.set(ring.find(i), (ringSize.get(ring.find(i)) ?? 0) + 1);
  const ringFirst = new Map<number, number>();
  for (let i = 0; i < names.length; i++) {
    if (!inRing[i]) continue;
    const root = ring.find(i);
    if ((ringSize.get(root) ?? 0) < P.cohort.minSize) continue;
    const first = ringFirst.get(root);
    if (first === undefined) ringFirst.set(root, i);
    else groups.union(first, i, 'reciprocal_ring');
  }

  // Cohorts: components of at least minSize raters.
  const members = new Map<number, number[]>();
  for (let i = 0; i < names.length; i++) {
    const root = groups.find(i);
    let list = members.get(root);
    if (!list) members.set(root, (list = []));
    list.push(i);
  }
  const cohortOf = new Int32Array(names.length).fill(-1);
  let cohorts = 0;
  for (const [root, list] of members) {
    if (list.length < P.cohort.minSize) continue;
    cohorts++;
    for (const i of list) cohortOf[i] = root;
  }

  // Independent breadth: subjects rated by someone outside the rater's cohort.
  // Per subject: the one cohort all its raters belong to, or -1 (raters outside any one cohort).
  const soleCohort = new Map<string, number>();
  for (const [subject, list] of ratersOf) {
    const c = cohortOf[list[0]!]!;
    soleCohort.set(subject, c !== -1 && list.every((j) => cohortOf[j] === c) ? c : -1);
  }
  const independent = new Int32Array(names.length);
  for (let i = 0; i < names.length; i++) {
    const c = cohortOf[i]!;
    let n = 0;
    for (const subject of voices[i]!.keys()) if (c === -1 || soleCohort.get(subject) !== c) n++;
    independent[i] = n;
  }

  // Graph trust: personalized PageRank over the raters with something to show (an account history
  // past fresh, or a payment above dust), cohorts collapsed into one rater node. Unproven raters
  // take no part: a farm of new wallets, however large, does not thin anyone's trust out.
  const inGraph = (i: number) => {
    const info = raterInfo.get(names[i]!);
    if (!info) return false;
    return (
      (info.history === 'fetched' && info.nonce !== null && info.nonce > P.history.freshMaxNonce) ||
      info.paidMicroUsd > P.payment.dustMicroUsd
    );
  };
  const raterNode = new Int32Array(names.length).fill(-1);
  const nodeOfRoot = new Map<number, number>();
  let nodes = 0;
  for (let i = 0; i < names.length; i++) {
    if (!inGraph(i)) continue;
    const key = cohortOf[i] === -1 ? i : cohortOf[i]!;
    let n = nodeOfRoot.get(key);
    if (n === undefined) nodeOfRoot.set(key, (n = nodes++));
    raterNode[i] = n;
  }
  const raterNodes = nodes;
  const subjects = [...ratersOf.keys()].sort(byString);
  const subjectNode = new Map(subjects.map((s, k) => [s, raterNodes + k]));
  nodes += subjects.length;
  const adjacency: Set<number>[] = Array.from({ length: nodes }, () => new Set<number>());
  for (let i = 0; i < names.length; i++) {
    if (raterNode[i] === -1) continue;
    for (const subject of voices[i]!.keys()) {
      const s = subjectNode.get(subject)!;
      adjacency[raterNode[i]!]!.add(s);
      adjacency[s]!.add(raterNode[i]!);
    }
  }
  let edges = 0;
  for (let n = 0; n < raterNodes; n++) edges += adjacency[n]!.size;
  const seedNodes = new Set<number>();
  for (let i = 0; i < names.length; i++) {
    const info = raterInfo.get(names[i]!);
    if (raterNode[i] !== -1 && info && info.paidMicroUsd >= P.payment.seedMicroUsd && voices[i]!.size > 0)
      seedNodes.add(raterNode[i]!);
  }
  const trust = new Float64Array(nodes);
  let iterations = 0;
  if (seedNodes.size > 0) {
    const restart = new Float64Array(nodes);
    for (const n of seedNodes) restart[n] = 1 / seedNodes.size;
    const lists = adjacency.map((s) => [...s].sort((a, b) => a - b));
    trust.set(restart);
    const next = new Float64Array(nodes);
    const d = P.graph.damping;
    for (iterations = 1; iterations <= P.graph.maxIterations; iterations++) {
      for (let n = 0; n < nodes; n++) next[n] = (1 - d) * restart[n]!;
      for (let n = 0; n < nodes; n++) {
        const list = lists[n]!;
        if (list.length === 0 || trust[n] === 0) continue;
        const share = (d * trust[n]!) / list.length;
        for (const m of list) next[m]! += share;
      }
      let delta = 0;
      for (let n = 0; n < nodes; n++) delta += Math.abs(next[n]! - trust[n]!);
      trust.set(next);
      if (delta < P.graph.tolerance) break;
    }
    iterations = Math.min(iterations, P.graph.maxIterations);
  }
  const perEdge = (n: number) => (adjacency[n]!.size === 0 ? 0 : trust[n]! / adjacency[n]!.size);
  const seedTrust = [...seedNodes].map(perEdge).sort((a, b) => a - b);
  const median =
    seedTrust.length === 0
      ? null
      : seedTrust.length % 2 === 1
        ? seedTrust[(seedTrust.length - 1) / 2]!
        : (seedTrust[seedTrust.length / 2 - 1]! + seedTrust[seedTrust.length / 2]!) / 2;

  const out = new Map<string, ComputedRaterEvidence>();
  for (let i = 0; i < names.length; i++) {
    const node = raterNode[i]!;
    const c = cohortOf[i]!;
    let graphTrust: number | null = null;
    if (median !== null && median > 0) {
      const tau = node === -1 ? 0 : perEdge(node);
      graphTrust =
        tau <= 0 ? 0 : round6(Math.min(1, Math.max(0, 1 + Math.log10(tau / median) / P.graph.decades)));
    }
    out.set(names[i]!, {
      rater: names[i]!,
      subjects: voices[i]!.size,
      independentSubjects: independent[i]!,
      cohortId: c === -1 ? null : names[c]!,
      cohortSize: c === -1 ? 0 : members.get(c)!.length,
      cohortReasons: c === -1 ? [] : [...(groups.reasons.get(c) ?? [])].sort(byString),
      trust: node === -1 ? 0 : trust[node]!,
      graphTrust,
      seed:
        node !== -1 &&
        seedNodes.has(node) &&
        (raterInfo.get(names[i]!)?.paidMicroUsd ?? 0) >= P.payment.seedMicroUsd,
    });
  }
  return {
    raters: out,
    reciprocal,
    graph: { nodes, edges, seeds: seedNodes.size, iterations, seedMedianTrust: median },
    cohorts,
  };
}
