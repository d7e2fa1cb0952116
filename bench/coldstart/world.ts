/**
 * The synthetic ERC-8004 history of `bench:coldstart`, made deterministically (src/seeded-random.ts)
 * and compactly: typed arrays only, no log object until one is asked for (./encode.ts).
 *
 * Shape (scale 1): 400,000 agents on the ten EVM chains, 60 % of them on one (bsc); 3,500,000
 * feedback with a long tail: 70 % of the agents unrated, the rated ones ranked with Zipf weights
 * (exponent 0.8: the first few hold tens of thousands of ratings, most hold one or a few);
 * one rater in five rates the same agent again; 5 % of the feedback revoked, 10 % answered by the
 * agent's owner; 3 % of the agents transferred once. Every registration emits what the mainnet
 * registry emits: Transfer(0 → owner), Registered, MetadataSet(agentWallet).
 *
 * Per chain, every event sits in a block of [start, start + span); the events end before
 * 98 % of the span, so the head minus the reorg margin sees the final state (what the census reads).
 */
import { seededRandom } from '../../src/seeded-random.js';

export const KIND = {
  mint: 0,
  registered: 1,
  wallet: 2,
  feedback: 3,
  revoked: 4,
  response: 5,
  transfer: 6,
} as const;

export interface ChainSpec {
  network: string;
  chainId: number;
  /** Share of the agents (all shares sum to 1). */
  share: number;
  /** First block of the history, as on mainnet where known. */
  start: number;
  /** Seconds per block (block timestamps). */
  blockSeconds: number;
  /** The endpoint's range cap (blocks per eth_getLogs) and requests per second. */
  rangeCap: number;
  rps: number;
}

/** The ten EVM chains of src/chains.ts: chain ids and start blocks as there; shares, caps and rates chosen. */
export const CHAIN_SPECS: ChainSpec[] = [
  {
    network: 'bsc',
    chainId: 56,
    share: 0.6,
    start: 79_031_671,
    blockSeconds: 0.75,
    rangeCap: 5_000,
    rps: 20,
  },
  {
    network: 'base',
    chainId: 8453,
    share: 0.15,
    start: 41_663_799,
    blockSeconds: 2,
    rangeCap: 10_000,
    rps: 25,
  },
  {
    network: 'ethereum',
    chainId: 1,
    share: 0.06,
    start: 24_339_924,
    blockSeconds: 12,
    rangeCap: 2_000,
    rps: 10,
  },
  {
    network: 'polygon',
    chainId: 137,
    share: 0.04,
    start: 82_458_528,
    blockSeconds: 2,
    rangeCap: 3_000,
    rps: 15,
  },
  {
    network: 'arbitrum',
    chainId: 42161,
    share: 0.04,
    start: 400_000_000,
    blockSeconds: 0.25,
    rangeCap: 10_000,
    rps: 25,
  },
  {
    network: 'monad',
    chainId: 143,
    share: 0.04,
    start: 52_952_898,
    blockSeconds: 0.4,
    rangeCap: 2_000,
    rps: 10,
  },
  {
    network: 'avalanche',
    chainId: 43114,
    share: 0.02,
    start: 70_000_000,
    blockSeconds: 2,
    rangeCap: 2_048,
    rps: 15,
  },
  {
    network: 'optimism',
    chainId: 10,
    share: 0.02,
    start: 140_000_000,
    blockSeconds: 2,
    rangeCap: 10_000,
    rps: 20,
  },
  {
    network: 'celo',
    chainId: 42220,
    share: 0.02,
    start: 50_000_000,
    blockSeconds: 1,
    rangeCap: 2_000,
    rps: 10,
  },
  {
    network: 'robinhood',
    chainId: 4663,
    share: 0.01,
    start: 1_000_000,
    blockSeconds: 0.25,
    rangeCap: 10_000,
    rps: 15,
  },
];

export interface WorldOptions {
  scale: number;
  /** Blocks each chain's history spans. */
  span: number;
  seed: number;
}

/** One chain's history: agents, feedback, the ordered events, and the registries' final state. */
export interface ChainWorld {
  spec: ChainSpec;
  index: number;
  head: number;
  agents: number;
  /** Per agent: its first and final owner (owner ids), registration block. */
  minter: Uint32Array;
  owner: Uint32Array;
  /** Per feedback: agent, client id, feedbackIndex, value, block. */
  fbAgent: Uint32Array;
  fbClient: Uint32Array;
  fbIndex: Uint32Array;
  fbValue: Uint8Array;
  /** Per revocation / response: the feedback it refers to. */
  revFb: Uint32Array;
  respFb: Uint32Array;
  /** Per transfer: agent, from, to (owner ids). */
  trAgent: Uint32Array;
  trFrom: Uint32Array;
  trTo: Uint32Array;
  /** Events in chain order: block, logIndex, kind, ref (into the kind's table). */
  evBlock: Uint32Array;
  evLogIndex: Uint16Array;
  evKind: Uint8Array;
  evRef: Uint32Array;
  /** Pairs (agent, client) sorted by agent then client: their client, last index, revoked count. */
  pairStart: Uint32Array;
  pairClient: Uint32Array;
  pairLast: Uint32Array;
  pairRevoked: Uint32Array;
}

export interface World {
  chains: ChainWorld[];
  agents: number;
  feedback: number;
}

/** How many agents each chain holds (largest remainder). */
function splitAgents(total: number): number[] {
  const raw = CHAIN_SPECS.map((c) => c.share * total);
  const out = raw.map(Math.floor);
  let left = total - out.reduce((a, b) => a + b, 0);
  const order = raw.map((r, i) => [r - Math.floor(r), i] as const).sort((a, b) => b[0] - a[0]);
  for (let k = 0; left > 0; k = (k + 1) % order.length, left--) out[order[k]![1]]!++;
  return out;
}

/** Ratings per agent (global agent order): 70 % unrated, the rest by Zipf rank, summing to `total`. */
function ratingsPerAgent(agents: number, total: number, rand: () => number): Uint32Array {
  const counts = new Uint32Array(agents);
  const rated: number[] = [];
  for (let g = 0; g < agents; g++) if (rand() < 0.3) rated.push(g);
  if (rated.length === 0 || total === 0) return counts;
  // A random rank for every rated agent (Fisher-Yates), weight rank^-0.8.
  for (let i = rated.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [rated[i], rated[j]] = [rated[j]!, rated[i]!];
  }
  const w = rated.map((_, k) => (k + 1) ** -0.8);
  const sum = w.reduce((a, b) => a + b, 0);
  const spare = Math.max(0, total - rated.length);
  let given = 0;
  for (const [k, g] of rated.entries()) {
    const n = Math.min(total - given, 1 + Math.floor((spare * w[k]!) / sum));
    counts[g] = n;
    given += n;
  }
  for (let k = 0; given < total; k = (k + 1) % rated.length, given++) counts[rated[k]!]!++;
  return counts;
}

/** Builds one chain's history from its agents' rating counts. */
function buildChain(
  index: number,
  spec: ChainSpec,
  ratings: Uint32Array,
  opts: WorldOptions,
  clientPool: number,
  ownerBase: number,
): ChainWorld {
  const rand = seededRandom(opts.seed * 7919 + index);
  const agents = ratings.length;
  const span = opts.span;
  const last = Math.floor(span * 0.98);
  const regEnd = Math.floor(span * 0.9);
  const minter = new Uint32Array(agents);
  const owner = new Uint32Array(agents);
  const regBlock = new Uint32Array(agents);
  for (let a = 0; a < agents; a++) {
    regBlock[a] = Math.floor((a * regEnd) / Math.max(1, agents));
    minter[a] = ownerBase + Math.floor(rand() * Math.max(1, agents / 3));
    owner[a] = minter[a]!;
  }
  let nFb = 0;
  for (let a = 0; a < agents; a++) nFb += ratings[a]!;
  const fbAgent = new Uint32Array(nFb);
  const fbClient = new Uint32Array(nFb);
  const fbIndex = new Uint32Array(nFb);
  const fbValue = new Uint8Array(nFb);
  const fbBlock = new Uint32Array(nFb);
  let f = 0;
  for (let a = 0; a < agents; a++) {
    const n = ratings[a]!;
    const first = f;
    for (let k = 0; k < n; k++, f++) {
      fbAgent[f] = a;
      // One rater in five rates again (a rater of this agent already), the others are drawn anew.
      fbClient[f] =
        k > 0 && rand() < 0.2 ? fbClient[first + Math.floor(rand() * k)]! : Math.floor(rand() * clientPool);
      fbValue[f] = Math.floor(rand() * 101);
      fbBlock[f] = regBlock[a]! + 1 + Math.floor(rand() * (regEnd - regBlock[a]!));
    }
  }
  const nRev = Math.floor(nFb * 0.05);
  const nResp = Math.floor(nFb * 0.1);
  const nTr = Math.floor(agents * 0.03);
  const revFb = new Uint32Array(nRev);
  const respFb = new Uint32Array(nResp);
  const revBlock = new Uint32Array(nRev);
  const respBlock = new Uint32Array(nResp);
  const revoked = new Uint8Array(nFb);
  for (let r = 0; r < nRev; r++) {
    let fb = Math.floor(rand() * nFb);
    while (revoked[fb]) fb = (fb + 1) % nFb;
    revoked[fb] = 1;
    revFb[r] = fb;
    revBlock[r] = fbBlock[fb]! + 1 + Math.floor(rand() * (last - fbBlock[fb]! - 1));
  }
  for (let r = 0; r < nResp; r++) {
    const fb = Math.floor(rand() * nFb);
    respFb[r] = fb;
    respBlock[r] = fbBlock[fb]! + 1 + Math.floor(rand() * (last - fbBlock[fb]! - 1));
  }
  const trAgent = new Uint32Array(nTr);
  const trFrom = new Uint32Array(nTr);
  const trTo = new Uint32Array(nTr);
  const trBlock = new Uint32Array(nTr);
  const moved = new Uint8Array(agents);
  for (let t = 0; t < nTr; t++) {
    let a = Math.floor(rand() * agents);
    while (moved[a]) a = (a + 1) % agents;
    moved[a] = 1;
    trAgent[t] = a;
    trFrom[t] = owner[a]!;
    trTo[t] = ownerBase + Math.floor(rand() * Math.max(1, agents / 3));
    owner[a] = trTo[t]!;
    trBlock[t] = regBlock[a]! + 1 + Math.floor(rand() * (last - regBlock[a]! - 1));
  }

  // Chain order: sort (block, sequence) keys; a registration's three logs stay together in order.
  const nEv = 3 * agents + nFb + nRev + nResp + nTr;
  const keys = new Float64Array(nEv);
  const kinds = new Uint8Array(nEv);
  const refs = new Uint32Array(nEv);
  let e = 0;
  const push = (block: number, kind: number, ref: number) => {
    keys[e] = block * 2 ** 23 + e;
    kinds[e] = kind;
    refs[e] = ref;
    e++;
  };
  for (let a = 0; a < agents; a++) {
    push(regBlock[a]!, KIND.mint, a);
    push(regBlock[a]!, KIND.registered, a);
    push(regBlock[a]!, KIND.wallet, a);
  }
  for (let i = 0; i < nFb; i++) push(fbBlock[i]!, KIND.feedback, i);
  for (let i = 0; i < nRev; i++) push(revBlock[i]!, KIND.revoked, i);
  for (let i = 0; i < nResp; i++) push(respBlock[i]!, KIND.response, i);
  for (let i = 0; i < nTr; i++) push(trBlock[i]!, KIND.transfer, i);
  if (nEv >= 2 ** 23) throw new Error(`${spec.network}: ${nEv} events, more than the sort key holds`);
  keys.sort();
  const evBlock = new Uint32Array(nEv);
  const evLogIndex = new Uint16Array(nEv);
  const evKind = new Uint8Array(nEv);
  const evRef = new Uint32Array(nEv);
  for (let i = 0; i < nEv; i++) {
    const k = keys[i]!;
    const seq = k % 2 ** 23;
    evBlock[i] = (k - seq) / 2 ** 23;
    evKind[i] = kinds[seq]!;
    evRef[i] = refs[seq]!;
    evLogIndex[i] = i > 0 && evBlock[i - 1] === evBlock[i] ? evLogIndex[i - 1]! + 1 : 0;
  }

  // feedbackIndex per (agent, client), counted in chain order; then the pairs, sorted.
  const pairKey = (a: number, c: number) => a * clientPool + c;
  const lastOf = new Map<number, number>();
  for (let i = 0; i < nEv; i++) {
    if (evKind[i] !== KIND.feedback) continue;
    const fb = evRef[i]!;
    const k = pairKey(fbAgent[fb]!, fbClient[fb]!);
    const n = (lastOf.get(k) ?? 0) + 1;
    lastOf.set(k, n);
    fbIndex[fb] = n;
  }
  const revOf = new Map<number, number>();
  for (let r = 0; r < nRev; r++) {
    const k = pairKey(fbAgent[revFb[r]!]!, fbClient[revFb[r]!]!);
    revOf.set(k, (revOf.get(k) ?? 0) + 1);
  }
  const sortedPairs = Float64Array.from(lastOf.keys()).sort();
  const pairStart = new Uint32Array(agents + 1);
  const pairClient = new Uint32Array(sortedPairs.length);
  const pairLast = new Uint32Array(sortedPairs.length);
  const pairRevoked = new Uint32Array(sortedPairs.length);
  for (let p = 0; p < sortedPairs.length; p++) {
    const k = sortedPairs[p]!;
    const a = Math.floor(k / clientPool);
    pairClient[p] = k - a * clientPool;
    pairLast[p] = lastOf.get(k)!;
    pairRevoked[p] = revOf.get(k) ?? 0;
    pairStart[a + 1]!++;
  }
  for (let a = 0; a < agents; a++) pairStart[a + 1]! += pairStart[a]!;
  return {
    spec,
    index,
    head: spec.start + span - 1,
    agents,
    minter,
    owner,
    fbAgent,
    fbClient,
    fbIndex,
    fbValue,
    revFb,
    respFb,
    trAgent,
    trFrom,
    trTo,
    evBlock: evBlock.map((b) => b + spec.start),
    evLogIndex,
    evKind,
    evRef,
    pairStart,
    pairClient,
    pairLast,
    pairRevoked,
  };
}

/** The whole synthetic history at `scale` (1 = 400 k agents, 3.5 M feedback). */
export function buildWorld(opts: WorldOptions): World {
  const agents = Math.max(CHAIN_SPECS.length, Math.round(400_000 * opts.scale));
  const feedback = Math.round(3_500_000 * opts.scale);
  const rand = seededRandom(opts.seed);
  const counts = ratingsPerAgent(agents, feedback, rand);
  const perChain = splitAgents(agents);
  const clientPool = Math.max(1_000, Math.round(600_000 * opts.scale));
  const chains: ChainWorld[] = [];
  let at = 0;
  for (const [i, spec] of CHAIN_SPECS.entries()) {
    const n = perChain[i]!;
    chains.push(buildChain(i, spec, counts.subarray(at, at + n), opts, clientPool, at));
    at += n;
  }
  return { chains, agents, feedback };
}
