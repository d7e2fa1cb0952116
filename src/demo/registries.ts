/**
 * Deploys the project's own ERC-8004 registries (contracts/*.sol, compiled by contracts/build.ts)
 * to a JSON-RPC node and drives them: typed ABIs, call encoders, and small helpers that send one
 * transaction and wait for its receipt. Used by the demo scenario and by tests, against the
 * in-process node of ./local-node.ts (any JSON-RPC node works).
 *
 * Transactions are signed locally (EIP-1559, explicit nonce, gas and fees) and sent raw, so the
 * node need not know the keys and a scripted run produces the same transaction hashes every time.
 */
import {
  BaseError,
  createPublicClient,
  custom,
  getAddress,
  encodeDeployData,
  encodeFunctionData,
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
type Signer = Hex | LocalAccount;

/** One contract call, with a gas limit that is a safe upper bound (no estimation needed). */
export interface ContractCall {
  to: Address;
  data: Hex;
  gas: bigint;
}

interface TxResult {
  txHash: Hex;
  blockNumber: bigint;
  /** Set by {@link registerAgent} (and by {@link sendCallsInBlock} for register calls). */
  agentId?: bigint;
}

interface SendOptions {
  /** Timestamp (seconds) of the block that will hold the transaction (automine node). */
  timestamp?: number;
  /** Explicit nonce; default: the account's pending transaction count. */
  nonce?: number;
}

interface MetadataInput {
  key: string;
  /** Raw bytes (0x…) or a string stored as its UTF-8 bytes. */
  value: Hex | string;
}

interface FeedbackInput {
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

const ZERO_HASH: Hex = `0x${'00'.repeat(32)}`;

/**
 * Upper bound for the gas of one registry call: a base cost plus enough per 32-byte word of
 * calldata to store it (new storage slot ≈ 22k), log it and pay for the calldata. Measured calls
 * use well under half of it; the bound lets many calls share one block without estimation (which
 * cannot see the effect of earlier transactions of the same block).
 */
function gasBound(data: Hex, base = 250_000n): bigint {
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

function toAccount(signer: Signer): LocalAccount {
  if (typeof signer !== 'string') return signer;
  let account = accounts.get(signer);
  if (!account) {
    account = privateKeyToAccount(signer);
    accounts.set(signer, account);
  }
  return account;
}

/** 0x-prefixed even-length hex is taken as raw bytes; any other string as UTF-8 text. */
function toBytes(value: Hex | string): Hex {
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

function toTxResult(receipt: TransactionReceipt): TxResult {
  const result: TxResult = { txHash: receipt.transactionHash, blockNumber: receipt.blockNumber };
  const [registered] = parseEventLogs({
    abi: identityRegistryAbi,
    eventName: 'Registered',
    logs: receipt.logs,
  });
  if (registered) result.agentId = registered.args.agentId;
  return result;
}

// ------------------------------------------------------------------ deployment

/**
 * Deploys IdentityRegistry, then ReputationRegistry(identity), one block each, from the deployer.
 * `deployBlock` is the identity registry's block.
 */
export async function deployRegistries(rpcUrl: string, deployerPrivateKey: Hex): Promise<Registries> {
  const client = publicClientFor(rpcUrl);
  const identity = await sendCall(rpcUrl, deployerPrivateKey, { data: identityRegistryArtifact.bytecode });
  if (!identity.contractAddress) throw new Error('identity registry deployment returned no address');
  const reputation = await sendCall(rpcUrl, deployerPrivateKey, {
    data: encodeDeployData({
      abi: reputationRegistryAbi,
      bytecode: reputationRegistryArtifact.bytecode,
      args: [identity.contractAddress],
    }),
  });
  if (!reputation.contractAddress) throw new Error('reputation registry deployment returned no address');
  return {
    rpcUrl,
    chainId: await client.getChainId(),
    identityRegistry: getAddress(identity.contractAddress),
    reputationRegistry: getAddress(reputation.contractAddress),
    deployBlock: identity.blockNumber,
  };
}

// ------------------------------------------------------------------ call encoders

type RegistryAddresses = Pick<Registries, 'identityRegistry' | 'reputationRegistry'>;

export function registerAgentCall(
  reg: RegistryAddresses,
  agentURI: string,
  metadata: MetadataInput[] = [],
): ContractCall {
  const data =
    metadata.length === 0
      ? encodeFunctionData({ abi: identityRegistryAbi, functionName: 'register', args: [agentURI] })
      : encodeFunctionData({
          abi: identityRegistryAbi,
          functionName: 'register',
          args: [agentURI, metadata.map((m) => ({ metadataKey: m.key, metadataValue: toBytes(m.value) }))],
        });
  return { to: reg.identityRegistry, data, gas: gasBound(data, 300_000n) };
}

export function transferAgentCall(
  reg: RegistryAddresses,
  from: Address,
  to: Address,
  agentId: bigint | number,
): ContractCall {
  const data = encodeFunctionData({
    abi: identityRegistryAbi,
    functionName: 'transferFrom',
    args: [from, to, BigInt(agentId)],
  });
  return { to: reg.identityRegistry, data, gas: gasBound(data) };
}

export function setMetadataCall(
  reg: RegistryAddresses,
  agentId: bigint | number,
  key: string,
  value: Hex | string,
): ContractCall {
  const data = encodeFunctionData({
    abi: identityRegistryAbi,
    functionName: 'setMetadata',
    args: [BigInt(agentId), key, toBytes(value)],
  });
  return { to: reg.identityRegistry, data, gas: gasBound(data) };
}

export function setAgentURICall(
  reg: RegistryAddresses,
  agentId: bigint | number,
  newURI: string,
): ContractCall {
  const data = encodeFunctionData({
    abi: identityRegistryAbi,
    functionName: 'setAgentURI',
    args: [BigInt(agentId), newURI],
  });
  return { to: reg.identityRegistry, data, gas: gasBound(data) };
}

export function giveFeedbackCall(reg: RegistryAddresses, fb: FeedbackInput): ContractCall {
  const data = encodeFunctionData({
    abi: reputationRegistryAbi,
    functionName: 'giveFeedback',
    args: [
      BigInt(fb.agentId),
      BigInt(fb.value),
      fb.valueDecimals ?? 0,
      fb.tag1 ?? '',
      fb.tag2 ?? '',
      fb.endpoint ?? '',
      fb.feedbackURI ?? '',
      fb.feedbackHash ?? ZERO_HASH,
    ],
  });
  return { to: reg.reputationRegistry, data, gas: gasBound(data, 300_000n) };
}

export function revokeFeedbackCall(
  reg: RegistryAddresses,
  agentId: bigint | number,
  feedbackIndex: bigint | number,
): ContractCall {
  const data = encodeFunctionData({
    abi: reputationRegistryAbi,
    functionName: 'revokeFeedback',
    args: [BigInt(agentId), BigInt(feedbackIndex)],
  });
  return { to: reg.reputationRegistry, data, gas: gasBound(data) };
}

export function appendResponseCall(
  reg: RegistryAddresses,
  agentId: bigint | number,
  client: Address,
  feedbackIndex: bigint | number,
  responseURI: string,
  responseHash: Hex = ZERO_HASH,
): ContractCall {
  const data = encodeFunctionData({
    abi: reputationRegistryAbi,
    functionName: 'appendResponse',
    args: [BigInt(agentId), client, BigInt(feedbackIndex), responseURI, responseHash],
  });
  return { to: reg.reputationRegistry, data, gas: gasBound(data) };
}

// ------------------------------------------------------------------ one-transaction helpers

/**
 * Each helper sends one transaction from `signer`, waits for the receipt and returns
 * `{ txHash, blockNumber }`. Gas is estimated, so a call the registry refuses throws with the
 * revert reason (e.g. "Self-feedback not allowed") before anything is mined.
 */
async function run(
  reg: Registries,
  signer: Signer,
  call: ContractCall,
  opts?: SendOptions,
): Promise<TxResult> {
  try {
    const receipt = await sendCall(reg.rpcUrl, signer, { to: call.to, data: call.data }, opts);
    return toTxResult(receipt);
  } catch (err) {
    // viem's message spans a dozen lines of request dump; keep the node's reason up front.
    if (err instanceof BaseError) throw new Error(err.details || err.shortMessage, { cause: err });
    throw err;
  }
}

/** Registers an agent minted to the signer; returns its agentId. */
export async function registerAgent(
  reg: Registries,
  signer: Signer,
  agentURI: string,
  opts: SendOptions & { metadata?: MetadataInput[] } = {},
): Promise<TxResult & { agentId: bigint }> {
  const result = await run(reg, signer, registerAgentCall(reg, agentURI, opts.metadata), opts);
  if (result.agentId === undefined) throw new Error(`no Registered log in ${result.txHash}`);
  return { ...result, agentId: result.agentId };
}

/** transferFrom(signer → to). */
export function transferAgent(
  reg: Registries,
  signer: Signer,
  agentId: bigint | number,
  to: Address,
  opts?: SendOptions,
): Promise<TxResult> {
  return run(reg, signer, transferAgentCall(reg, toAccount(signer).address, to, agentId), opts);
}

export function setMetadata(
  reg: Registries,
  signer: Signer,
  agentId: bigint | number,
  key: string,
  value: Hex | string,
  opts?: SendOptions,
): Promise<TxResult> {
  return run(reg, signer, setMetadataCall(reg, agentId, key, value), opts);
}

export function setAgentURI(
  reg: Registries,
  signer: Signer,
  agentId: bigint | number,
  newURI: string,
  opts?: SendOptions,
): Promise<TxResult> {
  return run(reg, signer, setAgentURICall(reg, agentId, newURI), opts);
}

export function giveFeedback(
  reg: Registries,
  signer: Signer,
  fb: FeedbackInput,
  opts?: SendOptions,
): Promise<TxResult> {
  return run(reg, signer, giveFeedbackCall(reg, fb), opts);
}

export function revokeFeedback(
  reg: Registries,
  signer: Signer,
  agentId: bigint | number,
  feedbackIndex: bigint | number,
  opts?: SendOptions,
): Promise<TxResult> {
  return run(reg, signer, revokeFeedbackCall(reg, agentId, feedbackIndex), opts);
}

/** appendResponse(agentId, client, feedbackIndex, responseURI, responseHash) from `signer`. */
export function appendResponse(
  reg: Registries,
  signer: Signer,
  agentId: bigint | number,
  client: Address,
  feedbackIndex: bigint | number,
  responseURI: string,
  opts?: SendOptions & { responseHash?: Hex },
): Promise<TxResult> {
  return run(
    reg,
    signer,
    appendResponseCall(reg, agentId, client, feedbackIndex, responseURI, opts?.responseHash),
    opts,
  );
}
