/**
 * Sending a simulated chain to its node block by block: every transaction sharing a timestamp in
 * one block (automine paused while they are queued).
 */
import { getAddress, type Address } from 'viem';
import { identityRegistryAbi, publicClientFor, sendCallsInBlock } from '../registries.js';
import { type Actor, SCENARIO_START, type ScenarioNode, at } from './world.js';
import { type Simulation } from './simulate.js';
import { type Timed } from './plan.js';

// ------------------------------------------------------------------ execution

/** Blocks hold at most this many transactions (gas bounds × this stays under the block gas limit). */
export const MAX_TX_PER_BLOCK = 30;
export const FUNDING = `0x${(1_000n * 10n ** 18n).toString(16)}`;

export async function execute(sim: Simulation, sn: ScenarioNode): Promise<void> {
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
