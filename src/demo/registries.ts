/**
 * Deploys the project's own ERC-8004 registries (contracts/*.sol, compiled by contracts/build.ts)
 * to a JSON-RPC node and drives them: call encoders, and small helpers that send one transaction
 * and wait for its receipt (the typed ABIs and the sending itself are in ./registry-transactions.ts,
 * re-exported here). Used by the demo scenario and by tests, against the in-process node of
 * ./local-node.ts (any JSON-RPC node works).
 *
 * Transactions are signed locally (EIP-1559, explicit nonce, gas and fees) and sent raw, so the
 * node need not know the keys and a scripted run produces the same transaction hashes every time.
 */
import { BaseError, getAddress, encodeDeployData, encodeFunctionData, type Address, type Hex } from 'viem';
import {
  ZERO_HASH,
  gasBound,
  identityRegistryAbi,
  identityRegistryArtifact,
  publicClientFor,
  reputationRegistryAbi,
  reputationRegistryArtifact,
  sendCall,
  toAccount,
  toBytes,
  toTxResult,
  type ContractCall,
  type FeedbackInput,
  type MetadataInput,
  type Registries,
  type SendOptions,
  type Signer,
  type TxResult,
} from './registry-transactions.js';

export {
  identityRegistryAbi,
  reputationRegistryAbi,
  identityRegistryArtifact,
  reputationRegistryArtifact,
  publicClientFor,
  sendCall,
  sendCallsInBlock,
  type Registries,
  type ContractCall,
} from './registry-transactions.js';

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
