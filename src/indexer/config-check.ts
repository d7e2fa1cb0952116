/**
 * Checks of an EVM chain's configuration, made at the start of every pass (five cheap calls at
 * the head; a refusal makes a few more to name the fix): each registry has code; neither looks like an implementation contract behind a proxy
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

function builtInAddress(chain: ChainConfig, which: 'identityRegistry' | 'reputationRegistry'): Hex | null {
  if (!isNetwork(chain.network)) return null;
  const a = builtInChains()[chain.network][which];
  return a && a.toLowerCase() !== (chain[which] ?? '').toLowerCase() ? (a.toLowerCase() as Hex) : null;
}

const word = (h: Hex) => (h === '0x' || h === '0x0' ? 0n : BigInt(h));
const hasCode = (code: Hex) => code !== '0x' && code !== '0x0';
/** The address an EIP-1967 slot word holds (its low 20 bytes). */
const slotAddress = (h: Hex) => `0x${word(h).toString(16).padStart(40, '0').slice(-40)}` as Hex;

/**
 * The fix for an implementation address, naming the proxy of THIS chain where one is found: for
 * the identity registry, the proxy the configured reputation registry's getIdentityRegistry()
 * names; else the network's built-in address when it has code on this chain (said whether its
 * EIP-1967 implementation slot holds this implementation). A built-in address without code here
 * is not named (it would send the operator to another chain's address).
 */
async function proxyHint(
  reads: EvmReads,
  chain: ChainConfig,
  which: 'identityRegistry' | 'reputationRegistry',
  implementation: Hex,
  head: number,
): Promise<string> {
  if (which === 'identityRegistry' && chain.reputationRegistry) {
    const out = await reads
      .call(
        chain.reputationRegistry.toLowerCase() as Hex,
        encodeFunctionData({ abi: reputationAbi, functionName: 'getIdentityRegistry' }),
        head,
      )
      .catch(() => null);
    const named =
      out && out !== '0x'
        ? (
            decodeFunctionResult({
              abi: reputationAbi,
              functionName: 'getIdentityRegistry',
              data: out,
            }) as string
          ).toLowerCase()
        : null;
    if (
      named &&
      !/^0x0{40}$/.test(named) &&
      named !== implementation &&
      hasCode(await reads.code(named as Hex, head))
    ) {
      const slot = slotAddress(await reads.storage(named as Hex, EIP1967_IMPLEMENTATION_SLOT, head));
      return (
        `configure the proxy's address instead: set identityRegistry to ${named} (the reputationRegistry's getIdentityRegistry() names it` +
        `${slot === implementation ? '; its EIP-1967 implementation slot holds this address' : ''})`
      );
    }
  }
  const builtIn = builtInAddress(chain, which);
  if (builtIn && hasCode(await reads.code(builtIn, head))) {
    const slot = slotAddress(await reads.storage(builtIn, EIP1967_IMPLEMENTATION_SLOT, head));
    return slot === implementation
      ? `configure the proxy's address instead: set ${which} to ${builtIn} (the built-in ${which} of ${chain.network}, whose EIP-1967 implementation slot holds this address)`
      : `configure the proxy's address instead (the built-in ${which} of ${chain.network}, ${builtIn}, is a contract on this chain)`;
  }
  return `configure the proxy's address instead (the contract whose EIP-1967 implementation slot ${EIP1967_IMPLEMENTATION_SLOT} holds this address)`;
}

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
        `${net}: the ${which} ${address} is an implementation contract (its initializers are disabled): it holds no agents and emits no events; ${await proxyHint(reads, chain, which, address, head)}`,
      );
    }
  }
  const data = encodeFunctionData({ abi: reputationAbi, functionName: 'getIdentityRegistry' });
  const out = await reads.call(reputation, data, head);
  if (out === null || out === '0x') {
    throw new ConfigurationError(
      `${net}: the reputationRegistry ${reputation} does not answer getIdentityRegistry(): not an ERC-8004 reputation registry, or an implementation behind a proxy; ${await proxyHint(reads, chain, 'reputationRegistry', reputation, head)}`,
    );
  }
  const linked = decodeFunctionResult({ abi: reputationAbi, functionName: 'getIdentityRegistry', data: out });
  const l = linked.toLowerCase();
  if (/^0x0{40}$/.test(l)) {
    throw new ConfigurationError(
      `${net}: the reputationRegistry ${reputation} answers getIdentityRegistry() = the zero address: an implementation contract's empty storage; ${await proxyHint(reads, chain, 'reputationRegistry', reputation, head)}`,
    );
  }
  if (l !== identity) {
    throw new ConfigurationError(
      `${net}: the reputationRegistry ${reputation} belongs to the identity registry ${l}, but identityRegistry is configured as ${identity} ` +
        `(an implementation behind that proxy, or another deployment): set identityRegistry to ${l}`,
    );
  }
}
