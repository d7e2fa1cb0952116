/**
 * The worlds of `npm run bench:sybil`: one honest world shaped like the real feedback (most clients
 * rate one agent only, repeat ratings from the same client, a few power clients, one client writing
 * a large share of all ratings, some verified x402 payments, a few relayed and bundled raters), and
 * five attacks, each added to the same honest world on its own:
 *
 *  - fresh farm: 100 new wallets (nonce 0), one rating of 100 each on the target;
 *  - aged farm: 100 wallets with history, each rating the target and 4 decoy agents of the attacker
 *    (decoys owned and minted by distinct wallets);
 *  - slander: 50 new wallets rating an honest agent 0;
 *  - ring: 8 agents (the target and 7 new ones) whose owners rate each other's agents 5 times;
 *  - dust farm: 40 new wallets each paying the target's owner 1 base unit of USDC with a verified
 *    proof, then rating it 100.
 *
 * Deterministic (seeded); plain data, written into a database by bench/sybil.ts.
 */
import { seededRandom } from '../src/seeded-random.js';

export const NETWORK = 'base';
export const CHAIN_ID = 8453;
/** USDC on Base (a valued token: 6 decimals, so base units are micro-USD). */
export const USDC = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
const T0 = Date.UTC(2026, 0, 1);
const DAY = 86_400_000;
const SPAN_DAYS = 180;
/** A known relayer (KNOWN_RELAYERS) and a bundler nobody listed. */
export const KNOWN_RELAYER = '0x' + 'fa'.repeat(20);
const BUNDLER = '0x' + 'b0'.repeat(20);

export interface WorldAgent {
  agentId: string;
  owner: string;
  minter: string;
}

export interface WorldRating {
  agentId: string;
  rater: string;
  value: number;
  time: number;
  /** A verified payment proof on this rating: USDC base units paid to the agent's owner. */
  paidUnits?: bigint;
}

export interface WorldRaterFacts {
  /** Nonce of the first rating transaction (sent by `from`). */
  nonce: number;
  /** The transaction's sender (the rater itself unless relayed). */
  from: string;
}

export interface World {
  agents: WorldAgent[];
  ratings: WorldRating[];
  raters: Map<string, WorldRaterFacts>;
}

export interface Attack {
  name: string;
  /** The subject wallet it aims at. */
  target: string;
  /** Wallets the attacker made subjects of (decoys, ring agents): not honest wallets. */
  attackerSubjects: string[];
  world: World;
}

const addr = (prefix: number, i: number) =>
  `0x${prefix.toString(16).padStart(2, '0')}${i.toString(16).padStart(38, '0')}`;

function normal(rand: () => number): number {
  const u = Math.max(rand(), 1e-12);
  const v = rand();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

const clampValue = (x: number) => Math.max(0, Math.min(100, Math.round(x)));

/** The honest world. */
export function honestWorld(seed = 8004): World {
  const rand = seededRandom(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const agents: WorldAgent[] = [];
  const quality = new Map<string, number>();
  const popularity: number[] = [];
  // 260 owners, 400 agents (most owners hold one agent, a few hold several).
  let agentId = 0;
  for (let o = 0; o < 260; o++) {
    const owner = addr(0x10, o);
    const n = o < 200 ? 1 : o < 240 ? 2 : 5;
    for (let k = 0; k < n && agentId < 400; k++) {
      const id = String(agentId++);
      agents.push({ agentId: id, owner, minter: rand() < 0.7 ? KNOWN_RELAYER : owner });
      quality.set(id, 35 + rand() * 60);
      popularity.push(1 / Math.pow(agentId, 0.8));
    }
  }
  const totalPop = popularity.reduce((a, b) => a + b, 0);
  const popularAgent = () => {
    let x = rand() * totalPop;
    for (let i = 0; i < popularity.length; i++) {
      x -= popularity[i]!;
      if (x <= 0) return agents[i]!;
    }
    return agents[agents.length - 1]!;
  };
  const ratings: WorldRating[] = [];
  const raters = new Map<string, WorldRaterFacts>();
  const nonceOf = () =>
    rand() < 0.08 ? Math.floor(rand() * 3) : Math.max(3, Math.round(Math.exp(4 + 1.5 * normal(rand))));
  const addClient = (rater: string, agentCount: number, repeatMax: number) => {
    const bias = 8 * normal(rand);
    const chosen = new Set<WorldAgent>();
    while (chosen.size < agentCount) chosen.add(popularAgent());
    for (const a of chosen) {
      if (a.owner === rater) continue;
      const base = quality.get(a.agentId)! + bias;
      const repeats = rand() < 0.45 ? 1 : 1 + Math.floor(rand() * repeatMax);
      let t = T0 + rand() * SPAN_DAYS * DAY;
      const paid =
        rand() < 0.12 ? BigInt(Math.round(Math.exp(Math.log(100_000) + 1.5 * normal(rand)))) + 1n : null;
      for (let k = 0; k < repeats; k++) {
        ratings.push({
          agentId: a.agentId,
          rater,
          value: clampValue(base + 10 * normal(rand)),
          time: Math.floor(t),
          ...(k === 0 && paid !== null ? { paidUnits: paid } : {}),
        });
        t += rand() * 5 * DAY;
      }
    }
    const via = rand();
    raters.set(rater, { nonce: nonceOf(), from: via < 0.03 ? KNOWN_RELAYER : via < 0.05 ? BUNDLER : rater });
  };
  for (let c = 0; c < 1600; c++) {
    const r = rand();
    const count =
      r < 0.65
        ? 1
        : r < 0.85
          ? 2 + Math.floor(rand() * 2)
          : r < 0.97
            ? 4 + Math.floor(rand() * 5)
            : 9 + Math.floor(rand() * 12);
    addClient(addr(0x20, c), count, 6);
  }
  // Some owners rate other agents too.
  for (let o = 0; o < 260; o += 10) addClient(addr(0x10, o), 1 + Math.floor(rand() * 3), 3);
  // One client writes a large share of all ratings, across 9 agents.
  const heavy = addr(0x30, 0);
  const heavyAgents = new Set<WorldAgent>();
  while (heavyAgents.size < 9) heavyAgents.add(pick(agents));
  for (const a of heavyAgents) {
    for (let k = 0; k < 160; k++) {
      ratings.push({
        agentId: a.agentId,
        rater: heavy,
        value: clampValue(quality.get(a.agentId)! + 6 * normal(rand)),
        time: Math.floor(T0 + rand() * SPAN_DAYS * DAY),
      });
    }
  }
  raters.set(heavy, { nonce: 5000, from: heavy });
  return { agents, ratings, raters };
}

/** Per subject wallet: distinct raters and the mean of the eligible values (one chain). */
export function subjectSummary(world: World): Map<string, { raters: Set<string>; sum: number; n: number }> {
  const ownerOf = new Map(world.agents.map((a) => [a.agentId, a.owner]));
  const out = new Map<string, { raters: Set<string>; sum: number; n: number }>();
  for (const r of world.ratings) {
    const owner = ownerOf.get(r.agentId)!;
    if (owner === r.rater) continue;
    let s = out.get(owner);
    if (!s) out.set(owner, (s = { raters: new Set(), sum: 0, n: 0 }));
    s.raters.add(r.rater);
    s.sum += r.value;
    s.n++;
  }
  return out;
}

/** The honest subject with `minRaters`..`maxRaters` raters whose mean is nearest `mean`. */
export function pickTarget(world: World, mean: number, minRaters = 8, maxRaters = 14): string {
  let best: string | null = null;
  let bestGap = Infinity;
  for (const [owner, s] of [...subjectSummary(world)].sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (s.raters.size < minRaters || s.raters.size > maxRaters) continue;
    const gap = Math.abs(s.sum / s.n - mean);
    if (gap < bestGap) {
      bestGap = gap;
      best = owner;
    }
  }
  if (best === null) throw new Error('no target of that size in the honest world');
  return best;
}

const ATTACK_T = T0 + (SPAN_DAYS + 2) * DAY;
const TWO_HOURS = 2 * 3600_000;

function cloneWorld(w: World): World {
  return { agents: [...w.agents], ratings: [...w.ratings], raters: new Map(w.raters) };
}

const agentOf = (w: World, owner: string) => w.agents.find((a) => a.owner === owner)!;

/** The five attacks of the issue, each on its own copy of `honest`. */
export function attacks(honest: World, seed = 32): Attack[] {
  const rand = seededRandom(seed);
  const target = pickTarget(honest, 60);
  const victim = pickTarget(honest, 85);
  const inWindow = () => Math.floor(ATTACK_T + rand() * TWO_HOURS);
  let nextAgent = 10_000;
  const out: Attack[] = [];

  {
    const w = cloneWorld(honest);
    const agent = agentOf(w, target).agentId;
    for (let i = 0; i < 100; i++) {
      const rater = addr(0x40, i);
      w.ratings.push({ agentId: agent, rater, value: 100, time: inWindow() });
      w.raters.set(rater, { nonce: 0, from: rater });
    }
    out.push({ name: 'fresh farm', target, attackerSubjects: [], world: w });
  }
  {
    const w = cloneWorld(honest);
    const agent = agentOf(w, target).agentId;
    const decoys: WorldAgent[] = [];
    for (let d = 0; d < 4; d++) {
      const a = { agentId: String(nextAgent++), owner: addr(0x51, d), minter: addr(0x52, d) };
      decoys.push(a);
      w.agents.push(a);
    }
    for (let i = 0; i < 100; i++) {
      const rater = addr(0x50, i);
      w.raters.set(rater, { nonce: 30 + Math.floor(rand() * 400), from: rater });
      for (const a of [agent, ...decoys.map((d) => d.agentId)])
        w.ratings.push({ agentId: a, rater, value: 100, time: inWindow() });
    }
    out.push({ name: 'aged farm', target, attackerSubjects: decoys.map((d) => d.owner), world: w });
  }
  {
    const w = cloneWorld(honest);
    const agent = agentOf(w, victim).agentId;
    for (let i = 0; i < 50; i++) {
      const rater = addr(0x60, i);
      w.ratings.push({ agentId: agent, rater, value: 0, time: inWindow() });
      w.raters.set(rater, { nonce: 0, from: rater });
    }
    out.push({ name: 'slander', target: victim, attackerSubjects: [], world: w });
  }
  {
    const w = cloneWorld(honest);
    const ring: WorldAgent[] = [agentOf(w, target)];
    for (let k = 0; k < 7; k++) {
      const owner = addr(0x70, k);
      const a = { agentId: String(nextAgent++), owner, minter: owner };
      ring.push(a);
      w.agents.push(a);
      w.raters.set(owner, { nonce: 20 + Math.floor(rand() * 200), from: owner });
    }
    if (!w.raters.has(target)) w.raters.set(target, { nonce: 40, from: target });
    for (const from of ring)
      for (const to of ring)
        if (from !== to)
          for (let k = 0; k < 5; k++)
            w.ratings.push({ agentId: to.agentId, rater: from.owner, value: 100, time: inWindow() });
    out.push({ name: 'ring', target, attackerSubjects: ring.slice(1).map((a) => a.owner), world: w });
  }
  {
    const w = cloneWorld(honest);
    const agent = agentOf(w, target).agentId;
    for (let i = 0; i < 40; i++) {
      const rater = addr(0x80, i);
      w.ratings.push({ agentId: agent, rater, value: 100, time: inWindow(), paidUnits: 1n });
      w.raters.set(rater, { nonce: 1, from: rater });
    }
    out.push({ name: 'dust farm', target, attackerSubjects: [], world: w });
  }
  return out;
}

/**
 * Attacks beyond the targets, to show what `@3` does not stop: aged wallets that each rate
 * once, spread out; new wallets that each pay the target a real dollar; the aged farm on a target
 * with only a few honest raters.
 */
export function limitAttacks(honest: World, seed = 33): Attack[] {
  const rand = seededRandom(seed);
  const target = pickTarget(honest, 60);
  const out: Attack[] = [];
  {
    const w = cloneWorld(honest);
    const agent = agentOf(w, target).agentId;
    for (let i = 0; i < 100; i++) {
      const rater = addr(0x90, i);
      w.raters.set(rater, { nonce: 100 + Math.floor(rand() * 400), from: rater });
      w.ratings.push({ agentId: agent, rater, value: 100, time: ATTACK_T + i * 7 * 3600_000 });
    }
    out.push({ name: 'aged one-shot farm, 7 h apart', target, attackerSubjects: [], world: w });
  }
  {
    const w = cloneWorld(honest);
    const agent = agentOf(w, target).agentId;
    for (let i = 0; i < 40; i++) {
      const rater = addr(0x91, i);
      w.ratings.push({
        agentId: agent,
        rater,
        value: 100,
        time: Math.floor(ATTACK_T + rand() * TWO_HOURS),
        paidUnits: 1_000_000n,
      });
      w.raters.set(rater, { nonce: 1, from: rater });
    }
    out.push({ name: 'paying farm, $1 each (one window)', target, attackerSubjects: [], world: w });
  }
  {
    const w = cloneWorld(honest);
    const small = pickTarget(honest, 60, 2, 3);
    const agent = agentOf(w, small).agentId;
    const decoys: WorldAgent[] = [];
    for (let d = 0; d < 4; d++) {
      const a = { agentId: String(20_000 + d), owner: addr(0x93, d), minter: addr(0x94, d) };
      decoys.push(a);
      w.agents.push(a);
    }
    for (let i = 0; i < 100; i++) {
      const rater = addr(0x92, i);
      w.raters.set(rater, { nonce: 30 + Math.floor(rand() * 400), from: rater });
      for (const a of [agent, ...decoys.map((d) => d.agentId)])
        w.ratings.push({ agentId: a, rater, value: 100, time: Math.floor(ATTACK_T + rand() * TWO_HOURS) });
    }
    out.push({
      name: 'aged farm on a 2-3 rater target',
      target: small,
      attackerSubjects: decoys.map((d) => d.owner),
      world: w,
    });
  }
  return out;
}
