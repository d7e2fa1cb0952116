/**
 * The built-in table of the 11 indexed networks: chain ids, the deployed ERC-8004 registry
 * addresses (the Solana program id), known deployment blocks and the 12-block reorg margin. Every
 * field can be overridden per chain through CHAINS_FILE or RPC_URL_<NETWORK> (see config.ts).
 */
type ChainKind = 'evm' | 'solana';

export interface ChainConfig {
  network: string;
  kind: ChainKind;
  /** EVM chain id; null for Solana. */
  chainId: number | null;
  rpcUrl: string;
  identityRegistry: string | null;
  reputationRegistry: string | null;
  /** Solana program id; null on EVM chains. */
  programId: string | null;
  /** First block (or slot) worth scanning; null = unknown (scan from the first block with code). */
  startBlock: number | null;
  /** Reorg margin: the scan stops at head - confirmations. */
  confirmations: number;
  enabled: boolean;
}

export const NETWORKS = [
  'base',
  'solana',
  'avalanche',
  'arbitrum',
  'optimism',
  'polygon',
  'celo',
  'ethereum',
  'bsc',
  'monad',
  'robinhood',
] as const;
export type Network = (typeof NETWORKS)[number];

/**
 * Multicall3's address, the same on most EVM chains (a keyless deployment): the census batches its
 * reads through its `aggregate3` where a chain has code there (checked per chain, per census).
 */
export const MULTICALL3_ADDRESS = '0xcA11bde05977b3631167028862bE2a173976CA11';

const IDENTITY = '0x8004A169FB4a3325136EB29fA0ceB6D2e539a432';
const REPUTATION = '0x8004BAa17C55a88189AE136b182e5fdA19dE9b63';

function evm(network: Network, chainId: number, rpcUrl: string, startBlock: number | null): ChainConfig {
  return {
    network,
    kind: 'evm',
    chainId,
    rpcUrl,
    identityRegistry: IDENTITY,
    reputationRegistry: REPUTATION,
    programId: null,
    startBlock,
    confirmations: 12,
    enabled: true,
  };
}

/** Built-in defaults; public RPC endpoints (override them for production use). */
export function builtInChains(): Record<Network, ChainConfig> {
  return {
    base: evm('base', 8453, 'https://mainnet.base.org', 41_663_799),
    solana: {
      network: 'solana',
      kind: 'solana',
      chainId: null,
      rpcUrl: 'https://api.mainnet-beta.solana.com',
      identityRegistry: null,
      reputationRegistry: null,
      programId: '8oo4dC4JvBLwy5tGgiH3WwK4B9PWxL9Z4XjA2jzkQMbQ',
      startBlock: null,
      confirmations: 32,
      enabled: true,
    },
    avalanche: evm('avalanche', 43114, 'https://api.avax.network/ext/bc/C/rpc', null),
    arbitrum: evm('arbitrum', 42161, 'https://arb1.arbitrum.io/rpc', null),
    optimism: evm('optimism', 10, 'https://mainnet.optimism.io', null),
    polygon: evm('polygon', 137, 'https://polygon-rpc.com', 82_458_528),
    celo: evm('celo', 42220, 'https://forno.celo.org', null),
    ethereum: evm('ethereum', 1, 'https://ethereum-rpc.publicnode.com', 24_339_924),
    bsc: evm('bsc', 56, 'https://bsc-dataseed.bnbchain.org', 79_031_671),
    monad: evm('monad', 143, 'https://rpc.monad.xyz', 52_952_898),
    robinhood: evm('robinhood', 4663, 'https://rpc.mainnet.chain.robinhood.com', null),
  };
}

export function isNetwork(s: string): s is Network {
  return (NETWORKS as readonly string[]).includes(s);
}
