/**
 * The registries' typed ABIs and artifacts, the shapes of their calls, and sending: transactions
 * signed locally (EIP-1559, explicit nonce, gas and fees) and sent raw, one at a time per sender
 * or several in one block, each awaited to its receipt. ./registries.ts deploys and drives the
 * registries with them.
 */
import {
  createPublicClient,
  custom,
  http,
  parseAbi,
  parseEventLogs,
  stringToHex,
  type Address,
  type Hex,
  type LocalAccount,
  type PublicClient,
  type TransactionReceipt,
} from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { localNodeAt, type LocalNode } from './local-node.js';
import identityArtifact from '../../contracts/artifacts/IdentityRegistry.json' with { type: 'json' };
import reputationArtifact from '../../contracts/artifacts/ReputationRegistry.json' with { type: 'json' };

// ------------------------------------------------------------------ ABIs

/**
 * Typed ABI of contracts/IdentityRegistry.sol (kept in step with the compiled artifact by
 * test/contracts.test.ts). Event signatures are those of the ERC-8004 mainnet registry.
 */
export const identityRegistryAbi = parseAbi([
  'struct MetadataEntry { string metadataKey; bytes metadataValue; }',
  'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
  'event Approval(address indexed owner, address indexed approved, uint256 indexed tokenId)',
  'event ApprovalForAll(address indexed owner, address indexed operator, bool approved)',
  'event MetadataUpdate(uint256 _tokenId)',
  'event Registered(uint256 indexed agentId, string agentURI, address indexed owner)',
  'event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy)',
  'event MetadataSet(uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue)',
  'function register() returns (uint256 agentId)',
  'function register(string agentURI) returns (uint256 agentId)',
  'function register(string agentURI, MetadataEntry[] metadata) returns (uint256 agentId)',
  'function totalAgents() view returns (uint256)',
  'function tokenURI(uint256 agentId) view returns (string)',
  'function setAgentURI(uint256 agentId, string newURI)',
  'function getMetadata(uint256 agentId, string metadataKey) view returns (bytes)',
  'function setMetadata(uint256 agentId, string metadataKey, bytes metadataValue)',
  'function getAgentWallet(uint256 agentId) view returns (address)',
  'function name() view returns (string)',
  'function symbol() view returns (string)',
  'function supportsInterface(bytes4 interfaceId) pure returns (bool)',
  'function balanceOf(address owner) view returns (uint256)',
  'function ownerOf(uint256 agentId) view returns (address)',
  'function approve(address to, uint256 agentId)',
  'function getApproved(uint256 agentId) view returns (address)',
  'function setApprovalForAll(address operator, bool approved)',
  'function isApprovedForAll(address owner, address operator) view returns (bool)',
  'function transferFrom(address from, address to, uint256 agentId)',
  'function safeTransferFrom(address from, address to, uint256 agentId)',
  'function safeTransferFrom(address from, address to, uint256 agentId, bytes data)',
]);

/** Typed ABI of contracts/ReputationRegistry.sol (int128 value layout of the mainnet registry). */
export const reputationRegistryAbi = parseAbi([
  'constructor(address identityRegistry_)',
  'event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, int128 value, uint8 valueDecimals, string indexed indexedTag1, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)',
  'event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex)',
  'event ResponseAppended(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, address indexed responder, string responseURI, bytes32 responseHash)',
  'function MAX_VALUE_DECIMALS() view returns (uint8)',
  'function MAX_ABS_VALUE() view returns (int128)',
  'function getIdentityRegistry() view returns (address)',
  'function giveFeedback(uint256 agentId, int128 value, uint8 valueDecimals, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)',
  'function revokeFeedback(uint256 agentId, uint64 feedbackIndex)',
  'function appendResponse(uint256 agentId, address clientAddress, uint64 feedbackIndex, string responseURI, bytes32 responseHash)',
  'function getLastIndex(uint256 agentId, address clientAddress) view returns (uint64)',
  'function readFeedback(uint256 agentId, address clientAddress, uint64 feedbackIndex) view returns (int128 value, uint8 valueDecimals, string tag1, string tag2, bool isRevoked)',
  'function getClients(uint256 agentId) view returns (address[])',
  'function getSummary(uint256 agentId, address[] clientAddresses, string tag1, string tag2) view returns (uint64 count, int128 summaryValue, uint8 summaryValueDecimals)',
]);

/** The compiled artifacts as committed ({contractName, abi, bytecode}). */
export const identityRegistryArtifact = identityArtifact as {
  contractName: string;
  abi: unknown[];
  bytecode: Hex;
};
export const reputationRegistryArtifact = reputationArtifact as {
  contractName: string;
  abi: unknown[];
  bytecode: Hex;
};

// ------------------------------------------------------------------ types

/** A deployment of both registries on one chain, as returned by {@link deployRegistries}. */
export interface Registries {
  rpcUrl: string;
  chainId: number;
  identityRegistry: Address;
  reputationRegistry: Address;
  /** Block of the first deployment (the identity registry): where an indexer starts scanning. */
  deployBlock: bigint;
}

/** A private key or a viem local account. */
export type Signer = Hex | LocalAccount;

/** One contract call, with a gas limit that is a safe upper bound (no estimation needed). */
export interface ContractCall {
  to: Address;
  data: Hex;
  gas: bigint;
}

export interface TxResult {
  txHash: Hex;
  blockNumber: bigint;
  /** Set by {@link registerAgent} (and by {@link sendCallsInBlock} for register calls). */
  agentId?: bigint;
}

export interface SendOptions {
  /** Timestamp (seconds) of the block that will hold the transaction (automine node). */
  timestamp?: number;
  /** Explicit nonce; default: the account's pending transaction count. */
  nonce?: number;
}

export interface MetadataInput {
  key: string;
  /** Raw bytes (0x…) or a string stored as its UTF-8 bytes. */
  value: Hex | string;
}

export interface FeedbackInput {
  agentId: bigint | number;
  value: bigint | number;
  valueDecimals?: number;
  tag1?: string;
  tag2?: string;
  endpoint?: string;
  feedbackURI?: string;
  feedbackHash?: Hex;
}

// ------------------------------------------------------------------ fees, gas, clients

/**
 * Fixed EIP-1559 fees. The local node starts at a 1 gwei base fee that only falls while blocks stay
 * under half full, so these always suffice, and fixed fees keep transaction hashes reproducible.
 */
const MAX_FEE_PER_GAS = 20_000_000_000n;
const MAX_PRIORITY_FEE_PER_GAS = 1_000_000_000n;

export const ZERO_HASH: Hex = `0x${'00'.repeat(32)}`;

/**
 * Upper bound for the gas of one registry call: a base cost plus enough per 32-byte word of
 * calldata to store it (new storage slot ≈ 22k), log it and pay for the calldata. Measured calls
 * use well under half of it; the bound lets many calls share one block without estimation (which
 * cannot see the effect of earlier transactions of the same block).
 */
export function gasBound(data: Hex, base = 250_000n): bigint {
  const words = BigInt(Math.ceil((data.length - 2) / 64));
  return base + 40_000n * words;
}

const clients = new Map<string, PublicClient>();
const inProcessClients = new WeakMap<LocalNode, PublicClient>();

/**
 * A viem public client for an RPC URL. A node running in this process (local-node.ts) is called
 * directly, without HTTP: the demo's scenario sends hundreds of transactions, and a JSON-RPC round
 * trip over a local socket costs more CPU than the node's own work. Any other URL gets an HTTP
 * client whose concurrent requests are sent as JSON-RPC batches.
 */
export function publicClientFor(rpcUrl: string): PublicClient {
  const node = localNodeAt(rpcUrl);
  if (node) {
    let direct = inProcessClients.get(node);
    if (!direct) {
      direct = createPublicClient({
        transport: custom(
          { request: ({ method, params }) => node.request(method, params ?? []) },
          { retryCount: 0 },
        ),
        pollingInterval: 50,
      });
      inProcessClients.set(node, direct);
    }
    return direct;
  }
  let client = clients.get(rpcUrl);
  if (!client) {
    client = createPublicClient({
      // A node in another process answers only when its event loop is free: on a loaded machine
      // an answer can take long.
      transport: http(rpcUrl, { batch: { wait: 0 }, retryCount: 0, timeout: 180_000 }),
      pollingInterval: 50,
    });
    clients.set(rpcUrl, client);
  }
  return client;
}

const accounts = new Map<Hex, LocalAccount>();

export function toAccount(signer: Signer): LocalAccount {
  if (typeof signer !== 'string') return signer;
  let account = accounts.get(signer);
  if (!account) {
    account = privateKeyToAccount(signer);
    accounts.set(signer, account);
  }
  return account;
}

/** 0x-prefixed even-length hex is taken as raw bytes; any other string as UTF-8 text. */
export function toBytes(value: Hex | string): Hex {
  return /^0x([0-9a-fA-F]{2})*$/.test(value) ? (value as Hex) : stringToHex(value);
}

/** Serialises sends per (node, sender): concurrent helper calls from one account must not reuse a nonce. */
const senderQueues = new Map<string, Promise<unknown>>();

function serialised<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = senderQueues.get(key) ?? Promise.resolve();
  const run = previous.then(task, task);
  const settled = run.catch(() => undefined);
  senderQueues.set(key, settled);
  void settled.then(() => {
    if (senderQueues.get(key) === settled) senderQueues.delete(key);
  });
  return run;
}

async function signCall(
  account: LocalAccount,
  chainId: number,
  nonce: number,
  call: { to?: Address; data: Hex; gas: bigint },
): Promise<Hex> {
  return account.signTransaction({
    type: 'eip1559',
    chainId,
    nonce,
    gas: call.gas,
    maxFeePerGas: MAX_FEE_PER_GAS,
    maxPriorityFeePerGas: MAX_PRIORITY_FEE_PER_GAS,
    ...(call.to ? { to: call.to } : {}),
    data: call.data,
  });
}

async function receiptOf(client: PublicClient, hash: Hex): Promise<TransactionReceipt> {
  // On an automine node the receipt exists as soon as the send returns: ask once, then poll.
  try {
    return await client.getTransactionReceipt({ hash });
  } catch {
    return client.waitForTransactionReceipt({ hash, pollingInterval: 50, timeout: 60_000 });
  }
}

/**
 * Signs and sends one transaction, waits for its receipt and throws if it reverted.
 * The gas limit is the call's bound, or an estimate (which surfaces revert reasons early) when
 * `estimate` is set.
 */
export async function sendCall(
  rpcUrl: string,
  signer: Signer,
  call: { to?: Address; data: Hex; gas?: bigint },
  opts: SendOptions = {},
): Promise<TransactionReceipt> {
  const client = publicClientFor(rpcUrl);
  const account = toAccount(signer);
  return serialised(`${rpcUrl}|${account.address}`, async () => {
    const [chainId, nonce, gas] = await Promise.all([
      client.getChainId(),
      opts.nonce ?? client.getTransactionCount({ address: account.address, blockTag: 'pending' }),
      call.gas ??
        client
          .estimateGas({ account: account.address, ...(call.to ? { to: call.to } : {}), data: call.data })
          .then((g) => (g * 13n) / 10n),
    ]);
    const raw = await signCall(account, chainId, nonce, { ...call, gas });
    if (opts.timestamp !== undefined) {
      await client.request({ method: 'evm_setNextBlockTimestamp', params: [opts.timestamp] } as never);
    }
    const hash = await client.sendRawTransaction({ serializedTransaction: raw });
    const receipt = await receiptOf(client, hash);
    if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`);
    return receipt;
  });
}

/**
 * Puts several calls into ONE block, in the given order, at the given timestamp: automine is
 * switched off while the transactions are queued (the node's mempool is FIFO), then the block is
 * mined with `evm_mine [timestamp]` and automine restored. Nonces are tracked locally, gas limits
 * are the calls' bounds (`opts.nonces`, if given, is read and advanced). The node must not be used
 * by anyone else meanwhile.
 * Throws if any transaction reverted. Results are in the order of `items`.
 */
export async function sendCallsInBlock(
  rpcUrl: string,
  items: { signer: Signer; call: ContractCall }[],
  opts: { timestamp?: number; nonces?: Map<Address, number> } = {},
): Promise<TxResult[]> {
  const client = publicClientFor(rpcUrl);
  const rpc = (method: string, params: unknown[]) => client.request({ method, params } as never);
  const chainId = await client.getChainId();

  // Next nonce per sender; a caller sending many blocks passes one map to skip the look-ups.
  const nonces = opts.nonces ?? new Map<Address, number>();
  const signed: Hex[] = [];
  for (const { signer, call } of items) {
    const account = toAccount(signer);
    let nonce = nonces.get(account.address);
    if (nonce === undefined) {
      nonce = await client.getTransactionCount({ address: account.address, blockTag: 'pending' });
    }
    nonces.set(account.address, nonce + 1);
    signed.push(await signCall(account, chainId, nonce, call));
  }

  const hashes: Hex[] = [];
  await rpc('evm_setAutomine', [false]);
  try {
    for (const raw of signed) hashes.push(await client.sendRawTransaction({ serializedTransaction: raw }));
    await rpc('evm_mine', opts.timestamp === undefined ? [] : [opts.timestamp]);
  } finally {
    await rpc('evm_setAutomine', [true]);
  }

  const receipts = await Promise.all(hashes.map((hash) => client.getTransactionReceipt({ hash })));
  const failed = receipts.filter((r) => r.status !== 'success');
  if (failed.length > 0) {
    throw new Error(
      `${failed.length} transaction(s) reverted: ${failed.map((r) => r.transactionHash).join(', ')}`,
    );
  }
  return receipts.map(toTxResult);
}

export function toTxResult(receipt: TransactionReceipt): TxResult {
  const result: TxResult = { txHash: receipt.transactionHash, blockNumber: receipt.blockNumber };
  const [registered] = parseEventLogs({
    abi: identityRegistryAbi,
    eventName: 'Registered',
    logs: receipt.logs,
  });
  if (registered) result.agentId = registered.args.agentId;
  return result;
}
