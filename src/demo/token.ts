/**
 * A USDC-like ERC-20 (contracts/TestUSDC.sol, 6 decimals) on a local chain, for the demo's and the
 * tests' proofs of payment: deploy it, mint, and pay with a plain `transfer` (one ERC-20 Transfer
 * log from the payer to the payee).
 */
import { encodeFunctionData, getAddress, parseAbi, type Address, type Hex } from 'viem';
import tokenArtifact from '../../contracts/artifacts/TestUSDC.json' with { type: 'json' };
import { sendCall, type ContractCall } from './registries.js';

const tokenAbi = parseAbi([
  'function mint(address to, uint256 value)',
  'function transfer(address to, uint256 value) returns (bool)',
]);

/** Deploys the token from `deployerKey`; returns its address. */
export async function deployTestToken(rpcUrl: string, deployerKey: Hex): Promise<Address> {
  const r = await sendCall(rpcUrl, deployerKey, { data: tokenArtifact.bytecode as Hex });
  if (!r.contractAddress) throw new Error('token deployment returned no address');
  return getAddress(r.contractAddress);
}

export function mintCall(token: Address, to: Address, amount: bigint): ContractCall {
  return {
    to: token,
    data: encodeFunctionData({ abi: tokenAbi, functionName: 'mint', args: [to, amount] }),
    gas: 200_000n,
  };
}

export function tokenTransferCall(token: Address, to: Address, amount: bigint): ContractCall {
  return {
    to: token,
    data: encodeFunctionData({ abi: tokenAbi, functionName: 'transfer', args: [to, amount] }),
    gas: 200_000n,
  };
}

/** `signer` pays `amount` base units to `to`; returns the transaction hash. */
export async function payWithToken(
  rpcUrl: string,
  signer: Hex,
  token: Address,
  to: Address,
  amount: bigint,
): Promise<Hex> {
  return (await sendCall(rpcUrl, signer, tokenTransferCall(token, to, amount))).transactionHash;
}

/** Mints `amount` base units to `to` (anyone may mint the test token). */
export async function mintTestToken(
  rpcUrl: string,
  signer: Hex,
  token: Address,
  to: Address,
  amount: bigint,
): Promise<void> {
  await sendCall(rpcUrl, signer, mintCall(token, to, amount));
}
