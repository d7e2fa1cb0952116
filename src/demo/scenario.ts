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
import { startLocalNode, type LocalNode } from './local-node.js';
import { deployRegistries } from './registries.js';
import { type PlanResult, addTraffic, planArbitrum, planBase, planOptimism } from './scenario/plan.js';
import {
  SCENARIO_CHAIN_IDS,
  SCENARIO_NETWORKS,
  type ScenarioNetwork,
  type ScenarioNode,
} from './scenario/world.js';
import { type ScenarioFacts, collectFacts } from './scenario/facts.js';
import { execute } from './scenario/execute.js';
import { simulate } from './scenario/simulate.js';
export {
  SCENARIO_NETWORKS,
  SCENARIO_CHAIN_IDS,
  type ScenarioNode,
  SCENARIO_START,
  HOSTILE_TAG1,
  scenarioKeyOf,
} from './scenario/world.js';
export { type ScenarioFacts } from './scenario/facts.js';

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
