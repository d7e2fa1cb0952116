/**
 * What the scenario played, as facts an index must reproduce (agents, ratings, revocations,
 * owners per chain), collected from the simulations and the nodes' receipts.
 */
import type { Address, Hex } from 'viem';
import { type Action } from './plan.js';
import {
  BURN_ADDRESS,
  HOSTILE_TAG1,
  RELAYER,
  SCENARIO_START,
  type ScenarioNetwork,
  type ScenarioNode,
  TAG1_FACETS,
  actor,
} from './world.js';
import { type Simulation, feedbackHashOf } from './simulate.js';

// ------------------------------------------------------------------ facts (what was played)

/**
 * Facts are JSON-friendly: agent ids, feedback indexes and block numbers are numbers (all small),
 * rating values are exact decimal strings of the on-chain int128 (e.g. "8750" with valueDecimals 2).
 */
export interface AgentRef {
  network: ScenarioNetwork;
  agentId: number;
}

export interface RatingFact extends AgentRef {
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

export interface AgentFact extends AgentRef {
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

export interface RevocationFact extends AgentRef {
  rater: Address;
  feedbackIndex: number;
  txHash: Hex;
  timestamp: number;
}

export interface RatingRef extends AgentRef {
  rater: Address;
  feedbackIndex: number;
  txHash: Hex;
}

export interface ChainFacts {
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

// ------------------------------------------------------------------ facts

export function collectFacts(sims: Simulation[], nodes: ScenarioNode[]): ScenarioFacts {
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
