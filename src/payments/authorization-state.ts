/**
 * Whether an EIP-3009 authorization has been spent on chain: the one answer the paywall (a buyer's
 * retry of a claim whose settlement outcome is unknown, `decideUnknown` in paywall.ts) and the
 * reconciliation (reconcile.ts) both act on.
 *
 * The chain is read through an `AuthorizationReader`: in `serve` and `repindex reconcile-payments`
 * `chainAuthorizationReader`, which reads the token's `authorizationState(payer, nonce)` through the
 * configured RPC of that payment network (the chain table's `rpcUrl`, e.g. RPC_URL_BASE; the token
 * is the asset the challenges quote there) and, when it is spent, looks for the settlement
 * transaction in the token's `AuthorizationUsed(authorizer, nonce)` log; tests give a stub.
 *
 * `spentOnChain` turns that read, and the transaction the claim already holds (the one the
 * facilitator reported with a `settlement_pending`), into one of four results:
 *
 *  - `spent`: used on chain, with its settlement transaction (from the log, else the claim's);
 *  - `spent_tx_unknown`: used on chain, but no transaction is visible (the provider refused or
 *    shortened the log range, and the claim holds none): the money moved, yet there is no receipt
 *    to serve it from, so it must not be recorded as settled yet;
 *  - `unspent`: not used on chain (it may still be settled, once);
 *  - `unreadable`: the chain could not be read (no RPC for the network, an RPC error, a network
 *    not offered): nothing can be decided from it now.
 *
 * What each caller then does (serve, settle, release, keep for the next run) is its own.
 */
import {
  createPublicClient,
  getAddress,
  http,
  parseAbi,
  parseAbiItem,
  type Hex,
  type PublicClient,
} from 'viem';
import type { Config } from '../config.js';
import { chainIdOf } from './exact-checks.js';

const tokenAbi = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
]);
const authorizationUsed = parseAbiItem(
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
);
/** How far back (blocks) the settlement transaction is looked for. */
const LOG_LOOKBACK_BLOCKS = 50_000n;

/** What the chain says about one authorization. */
export interface AuthorizationState {
  used: boolean;
  /** The settlement transaction, when found. */
  tx: string | null;
}

/** One authorization, as a reader is asked about it. */
export interface AuthorizationQuery {
  /** The payment network, CAIP-2 (`eip155:8453`). */
  network: string;
  /** The token contract. */
  asset: string;
  payer: string;
  nonce: string;
}

export type AuthorizationReader = (q: AuthorizationQuery) => Promise<AuthorizationState>;

/** Whether an authorization is spent on chain, as `spentOnChain` decides it. */
export type SpentOnChain =
  | { kind: 'spent'; tx: string }
  | { kind: 'spent_tx_unknown' }
  | { kind: 'unspent' }
  | { kind: 'unreadable'; error: string };

/**
 * Reads one authorization (`asset` undefined: its network is not offered) and decides it:
 * `claimTx` is the settlement transaction the claim already holds, used when the chain's log shows
 * none. Never throws: a failed read is `unreadable`, with its message (at most 200 characters).
 */
export async function spentOnChain(
  read: AuthorizationReader,
  q: Omit<AuthorizationQuery, 'asset'> & { asset: string | undefined },
  claimTx: string | null,
): Promise<SpentOnChain> {
  let state: AuthorizationState;
  try {
    if (q.asset === undefined) throw new Error(`payment network ${q.network} is not offered`);
    state = await read({ ...q, asset: q.asset });
  } catch (err) {
    return { kind: 'unreadable', error: (err instanceof Error ? err.message : String(err)).slice(0, 200) };
  }
  if (!state.used) return { kind: 'unspent' };
  const tx = state.tx ?? claimTx;
  return tx ? { kind: 'spent', tx } : { kind: 'spent_tx_unknown' };
}

/** Reads `authorizationState` (and the `AuthorizationUsed` log) through the configured RPC of each network. */
export function chainAuthorizationReader(config: Config): AuthorizationReader {
  const clients = new Map<number, PublicClient>();
  return async ({ network, asset, payer, nonce }) => {
    const chainId = chainIdOf(network);
    const chain = config.chains.find((c) => c.kind === 'evm' && c.chainId === chainId);
    if (chainId === null || !chain) throw new Error(`no RPC configured for payment network ${network}`);
    let client = clients.get(chainId);
    if (!client) {
      client = createPublicClient({
        transport: http(chain.rpcUrl, { timeout: 15_000, retryCount: 1 }),
      }) as PublicClient;
      clients.set(chainId, client);
    }
    const token = getAddress(asset);
    const used = (await client.readContract({
      address: token,
      abi: tokenAbi,
      functionName: 'authorizationState',
      args: [getAddress(payer), nonce as Hex],
    })) as boolean;
    if (!used) return { used, tx: null };
    let tx: string | null = null;
    try {
      const head = await client.getBlockNumber();
      const logs = await client.getLogs({
        address: token,
        event: authorizationUsed,
        args: { authorizer: getAddress(payer), nonce: nonce as Hex },
        fromBlock: head > LOG_LOOKBACK_BLOCKS ? head - LOG_LOOKBACK_BLOCKS : 0n,
        toBlock: head,
      });
      tx = logs[0]?.transactionHash ?? null;
    } catch {
      // a provider that refuses the range: the claim's own transaction (if any) stands
    }
    return { used, tx };
  };
}
