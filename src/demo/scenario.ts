/**
 * The demo/test scenario: a deterministic history of ERC-8004 agents and ratings on three local
 * chains (base, optimism, arbitrum), spread over 120 days that end on 2026-11-01.
 *
 * Everything is fixed: the actors' keys derive from fixed labels, random choices come from a seeded
 * generator, every block's timestamp is set explicitly, fees and gas limits are constants. Two runs
 * on fresh nodes produce the same blocks, the same transaction hashes and the same facts.
 *
 * The history holds the cases an index must get right: agents minted by a relayer then handed to
 * their owner (minter != owner), an ownership change after ratings, self-ratings (rating first,
 * receiving the agent later), revocations, a zero rating, out-of-domain values, an agent owned by
 * the burn address, one owner on three chains, one agent id on two chains with different owners, a
 * 500-character hostile tag1, unrated agents, prolific raters and a rating campaign.
 *
 * How it runs: per chain the planned actions are sorted by time, simulated (agent ids, owners and
 * feedback indexes are known before anything is sent, and the registry's rules are checked), then
 * sent block by block: all transactions sharing a timestamp go into one block (automine is paused
 * while they are queued). The three chains are played concurrently.
 */
import { getAddress, keccak256, stringToHex, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { startLocalNode, type LocalNode } from './local-node.js';
import {
  deployRegistries,
  giveFeedbackCall,
  identityRegistryAbi,
  publicClientFor,
  registerAgentCall,
  revokeFeedbackCall,
  sendCallsInBlock,
  setAgentURICall,
  setMetadataCall,
  transferAgentCall,
  type ContractCall,
  type Registries,
} from './registries.js';
import { seededRandom } from '../seeded-random.js';

type ScenarioNetwork = 'base' | 'optimism' | 'arbitrum';
export const SCENARIO_NETWORKS: readonly ScenarioNetwork[] = ['base', 'optimism', 'arbitrum'];
export const SCENARIO_CHAIN_IDS: Record<ScenarioNetwork, number> = {
  base: 8453,
  optimism: 10,
  arbitrum: 42161,
};

export interface ScenarioNode {
  network: ScenarioNetwork;
  node: LocalNode;
  registries: Registries;
}

/** First day of the scenario: 2026-07-04T00:00:00Z. */
export const SCENARIO_START = Date.UTC(2026, 6, 4) / 1000;
/** Length of the scenario in days: the last actions fall on 2026-10-31 (the day before Nov 1). */
const SCENARIO_DAYS = 120;
const BURN_ADDRESS: Address = '0x000000000000000000000000000000000000dEaD';
const TAG1_FACETS = ['trust', 'liveness', 'contractRisk', 'activity', ''] as const;

/** 500 ASCII characters with markup, script and both quote kinds (escaping test for every surface). */
export const HOSTILE_TAG1: string = (() => {
  const unit = `<script>alert(1)</script> "double" & 'single' <img src=x onerror=alert(2)> `;
  return unit.repeat(Math.ceil(500 / unit.length)).slice(0, 500);
})();

// ------------------------------------------------------------------ facts (what was played)

/**
 * Facts are JSON-friendly: agent ids, feedback indexes and block numbers are numbers (all small),
 * rating values are exact decimal strings of the on-chain int128 (e.g. "8750" with valueDecimals 2).
 */
interface AgentRef {
  network: ScenarioNetwork;
  agentId: number;
}

interface RatingFact extends AgentRef {
  rater: Address;
  feedbackIndex: number;
  value: string;
  valueDecimals: number;
  tag1: string;
  tag2: string;
  endpoint: string;
  feedbackURI: string;
  feedbackHash: Hex;
  /** Owner of the agent when the rating was given (the registry refuses owner ratings). */
  ownerAtRating: Address;
  timestamp: number;
  blockNumber: number;
  txHash: Hex;
  revoked: boolean;
}

interface AgentFact extends AgentRef {
  /** The relayer that called register() (`Registered.owner`). */
  minter: Address;
  /** Owner at the end of the scenario. */
  owner: Address;
  /** Every owner in order, minter first. */
  owners: Address[];
  agentURI: string;
  type?: string;
  registeredAt: number;
  registeredBlock: number;
  ratings: number;
  activeRatings: number;
}

interface RevocationFact extends AgentRef {
  rater: Address;
  feedbackIndex: number;
  txHash: Hex;
  timestamp: number;
}

interface RatingRef extends AgentRef {
  rater: Address;
  feedbackIndex: number;
  txHash: Hex;
}

interface ChainFacts {
  chainId: number;
  identityRegistry: Address;
  reputationRegistry: Address;
  deployBlock: number;
  firstBlock: number;
  lastBlock: number;
  agents: number;
  ratings: number;
  revocations: number;
  transactions: number;
}

export interface ScenarioFacts {
  startTimestamp: number;
  endTimestamp: number;
  relayer: Address;
  chains: Record<ScenarioNetwork, ChainFacts>;
  totals: { agents: number; ratings: number; revocations: number; transactions: number };
  agents: AgentFact[];
  ratings: RatingFact[];
  revoked: RevocationFact[];
  /** One wallet holding agents on all three chains. */
  multiChainOwner: { address: Address; agents: AgentRef[] };
  /** Rated, then transferred to 0x…dEaD, then rated again. */
  burnOwnedAgent: AgentRef & {
    owner: Address;
    previousOwner: Address;
    burnedAt: number;
    ratings: number;
    ratingsBeforeBurn: number;
    ratingsAfterBurn: number;
  };
  /** Rated the agent three times, then received it: those ratings are now self-ratings. */
  selfRater: AgentRef & { address: Address; previousOwner: Address; selfRatings: number; receivedAt: number };
  /** Ownership change after ratings: all its ratings now belong to newOwner. */
  transferredAgent: AgentRef & {
    oldOwner: Address;
    newOwner: Address;
    transferredAt: number;
    txHash: Hex;
    ratingsBefore: number;
    ratingsAfter: number;
  };
  zeroRating: RatingRef;
  outOfDomain: (RatingRef & {
    kind: 'negative' | 'above100' | 'decimals2' | 'extreme';
    value: string;
    valueDecimals: number;
  })[];
  hostileTag1: RatingRef & { tag1: string };
  /** Owns registered agents nobody rated. */
  unratedOwner: { address: Address; agents: AgentRef[] };
  /** The same agent id on two chains, owned by different wallets. */
  sameAgentIdOnTwoChains: { agentId: number; owners: { network: ScenarioNetwork; owner: Address }[] };
  /** One rater, one subject, many ratings. */
  campaign: AgentRef & { rater: Address; ratings: number };
  /** Raters by number of distinct subjects, most first (top 5). */
  prolificRaters: { address: Address; subjects: number; ratings: number }[];
  /** Agents with a declared MetadataSet "type". */
  typedAgents: (AgentRef & { type: string })[];
  tag1Facets: string[];
  /** Distinct feedbackURI hosts; "" stands for URIs without a host (empty, ipfs://). */
  feedbackHosts: string[];
}

// ------------------------------------------------------------------ actors and randomness

interface Actor {
  label: string;
  key: Hex;
  address: Address;
}

const actorCache = new Map<string, Actor>();

/** A wallet whose key derives from a fixed label (demo only: these keys are public). */
function actor(label: string): Actor {
  let a = actorCache.get(label);
  if (!a) {
    const key = keccak256(stringToHex(`repindex-demo/${label}`));
    a = { label, key, address: privateKeyToAccount(key).address };
    actorCache.set(label, a);
  }
  return a;
}

/**
 * The key of a scenario actor by its address (null: no actor of the played scenario, e.g. the burn
 * address): public demo keys, never for a real network.
 */
export function scenarioKeyOf(address: string): Hex | null {
  for (const a of actorCache.values()) if (a.address.toLowerCase() === address.toLowerCase()) return a.key;
  return null;
}

function at(day: number, hour = 12, minute = 0): number {
  return SCENARIO_START + day * 86_400 + hour * 3_600 + minute * 60;
}

const RELAYER = () => actor('relayer');
const ZERO_HASH: Hex = `0x${'00'.repeat(32)}`;

// ------------------------------------------------------------------ plan

interface RatingSpec {
  value: bigint;
  valueDecimals: number;
  tag1: string;
  tag2: string;
  endpoint: string;
  feedbackURI: string;
}

type Action =
  | { kind: 'register'; agent: string; uri: string; type?: string }
  | { kind: 'transfer'; agent: string; to: Address }
  | { kind: 'setType'; agent: string; type: string }
  | { kind: 'setURI'; agent: string; uri: string }
  | { kind: 'rate'; agent: string; rater: Actor; spec: RatingSpec; mark?: string }
  | { kind: 'revoke'; rating: RateAction };

type RateAction = Extract<Action, { kind: 'rate' }>;

interface Timed {
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

class ChainPlan {
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

function pick<T>(random: () => number, list: readonly T[]): T {
  return list[Math.floor(random() * list.length)]!;
}

function weightedPick<T>(
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

const raters = Array.from({ length: 40 }, (_, i) => actor(`rater:${String(i).padStart(2, '0')}`));
const rater = (i: number) => raters[i]!;

/** Agents open to random ratings, per chain (special agents get only their designed ratings). */
interface PlanResult {
  plan: ChainPlan;
  pool: string[];
}

function planBase(): PlanResult {
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

function planOptimism(): PlanResult {
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

function planArbitrum(): PlanResult {
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
function addTraffic({ plan, pool }: PlanResult, count: number): void {
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

// ------------------------------------------------------------------ simulation

interface AgentState {
  name: string;
  agentId: number;
  owners: Address[];
  uri: string;
  type?: string;
  registeredAt: number;
  registeredItem: Timed;
}

interface Simulation {
  network: ScenarioNetwork;
  items: Timed[];
  agents: Map<string, AgentState>;
}

/**
 * Orders the plan by (time, insertion) and replays it in memory: assigns agent ids and feedback
 * indexes, tracks owners, enforces the registries' rules (no owner ratings, revocation by the
 * original rater) and builds each transaction. A broken plan fails here, before anything is sent.
 */
function simulate(plan: ChainPlan, reg: Registries): Simulation {
  const items = [...plan.items].sort((a, b) => a.t - b.t || a.seq - b.seq);
  const agents = new Map<string, AgentState>();
  const lastIndex = new Map<string, number>();
  const relayer = RELAYER();
  const owner = (name: string): AgentState => {
    const a = agents.get(name);
    if (!a) throw new Error(`${plan.network}: agent ${name} used before its registration`);
    return a;
  };
  const ownerActor = (a: AgentState): Actor => {
    const current = a.owners[a.owners.length - 1]!;
    const found = [...actorCache.values()].find((x) => x.address === current);
    if (!found) throw new Error(`${plan.network}: no key for the owner of ${a.name}`);
    return found;
  };

  for (const item of items) {
    const act = item.action;
    switch (act.kind) {
      case 'register': {
        const agentId = agents.size;
        agents.set(act.agent, {
          name: act.agent,
          agentId,
          owners: [relayer.address],
          uri: act.uri,
          ...(act.type ? { type: act.type } : {}),
          registeredAt: item.t,
          registeredItem: item,
        });
        item.signer = relayer;
        item.agentId = agentId;
        item.call = registerAgentCall(reg, act.uri, act.type ? [{ key: 'type', value: act.type }] : []);
        break;
      }
      case 'transfer': {
        const a = owner(act.agent);
        const from = ownerActor(a);
        item.signer = from;
        item.agentId = a.agentId;
        item.call = transferAgentCall(reg, from.address, act.to, a.agentId);
        a.owners.push(getAddress(act.to));
        break;
      }
      case 'setType': {
        const a = owner(act.agent);
        item.signer = ownerActor(a);
        item.agentId = a.agentId;
        item.call = setMetadataCall(reg, a.agentId, 'type', act.type);
        a.type = act.type;
        break;
      }
      case 'setURI': {
        const a = owner(act.agent);
        item.signer = ownerActor(a);
        item.agentId = a.agentId;
        item.call = setAgentURICall(reg, a.agentId, act.uri);
        a.uri = act.uri;
        break;
      }
      case 'rate': {
        const a = owner(act.agent);
        const current = a.owners[a.owners.length - 1]!;
        if (act.rater.address === current) {
          throw new Error(`${plan.network}: ${act.rater.label} would rate its own agent ${a.name}`);
        }
        const key = `${a.agentId}|${act.rater.address}`;
        const feedbackIndex = (lastIndex.get(key) ?? 0) + 1;
        lastIndex.set(key, feedbackIndex);
        const s = act.spec;
        item.signer = act.rater;
        item.agentId = a.agentId;
        item.feedbackIndex = feedbackIndex;
        item.ownerAtRating = current;
        item.call = giveFeedbackCall(reg, {
          agentId: a.agentId,
          value: s.value,
          valueDecimals: s.valueDecimals,
          tag1: s.tag1,
          tag2: s.tag2,
          endpoint: s.endpoint,
          feedbackURI: s.feedbackURI,
          feedbackHash: feedbackHashOf(s.feedbackURI),
        });
        break;
      }
      case 'revoke': {
        const rated = items.find((x) => x.action === act.rating);
        if (!rated || rated.feedbackIndex === undefined || rated.t >= item.t) {
          throw new Error(`${plan.network}: revocation before its rating`);
        }
        item.signer = act.rating.rater;
        item.agentId = rated.agentId!;
        item.feedbackIndex = rated.feedbackIndex;
        item.call = revokeFeedbackCall(reg, rated.agentId!, rated.feedbackIndex);
        break;
      }
    }
  }
  return { network: plan.network, items, agents };
}

/** The hash a client would publish with an off-chain feedback file: keccak256 of the URI here. */
function feedbackHashOf(uri: string): Hex {
  return uri === '' ? ZERO_HASH : keccak256(stringToHex(uri));
}

// ------------------------------------------------------------------ execution

/** Blocks hold at most this many transactions (gas bounds × this stays under the block gas limit). */
const MAX_TX_PER_BLOCK = 30;
const FUNDING = `0x${(1_000n * 10n ** 18n).toString(16)}`;

async function execute(sim: Simulation, sn: ScenarioNode): Promise<void> {
  const { rpcUrl } = sn.registries;
  const client = publicClientFor(rpcUrl);
  const rpc = (method: string, params: unknown[]) => client.request({ method, params } as never);

  const latest = await client.getBlock({ blockTag: 'latest' });
  if (Number(latest.timestamp) >= at(0, 0)) {
    throw new Error(
      `${sim.network}: the node is already at ${new Date(Number(latest.timestamp) * 1000).toISOString()}; ` +
        `start it with a genesisTimestamp before ${new Date(SCENARIO_START * 1000).toISOString()}`,
    );
  }
  const minted = await client.readContract({
    address: sn.registries.identityRegistry,
    abi: identityRegistryAbi,
    functionName: 'totalAgents',
  });
  if (minted !== 0n) throw new Error(`${sim.network}: the scenario needs freshly deployed registries`);

  // Fund every signer (no transaction: hardhat_setBalance writes the state directly).
  const signers = new Map<Address, Actor>();
  for (const item of sim.items) signers.set(item.signer!.address, item.signer!);
  await Promise.all([...signers.keys()].map((address) => rpc('hardhat_setBalance', [address, FUNDING])));

  // Group by timestamp: one block per distinct time.
  const blocks: Timed[][] = [];
  for (const item of sim.items) {
    const last = blocks[blocks.length - 1];
    if (last && last[0]!.t === item.t) last.push(item);
    else blocks.push([item]);
  }

  const nonces = new Map<Address, number>();
  for (const block of blocks) {
    if (block.length > MAX_TX_PER_BLOCK)
      throw new Error(`${sim.network}: too many transactions in one block`);
    const results = await sendCallsInBlock(
      rpcUrl,
      block.map((item) => ({ signer: item.signer!.key, call: item.call! })),
      { timestamp: block[0]!.t, nonces },
    );
    results.forEach((res, i) => {
      const item = block[i]!;
      item.txHash = res.txHash;
      item.blockNumber = Number(res.blockNumber);
      if (item.action.kind === 'register' && res.agentId !== BigInt(item.agentId!)) {
        throw new Error(
          `${sim.network}: expected agentId ${item.agentId}, the registry minted ${res.agentId}`,
        );
      }
    });
  }

  // Cheap cross-check of the simulation against the chain: every agent's final owner.
  const owners = await Promise.all(
    [...sim.agents.values()].map((a) =>
      client.readContract({
        address: sn.registries.identityRegistry,
        abi: identityRegistryAbi,
        functionName: 'ownerOf',
        args: [BigInt(a.agentId)],
      }),
    ),
  );
  [...sim.agents.values()].forEach((a, i) => {
    if (getAddress(owners[i]!) !== a.owners[a.owners.length - 1]) {
      throw new Error(`${sim.network}: owner of agent ${a.agentId} differs from the plan`);
    }
  });
}

// ------------------------------------------------------------------ facts

function collectFacts(sims: Simulation[], nodes: ScenarioNode[]): ScenarioFacts {
  const agents: AgentFact[] = [];
  const ratings: RatingFact[] = [];
  const revoked: RevocationFact[] = [];
  const chains = {} as Record<ScenarioNetwork, ChainFacts>;
  const marks = new Map<string, RatingFact>();
  const byName = new Map<string, AgentFact>();
  let endTimestamp = 0;

  for (const sim of sims) {
    const sn = nodes.find((n) => n.network === sim.network)!;
    const net = sim.network;
    const revokedItems = new Set<Action>();
    for (const item of sim.items) {
      if (item.action.kind === 'revoke') revokedItems.add(item.action.rating);
      endTimestamp = Math.max(endTimestamp, item.t);
    }
    const chainRatings: RatingFact[] = [];
    for (const item of sim.items) {
      const act = item.action;
      if (act.kind === 'rate') {
        const fact: RatingFact = {
          network: net,
          agentId: item.agentId!,
          rater: act.rater.address,
          feedbackIndex: item.feedbackIndex!,
          value: act.spec.value.toString(),
          valueDecimals: act.spec.valueDecimals,
          tag1: act.spec.tag1,
          tag2: act.spec.tag2,
          endpoint: act.spec.endpoint,
          feedbackURI: act.spec.feedbackURI,
          feedbackHash: feedbackHashOf(act.spec.feedbackURI),
          ownerAtRating: item.ownerAtRating!,
          timestamp: item.t,
          blockNumber: item.blockNumber!,
          txHash: item.txHash!,
          revoked: revokedItems.has(act),
        };
        chainRatings.push(fact);
        if (act.mark) marks.set(act.mark, fact);
      } else if (act.kind === 'revoke') {
        revoked.push({
          network: net,
          agentId: item.agentId!,
          rater: act.rating.rater.address,
          feedbackIndex: item.feedbackIndex!,
          txHash: item.txHash!,
          timestamp: item.t,
        });
      }
    }
    ratings.push(...chainRatings);

    for (const a of sim.agents.values()) {
      const own = chainRatings.filter((r) => r.agentId === a.agentId);
      const fact: AgentFact = {
        network: net,
        agentId: a.agentId,
        minter: RELAYER().address,
        owner: a.owners[a.owners.length - 1]!,
        owners: [...a.owners],
        agentURI: a.uri,
        ...(a.type ? { type: a.type } : {}),
        registeredAt: a.registeredAt,
        registeredBlock: a.registeredItem.blockNumber!,
        ratings: own.length,
        activeRatings: own.filter((r) => !r.revoked).length,
      };
      agents.push(fact);
      byName.set(`${net}/${a.name}`, fact);
    }

    const blockNumbers = sim.items.map((i) => i.blockNumber!);
    chains[net] = {
      chainId: sn.registries.chainId,
      identityRegistry: sn.registries.identityRegistry,
      reputationRegistry: sn.registries.reputationRegistry,
      deployBlock: Number(sn.registries.deployBlock),
      firstBlock: Math.min(...blockNumbers),
      lastBlock: Math.max(...blockNumbers),
      agents: sim.agents.size,
      ratings: chainRatings.length,
      revocations: sim.items.filter((i) => i.action.kind === 'revoke').length,
      transactions: sim.items.length,
    };
  }

  const agent = (ref: string): AgentFact => {
    const a = byName.get(ref);
    if (!a) throw new Error(`scenario fact: unknown agent ${ref}`);
    return a;
  };
  const refOf = (a: AgentFact): AgentRef => ({ network: a.network, agentId: a.agentId });
  const ratingsOf = (a: AgentFact) =>
    ratings.filter((r) => r.network === a.network && r.agentId === a.agentId);
  const ratingRef = (mark: string): RatingRef => {
    const r = marks.get(mark);
    if (!r) throw new Error(`scenario fact: no rating marked ${mark}`);
    return {
      network: r.network,
      agentId: r.agentId,
      rater: r.rater,
      feedbackIndex: r.feedbackIndex,
      txHash: r.txHash,
    };
  };
  const ownedBy = (address: Address) => agents.filter((a) => a.owner === address).map(refOf);

  const baseSim = sims.find((s) => s.network === 'base')!;
  const transferItem = baseSim.items.find(
    (i) =>
      i.action.kind === 'transfer' &&
      i.action.agent === 'traded-4' &&
      i.action.to === actor('owner:buyer').address,
  )!;
  const burnItem = baseSim.items.find((i) => i.action.kind === 'transfer' && i.action.to === BURN_ADDRESS)!;
  const selfItem = baseSim.items.find(
    (i) => i.action.kind === 'transfer' && i.action.to === actor('owner:selfrater').address,
  )!;

  const traded = agent('base/traded-4');
  const burned = agent('base/burned-5');
  const gifted = agent('base/gifted-6');
  const campaignAgent = agent('base/campaign-3');
  const selfRater = actor('owner:selfrater').address;

  const subjects = new Map<Address, { subjects: Set<string>; ratings: number }>();
  for (const r of ratings) {
    const s = subjects.get(r.rater) ?? { subjects: new Set<string>(), ratings: 0 };
    s.subjects.add(`${r.network}/${r.agentId}`);
    s.ratings++;
    subjects.set(r.rater, s);
  }

  const outOfDomain = (['negative', 'above100', 'decimals2', 'extreme'] as const).map((kind) => {
    const r = marks.get(kind)!;
    return { ...ratingRef(kind), kind, value: r.value, valueDecimals: r.valueDecimals };
  });

  const hosts = new Set<string>();
  for (const r of ratings) hosts.add(r.feedbackURI.startsWith('https://') ? new URL(r.feedbackURI).host : '');

  return {
    startTimestamp: SCENARIO_START,
    endTimestamp,
    relayer: RELAYER().address,
    chains,
    totals: {
      agents: agents.length,
      ratings: ratings.length,
      revocations: revoked.length,
      transactions: Object.values(chains).reduce((n, c) => n + c.transactions, 0),
    },
    agents,
    ratings,
    revoked,
    multiChainOwner: {
      address: actor('owner:multichain').address,
      agents: ownedBy(actor('owner:multichain').address),
    },
    burnOwnedAgent: {
      ...refOf(burned),
      owner: BURN_ADDRESS,
      previousOwner: actor('owner:dune').address,
      burnedAt: burnItem.t,
      ratings: burned.ratings,
      ratingsBeforeBurn: ratingsOf(burned).filter((r) => r.timestamp < burnItem.t).length,
      ratingsAfterBurn: ratingsOf(burned).filter((r) => r.timestamp > burnItem.t).length,
    },
    selfRater: {
      ...refOf(gifted),
      address: selfRater,
      previousOwner: actor('owner:ember').address,
      selfRatings: ratingsOf(gifted).filter((r) => r.rater === selfRater).length,
      receivedAt: selfItem.t,
    },
    transferredAgent: {
      ...refOf(traded),
      oldOwner: actor('owner:seller').address,
      newOwner: actor('owner:buyer').address,
      transferredAt: transferItem.t,
      txHash: transferItem.txHash!,
      ratingsBefore: ratingsOf(traded).filter((r) => r.timestamp < transferItem.t).length,
      ratingsAfter: ratingsOf(traded).filter((r) => r.timestamp > transferItem.t).length,
    },
    zeroRating: ratingRef('zero'),
    outOfDomain,
    hostileTag1: { ...ratingRef('hostile'), tag1: HOSTILE_TAG1 },
    unratedOwner: {
      address: actor('owner:unrated').address,
      agents: ownedBy(actor('owner:unrated').address),
    },
    sameAgentIdOnTwoChains: {
      agentId: 0,
      owners: (['base', 'optimism'] as const).map((network) => ({
        network,
        owner: agents.find((a) => a.network === network && a.agentId === 0)!.owner,
      })),
    },
    campaign: {
      ...refOf(campaignAgent),
      rater: actor('rater:campaign').address,
      ratings: ratingsOf(campaignAgent).filter((r) => r.rater === actor('rater:campaign').address).length,
    },
    prolificRaters: [...subjects.entries()]
      .map(([address, s]) => ({ address, subjects: s.subjects.size, ratings: s.ratings }))
      .sort((a, b) => b.subjects - a.subjects || b.ratings - a.ratings || a.address.localeCompare(b.address))
      .slice(0, 5),
    typedAgents: agents.filter((a) => a.type !== undefined).map((a) => ({ ...refOf(a), type: a.type! })),
    tag1Facets: [...TAG1_FACETS],
    feedbackHosts: [...hosts].sort(),
  };
}

// ------------------------------------------------------------------ entry points

/**
 * Starts one fresh local node per scenario network (with its real chain id) and deploys the
 * registries on each, from the node's first dev account. Ready for {@link playScenario}.
 * Close them with `Promise.all(nodes.map((n) => n.node.close()))`.
 */
export async function startScenarioNodes(
  opts: { ports?: Partial<Record<ScenarioNetwork, number>> } = {},
): Promise<ScenarioNode[]> {
  const started: LocalNode[] = [];
  try {
    return await Promise.all(
      SCENARIO_NETWORKS.map(async (network) => {
        const node = await startLocalNode({
          chainId: SCENARIO_CHAIN_IDS[network],
          port: opts.ports?.[network] ?? 0,
        });
        started.push(node);
        return { network, node, registries: await deployRegistries(node.rpcUrl, node.privateKeys[0]!) };
      }),
    );
  } catch (err) {
    await Promise.all(started.map((n) => n.close()));
    throw err;
  }
}

/**
 * Plays the scenario on three fresh local chains (one per network: base, optimism, arbitrum), each
 * with freshly deployed registries and a latest block before {@link SCENARIO_START} (the default
 * genesis of startLocalNode qualifies). Returns what was played.
 */
export async function playScenario(nodes: ScenarioNode[]): Promise<ScenarioFacts> {
  for (const network of SCENARIO_NETWORKS) {
    if (nodes.filter((n) => n.network === network).length !== 1) {
      throw new Error(`playScenario needs exactly one node for ${network}`);
    }
  }
  const plans: Record<ScenarioNetwork, PlanResult> = {
    base: planBase(),
    optimism: planOptimism(),
    arbitrum: planArbitrum(),
  };
  addTraffic(plans.base, 110);
  addTraffic(plans.optimism, 80);
  addTraffic(plans.arbitrum, 70);

  const sims = SCENARIO_NETWORKS.map((network) => {
    const sn = nodes.find((n) => n.network === network)!;
    return simulate(plans[network].plan, sn.registries);
  });
  await Promise.all(
    sims.map((sim) =>
      execute(
        sim,
        nodes.find((n) => n.network === sim.network)!,
      ),
    ),
  );
  return collectFacts(sims, nodes);
}
