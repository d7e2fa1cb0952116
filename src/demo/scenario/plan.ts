/**
 * The plan of each chain: who registers, rates, revokes and transfers what, and when (seeded,
 * deterministic), plus the background traffic.
 */
import type { Address, Hex } from 'viem';
import { type ContractCall } from '../registries.js';
import { seededRandom } from '../../seeded-random.js';
import {
  type Actor,
  BURN_ADDRESS,
  HOSTILE_TAG1,
  SCENARIO_DAYS,
  SCENARIO_START,
  type ScenarioNetwork,
  TAG1_FACETS,
  actor,
  at,
} from './world.js';

// ------------------------------------------------------------------ plan

export interface RatingSpec {
  value: bigint;
  valueDecimals: number;
  tag1: string;
  tag2: string;
  endpoint: string;
  feedbackURI: string;
}

export type Action =
  | { kind: 'register'; agent: string; uri: string; type?: string }
  | { kind: 'transfer'; agent: string; to: Address }
  | { kind: 'setType'; agent: string; type: string }
  | { kind: 'setURI'; agent: string; uri: string }
  | { kind: 'rate'; agent: string; rater: Actor; spec: RatingSpec; mark?: string }
  | { kind: 'revoke'; rating: RateAction };

export type RateAction = Extract<Action, { kind: 'rate' }>;

export interface Timed {
  t: number;
  seq: number;
  action: Action;
  // Filled by the simulation:
  signer?: Actor;
  call?: ContractCall;
  agentId?: number;
  feedbackIndex?: number;
  ownerAtRating?: Address;
  // Filled after sending:
  txHash?: Hex;
  blockNumber?: number;
}

export class ChainPlan {
  readonly items: Timed[] = [];
  /** Agent name → registration day (ratings of that agent come later). */
  readonly registeredDay = new Map<string, number>();
  private seq = 0;

  constructor(
    readonly network: ScenarioNetwork,
    readonly random: () => number,
  ) {}

  add(t: number, action: Action): Timed {
    if (t < SCENARIO_START || t >= SCENARIO_START + SCENARIO_DAYS * 86_400) {
      throw new Error(`${this.network}: action outside the scenario window`);
    }
    const item: Timed = { t, seq: this.seq++, action };
    this.items.push(item);
    return item;
  }

  /** Relayer mints, then hands the agent to its owner (same block, or an hour later). */
  register(
    agent: string,
    owner: Address,
    day: number,
    opts: { uri?: string; type?: string; hour?: number } = {},
  ): void {
    const hour = opts.hour ?? 8 + Math.floor(this.random() * 10);
    const uri = opts.uri ?? `https://registry.${this.network}.example/agents/${agent}.json`;
    this.add(at(day, hour), { kind: 'register', agent, uri, ...(opts.type ? { type: opts.type } : {}) });
    this.add(at(day, this.random() < 0.5 ? hour : hour + 1), { kind: 'transfer', agent, to: owner });
    this.registeredDay.set(agent, day);
  }

  rate(agent: string, rater: Actor, t: number, spec: Partial<RatingSpec> = {}, mark?: string): RateAction {
    const action: RateAction = { kind: 'rate', agent, rater, spec: { ...this.randomSpec(agent), ...spec } };
    if (mark) action.mark = mark;
    this.add(t, action);
    return action;
  }

  /** A rating at a random hour of a random day in [fromDay, toDay]. */
  rateSometime(
    agent: string,
    rater: Actor,
    fromDay: number,
    toDay: number,
    spec: Partial<RatingSpec> = {},
  ): RateAction {
    const day = fromDay + Math.floor(this.random() * (toDay - fromDay + 1));
    return this.rate(agent, rater, at(day, Math.floor(this.random() * 24)), spec);
  }

  randomSpec(agent: string): RatingSpec {
    const r = this.random;
    const tag1 = pick(r, TAG1_FACETS);
    const decimals2 = r() < 0.12;
    const score = 40 + Math.floor(r() * 61); // 40..100
    const n = Math.floor(r() * 100_000);
    const uriKind = Math.floor(r() * 6);
    const feedbackURI = [
      `https://feedback.alpha.example/r/${this.network}/${n}`,
      `https://reviews.beta.example/${n}.json`,
      `https://gamma.example.org/f/${agent}/${n}`,
      `ipfs://bafybeigdyrzt5sfp7udm7hu76uh7y26nf3efuylqabf3oclgtqy55fbzdi/${n}.json`,
      '',
      `https://feedback.alpha.example/r/${this.network}/${n}?lang=fr`,
    ][uriKind]!;
    return {
      value: decimals2 ? BigInt(score * 100 + Math.floor(r() * 100)) : BigInt(score),
      valueDecimals: decimals2 ? 2 : 0,
      tag1,
      tag2: pick(r, ['', '', 'x402', 'uptime', 'audit', 'latency', 'ünïcødé ✓']),
      endpoint: pick(r, ['', `https://${agent}.agents.example/api`, '/v1/chat', 'mcp://tools/search']),
      feedbackURI,
    };
  }
}

export function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

export function weightedPick<T>(
  random: () => number,
  list: readonly T[],
  weight: (item: T, i: number) => number,
): T {
  const weights = list.map(weight);
  let x = random() * weights.reduce((a, b) => a + b, 0);
  for (let i = 0; i < list.length; i++) {
    x -= weights[i]!;
    if (x < 0) return list[i]!;
  }
  return list[list.length - 1]!;
}

export const raters = Array.from({ length: 40 }, (_, i) => actor(`rater:${String(i).padStart(2, '0')}`));
export const rater = (i: number) => raters[i]!;

/** Agents open to random ratings, per chain (special agents get only their designed ratings). */
export interface PlanResult {
  plan: ChainPlan;
  pool: string[];
}

export function planBase(): PlanResult {
  const p = new ChainPlan('base', seededRandom(8453));
  const multi = actor('owner:multichain').address;
  p.register('atlas-0', actor('owner:atlas').address, 0, { hour: 9 }); // agentId 0 on base
  p.register('helper-1', multi, 0, { type: 'assistant', hour: 11 });
  p.register('quant-2', multi, 1);
  p.register('campaign-3', actor('owner:cobalt').address, 1);
  p.register('traded-4', actor('owner:seller').address, 2);
  p.register('burned-5', actor('owner:dune').address, 2);
  p.register('gifted-6', actor('owner:ember').address, 3);
  p.register('idle-7', actor('owner:unrated').address, 3);
  p.register('idle-8', actor('owner:unrated').address, 4, {
    uri: 'ipfs://bafybeih2x4nq3m7kzv5pp2zjnmbgwo7xrdmpz4sn3eq3gumx5qzlwb6zkm/agent.json',
  });
  p.register('idle-9', actor('owner:unrated').address, 4);
  const regular = ['scout-10', 'oracle-11', 'keeper-12', 'data-13', 'router-14', 'auditor-15'];
  regular.forEach((name, i) =>
    p.register(name, actor(`owner:${String(i + 1).padStart(2, '0')}`).address, 5 + i * 2, {
      ...(name === 'data-13' ? { type: 'data' } : {}),
    }),
  );
  p.add(at(15, 10), { kind: 'setType', agent: 'quant-2', type: 'trading' });
  p.add(at(16, 10), { kind: 'setType', agent: 'oracle-11', type: 'oracle' });
  p.add(at(60, 14), {
    kind: 'setURI',
    agent: 'scout-10',
    uri: 'https://registry.base.example/agents/scout-10-v2.json',
  });

  // Campaign: 30 ratings of campaign-3 by one rater, in three bursts of ten (one block each).
  const campaigner = actor('rater:campaign');
  for (let burst = 0; burst < 3; burst++) {
    for (let k = 0; k < 10; k++) {
      p.rate('campaign-3', campaigner, at(100 + burst, 3), {
        value: 100n,
        valueDecimals: 0,
        tag1: 'trust',
        tag2: 'x402',
        endpoint: '',
        feedbackURI: `https://boost.campaign.example/${burst * 10 + k}`,
      });
    }
  }
  for (let i = 0; i < 5; i++) p.rateSometime('campaign-3', rater(20 + i), 10, 90);

  // Ownership change after ratings: 10 ratings, transfer on day 65, 5 more ratings.
  const before = Array.from({ length: 10 }, (_, i) => p.rateSometime('traded-4', rater(i + 3), 10, 60));
  p.add(at(65, 15), { kind: 'transfer', agent: 'traded-4', to: actor('owner:buyer').address });
  for (let i = 0; i < 5; i++) p.rateSometime('traded-4', rater(i + 15), 70, 110);
  p.add(at(80, 9), { kind: 'revoke', rating: before[2]! });

  // Burn-address owner: 6 ratings, transfer to 0x…dEaD on day 85, 3 ratings after.
  const preBurn = Array.from({ length: 6 }, (_, i) => p.rateSometime('burned-5', rater(i + 6), 12, 80));
  p.add(at(85, 12), { kind: 'transfer', agent: 'burned-5', to: BURN_ADDRESS });
  for (let i = 0; i < 3; i++) p.rateSometime('burned-5', rater(i + 25), 90, 115);
  p.add(at(96, 8), { kind: 'revoke', rating: preBurn[0]! });

  // Self-ratings: selfRater rates gifted-6 three times, then receives it on day 75.
  const selfRater = actor('owner:selfrater');
  p.rate('gifted-6', selfRater, at(20, 10), { value: 95n, valueDecimals: 0, tag1: 'trust' });
  p.rate('gifted-6', selfRater, at(35, 10), { value: 98n, valueDecimals: 0, tag1: 'trust' });
  p.rate('gifted-6', selfRater, at(50, 10), { value: 100n, valueDecimals: 0, tag1: 'liveness' });
  for (let i = 0; i < 4; i++) p.rateSometime('gifted-6', rater(i + 30), 10, 70);
  p.add(at(75, 16), { kind: 'transfer', agent: 'gifted-6', to: selfRater.address });
  for (let i = 0; i < 2; i++) p.rateSometime('gifted-6', rater(i + 34), 80, 115);

  // One rater, three ratings of one subject, the second revoked.
  const r5 = [20, 30, 40].map((day) => p.rate('scout-10', rater(5), at(day, 7)));
  p.add(at(45, 7), { kind: 'revoke', rating: r5[1]! });

  p.rate('oracle-11', rater(9), at(33, 13), { value: 0n, valueDecimals: 0, tag1: 'liveness' }, 'zero');
  p.rate('keeper-12', rater(12), at(41, 17), { value: 8750n, valueDecimals: 2, tag1: 'trust' }, 'decimals2');

  return { plan: p, pool: ['atlas-0', 'helper-1', 'quant-2', ...regular] };
}

export function planOptimism(): PlanResult {
  const p = new ChainPlan('optimism', seededRandom(10));
  p.register('nova-0', actor('owner:borealis').address, 0, { hour: 10 }); // agentId 0 on optimism
  p.register('helper-1', actor('owner:multichain').address, 1, { type: 'assistant' });
  p.register('sandbox-2', actor('owner:03').address, 1);
  const regular = [
    'swap-3',
    'bridge-4',
    'lend-5',
    'feed-6',
    'vault-7',
    'yield-8',
    'mint-9',
    'index-10',
    'relay-11',
  ];
  regular.forEach((name, i) =>
    p.register(name, actor(`owner:${String(i + 4).padStart(2, '0')}`).address, 2 + i, {
      ...(name === 'mint-9'
        ? { uri: 'data:application/json;base64,eyJuYW1lIjoibWludC05IiwidHlwZSI6ImFnZW50In0=' }
        : {}),
    }),
  );
  p.add(at(14, 11), { kind: 'setType', agent: 'feed-6', type: 'oracle' });
  p.add(at(18, 11), { kind: 'setType', agent: 'swap-3', type: 'trading' });
  p.add(at(61, 9), {
    kind: 'setURI',
    agent: 'lend-5',
    uri: 'ipfs://bafybeif7ztnhq65lumvvtr4ekcwd2ifwgm3awq4zfr3srh462rwyinlb4y/lend-5.json',
  });

  p.rate(
    'sandbox-2',
    rater(14),
    at(44, 20),
    { tag1: HOSTILE_TAG1, tag2: `"'><b>x</b>`, value: 66n, valueDecimals: 0 },
    'hostile',
  );
  p.rate(
    'bridge-4',
    rater(10),
    at(52, 6),
    { value: -50n, valueDecimals: 0, tag1: 'contractRisk' },
    'negative',
  );
  p.rate('lend-5', rater(16), at(57, 6), { value: -1250n, valueDecimals: 2, tag1: 'trust' });
  const revokedSoon = p.rate('swap-3', rater(7), at(22, 10));
  p.add(at(23, 10), { kind: 'revoke', rating: revokedSoon });
  const later = p.rate('yield-8', rater(17), at(70, 10));
  p.add(at(88, 10), { kind: 'revoke', rating: later });
  return { plan: p, pool: ['nova-0', 'helper-1', 'sandbox-2', ...regular] };
}

export function planArbitrum(): PlanResult {
  const p = new ChainPlan('arbitrum', seededRandom(42161));
  p.register('helper-0', actor('owner:multichain').address, 0, { type: 'assistant' });
  const regular = ['perp-1', 'guard-2', 'arb-3', 'lp-4', 'keeper-5', 'stream-6', 'score-7', 'pay-8'];
  regular.forEach((name, i) =>
    p.register(name, actor(`owner:${String(i + 13).padStart(2, '0')}`).address, 1 + i),
  );
  // A late registration, never rated.
  p.register('late-9', actor('owner:unrated').address, 110);
  p.add(at(20, 12), { kind: 'setType', agent: 'lp-4', type: 'trading' });

  p.rate('arb-3', rater(11), at(47, 13), { value: 250n, valueDecimals: 0, tag1: 'activity' }, 'above100');
  p.rate('lp-4', rater(13), at(59, 2), { value: 10n ** 38n, valueDecimals: 18, tag1: '' }, 'extreme');
  const r8 = p.rate('guard-2', rater(8), at(50, 10));
  p.add(at(70, 10), { kind: 'revoke', rating: r8 });
  return { plan: p, pool: ['helper-0', ...regular] };
}

/** Shared random traffic: rater:00 rates every pool agent; others rate at random (skewed). */
export function addTraffic({ plan, pool }: PlanResult, count: number): void {
  const r = plan.random;
  for (const agent of pool) plan.rateSometime(agent, rater(0), plan.registeredDay.get(agent)! + 1, 118);
  if (plan.network === 'base') {
    for (const agent of pool) plan.rateSometime(agent, rater(1), plan.registeredDay.get(agent)! + 1, 118);
  }
  for (let i = 0; i < count; i++) {
    // Raters 0-4 are busier; agents early in the pool are more popular.
    const who = weightedPick(r, raters, (_, k) => (k < 5 ? 6 : 1));
    const agent = weightedPick(r, pool, (_, k) => 1 / (1 + k * 0.25));
    plan.rateSometime(agent, who, plan.registeredDay.get(agent)! + 1, 118);
  }
}
