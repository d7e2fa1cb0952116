/**
 * Checks of an EVM chain's configuration, made at the start of every pass (five cheap calls at
 * the head): each registry has code; neither looks like an implementation contract behind a proxy
 * (its initializers disabled in the ERC-7201 `Initializable` slot, as OpenZeppelin's upgradeable
 * implementations are deployed); the reputation registry's `getIdentityRegistry()` answers the
 * configured identity registry (an implementation's empty storage answers zero or reverts). A
 * failed check fails the chain with a message that says what to configure instead; the pass never
 * indexes an empty index from a wrong address and calls it complete.
 */
import { decodeFunctionResult, encodeFunctionData, parseAbi, type Hex } from 'viem';
import { builtInChains, isNetwork, type ChainConfig } from '../chains.js';
import type { EvmReads } from './evm-scanner.js';

/** OpenZeppelin 5's Initializable storage (ERC-7201 "openzeppelin.storage.Initializable"). */
export const INITIALIZABLE_SLOT: Hex = '0xf0c57e16840df040f15088dc2f81fe391c3923bec73e23a9662efc9c229c6a00';
/** `_disableInitializers()` writes type(uint64).max into the slot's low 8 bytes. */
const DISABLED = 0xffffffffffffffffn;
/** EIP-1967's implementation slot: set in a proxy, empty in an implementation. */
export const EIP1967_IMPLEMENTATION_SLOT: Hex =
  '0x360894a13ba1a3210667c828492db98dca3e2076cc3735a920a3ca505d382bbc';

const reputationAbi = parseAbi(['function getIdentityRegistry() view returns (address)']);

/** A configuration mistake: the chain is not indexed until it is fixed. */
export class ConfigurationError extends Error {
  override name = 'ConfigurationError';
}

function builtInAddress(chain: ChainConfig, which: 'identityRegistry' | 'reputationRegistry'): string | null {
  if (!isNetwork(chain.network)) return null;
  const a = builtInChains()[chain.network][which];
  return a && a.toLowerCase() !== (chain[which] ?? '').toLowerCase() ? a : null;
}

function proxyHint(chain: ChainConfig, which: 'identityRegistry' | 'reputationRegistry'): string {
  const builtIn = builtInAddress(chain, which);
  return builtIn
    ? `configure the proxy's address instead (the built-in ${which} of ${chain.network} is ${builtIn})`
    : `configure the proxy's address instead (the contract whose EIP-1967 implementation slot ${EIP1967_IMPLEMENTATION_SLOT} holds this address)`;
}

const word = (h: Hex) => (h === '0x' || h === '0x0' ? 0n : BigInt(h));

/** Throws a ConfigurationError naming the fix when the chain's registries are misconfigured. */
export async function checkRegistries(reads: EvmReads, chain: ChainConfig, head: number): Promise<void> {
  const identity = (chain.identityRegistry ?? '').toLowerCase() as Hex;
  const reputation = (chain.reputationRegistry ?? '').toLowerCase() as Hex;
  const net = chain.network;
  for (const [which, address] of [
    ['identityRegistry', identity],
    ['reputationRegistry', reputation],
  ] as const) {
    const code = await reads.code(address, head);
    if (code === '0x' || code === '0x0') {
      throw new ConfigurationError(
        `${net}: no contract code at the ${which} ${address} (block ${head}): wrong address, or RPC_URL_${net.toUpperCase()} serves another chain`,
      );
    }
    const init = word(await reads.storage(address, INITIALIZABLE_SLOT, head));
    if ((init & DISABLED) === DISABLED) {
      throw new ConfigurationError(
        `${net}: the ${which} ${address} is an implementation contract (its initializers are disabled): it holds no agents and emits no events; ${proxyHint(chain, which)}`,
      );
    }
  }
  const data = encodeFunctionData({ abi: reputationAbi, functionName: 'getIdentityRegistry' });
  const out = await reads.call(reputation, data, head);
  if (out === null || out === '0x') {
    throw new ConfigurationError(
      `${net}: the reputationRegistry ${reputation} does not answer getIdentityRegistry(): not an ERC-8004 reputation registry, or an implementation behind a proxy; ${proxyHint(chain, 'reputationRegistry')}`,
    );
  }
  const linked = decodeFunctionResult({ abi: reputationAbi, functionName: 'getIdentityRegistry', data: out });
  const l = linked.toLowerCase();
  if (/^0x0{40}$/.test(l)) {
    throw new ConfigurationError(
      `${net}: the reputationRegistry ${reputation} answers getIdentityRegistry() = the zero address: an implementation contract's empty storage; ${proxyHint(chain, 'reputationRegistry')}`,
    );
  }
  if (l !== identity) {
    throw new ConfigurationError(
      `${net}: the reputationRegistry ${reputation} belongs to the identity registry ${l}, but identityRegistry is configured as ${identity} ` +
        `(an implementation behind that proxy, or another deployment): set identityRegistry to ${l}`,
    );
  }
}
