/**
 * The census benchmark's chain node: anvil (the @foundry-rs/anvil binary from npm) with Multicall3
 * put at its canonical address, or with BENCH_CENSUS_NODE=edr the in-process EDR node of the demo
 * and the tests (its genesis already holds Multicall3).
 */
import type { Address, Hex } from 'viem';
import { MULTICALL3_ADDRESS } from '../../src/chains.js';
import { startLocalNode } from '../../src/demo/local-node.js';
import { startAnvil } from '../../test/helpers/anvil.js';
import multicallArtifact from '../../contracts/artifacts/Multicall3.json' with { type: 'json' };
import { NODE } from './options.js';

/** A node with the public dev keys both nodes fund (mnemonic "test … junk"). */
export interface BenchNode {
  rpcUrl: string;
  accounts: Address[];
  privateKeys: Hex[];
  request<T>(method: string, params?: unknown[]): Promise<T>;
  close(): Promise<void>;
}

export async function startBenchNode(): Promise<BenchNode> {
  const edr = await startLocalNode({ chainId: 8453 });
  if (NODE === 'edr') return { ...edr, request: edr.request, close: () => edr.close() };
  // (the EDR node only lends its dev keys and accounts: the same ones anvil funds)
  const { accounts, privateKeys } = edr;
  await edr.close();
  // (--prune-history: anvil keeps 16 states in memory, not one per block: 1.8 M slots otherwise take 10 GB and more)
  const anvil = await startAnvil(8453, [
    '--gas-limit',
    '200000000',
    '--block-base-fee-per-gas',
    '0',
    '--prune-history',
    '16',
  ]);
  await anvil.rpc('hardhat_setCode', [MULTICALL3_ADDRESS, multicallArtifact.deployedBytecode]);
  return { rpcUrl: anvil.rpcUrl, accounts, privateKeys, request: anvil.rpc, close: () => anvil.stop() };
}
