/**
 * The simulation of a chain's plan: agent ids, owners and feedback indexes known before anything
 * is sent, and the registry's rules checked.
 */
import { getAddress, keccak256, stringToHex, type Address, type Hex } from 'viem';
import {
  giveFeedbackCall,
  registerAgentCall,
  revokeFeedbackCall,
  setAgentURICall,
  setMetadataCall,
  transferAgentCall,
  type Registries,
} from '../registries.js';
import { type Actor, RELAYER, type ScenarioNetwork, ZERO_HASH, actorCache } from './world.js';
import { ChainPlan, type Timed } from './plan.js';

// ------------------------------------------------------------------ simulation

export interface AgentState {
  name: string;
  agentId: number;
  owners: Address[];
  uri: string;
  type?: string;
  registeredAt: number;
  registeredItem: Timed;
}

export interface Simulation {
  network: ScenarioNetwork;
  items: Timed[];
  agents: Map<string, AgentState>;
}

/**
 * Orders the plan by (time, insertion) and replays it in memory: assigns agent ids and feedback
 * indexes, tracks owners, enforces the registries' rules (no owner ratings, revocation by the
 * original rater) and builds each transaction. A broken plan fails here, before anything is sent.
 */
export function simulate(plan: ChainPlan, reg: Registries): Simulation {
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
export function feedbackHashOf(uri: string): Hex {
  return uri === '' ? ZERO_HASH : keccak256(stringToHex(uri));
}
