/**
 * The chain side of the census benchmark, written in bulk: the registries' storage slots for
 * every agent and feedback (contracts/*.sol's storage layout), stored through a 26-byte contract
 * swapped in for each registry's code (then put back), and a read-back of the layout through the
 * registries' own view functions.
 */
import {
  bytesToHex,
  decodeFunctionResult,
  encodeFunctionData,
  keccak256,
  type Address,
  type Hex,
} from 'viem';
import { identityRegistryAbi, reputationRegistryAbi, type Registries } from '../../src/demo/registries.js';
import type { BenchNode } from './node.js';
import {
  AGENTS,
  NODE,
  PER_AGENT,
  SLOTS_PER_TX,
  clientOf,
  ownerOf,
  revokedOf,
  uriOf,
  valueOf,
} from './options.js';

/**
 * Stores (slot, value) 32-byte pairs from its calldata, then stops:
 *   i = 0; while (i < calldatasize) { sstore(calldataload(i), calldataload(i + 32)); i += 64 }
 */
const BULK_STORE: Hex = '0x60005b3681101560185780602001358135556040016002565b00';

/** A 32-byte big-endian word of a non-negative integer below 2^53 (the hot path: no strings). */
function word(n: number): Uint8Array {
  const w = new Uint8Array(32);
  for (let k = 31; n > 0; k--) {
    w[k] = n % 256;
    n = Math.floor(n / 256);
  }
  return w;
}
function addrWord(a: string): Uint8Array {
  const w = new Uint8Array(32);
  w.set(Buffer.from(a.slice(2), 'hex'), 12);
  return w;
}
const slot = word;
const pair = new Uint8Array(64);
/** keccak256(key . base): a mapping's value slot. */
function mapSlot(key: Uint8Array, base: Uint8Array): Uint8Array {
  pair.set(key, 0);
  pair.set(base, 32);
  return keccak256(pair, 'bytes');
}
/** s + i (32-byte big-endian, with carry). */
function plus(s: Uint8Array, i: number): Uint8Array {
  const w = new Uint8Array(s);
  let carry = i;
  for (let k = 31; k >= 0 && carry > 0; k--) {
    const v = w[k]! + (carry % 256);
    w[k] = v % 256;
    carry = Math.floor(carry / 256) + (v >= 256 ? 1 : 0);
  }
  return w;
}

/** A short string (≤ 31 bytes) as Solidity stores it in one slot: the bytes, then length · 2. */
function shortString(s: string): Uint8Array {
  const bytes = new TextEncoder().encode(s);
  if (bytes.length > 31) throw new Error('bench URIs are short strings');
  const w = new Uint8Array(32);
  w.set(bytes, 0);
  w[31] = bytes.length * 2;
  return w;
}

/** Feedback struct's first slot: int128 value (low 16 bytes), valueDecimals (byte 16), isRevoked (byte 17). */
function feedbackWord(value: number, revoked: boolean): Uint8Array {
  const w = word(value);
  if (revoked) w[31 - 17] = 1;
  return w;
}

/** The (slot, value) pairs of both registries for agents [from, to). */
export function* identitySlots(): Generator<[Uint8Array, Uint8Array]> {
  yield [slot(0), word(AGENTS)]; // _nextAgentId
  for (let i = 0; i < AGENTS; i++) {
    const id = word(i);
    yield [mapSlot(id, slot(1)), addrWord(ownerOf(i))]; // _owners
    yield [mapSlot(id, slot(5)), shortString(uriOf(i))]; // _agentURIs
  }
}

export function* reputationSlots(): Generator<[Uint8Array, Uint8Array]> {
  for (let i = 0; i < AGENTS; i++) {
    const id = word(i);
    const fbBase = mapSlot(id, slot(0));
    const lastBase = mapSlot(id, slot(1));
    const clientsSlot = mapSlot(id, slot(2));
    const elements = keccak256(clientsSlot, 'bytes');
    yield [clientsSlot, word(PER_AGENT)];
    for (let j = 0; j < PER_AGENT; j++) {
      const c = addrWord(clientOf(i, j));
      yield [plus(elements, j), c];
      yield [mapSlot(c, lastBase), word(1)];
      // (_isClient is left unset: only a later giveFeedback from the same client reads it, and the
      // planted feedback come from clients the agents never had)
      yield [mapSlot(word(1), mapSlot(c, fbBase)), feedbackWord(valueOf(i, j), revokedOf(i, j))];
    }
  }
}

/** Writes the pairs into `address`'s storage through the bulk-store code; returns the slots written. */
export async function bulkStore(
  node: BenchNode,
  address: Address,
  pairs: Iterable<[Uint8Array, Uint8Array]>,
) {
  const code = await node.request<Hex>('eth_getCode', [address, 'latest']);
  await node.request('hardhat_setCode', [address, BULK_STORE]);
  let n = 0;
  let buf: Uint8Array[] = [];
  const flush = async () => {
    if (buf.length === 0) return;
    const data = new Uint8Array(buf.length * 32);
    buf.forEach((w, k) => data.set(w, k * 32));
    // Full blocks raise the base fee 12.5 % each: kept at zero, so the bulk costs nothing.
    await node.request('hardhat_setNextBlockBaseFeePerGas', ['0x0']);
    const hash = await node.request<Hex>('eth_sendTransaction', [
      {
        from: node.accounts[0],
        to: address,
        data: bytesToHex(data),
        gas: `0x${(SLOTS_PER_TX * 24_000 + 100_000).toString(16)}`,
        maxFeePerGas: '0x0',
        maxPriorityFeePerGas: '0x0',
      },
    ]);
    // (anvil answers eth_sendTransaction before a big block is mined: wait for the receipt)
    let receipt: { status: Hex } | null = null;
    for (let tries = 0; receipt === null && tries < 600; tries++) {
      receipt = await node.request<{ status: Hex } | null>('eth_getTransactionReceipt', [hash]);
      if (receipt === null) await new Promise((r) => setTimeout(r, 50));
    }
    if (receipt?.status !== '0x1')
      throw new Error(`bulk-store transaction ${hash} failed: ${JSON.stringify(receipt)?.slice(0, 300)}`);
    buf = [];
  };
  for (const [s, v] of pairs) {
    buf.push(s, v);
    n++;
    if (buf.length >= SLOTS_PER_TX * 2) await flush();
  }
  await flush();
  await node.request('hardhat_setCode', [address, code]);
  if (NODE === 'edr') await node.request('hardhat_setNextBlockBaseFeePerGas', ['0x3b9aca00']);
  return n;
}

/** The registries' own view of an agent: the layout above must read back as written. */
export async function checkLayout(node: BenchNode, reg: Registries, i: number): Promise<void> {
  const call = async (
    to: Address,
    abi: typeof identityRegistryAbi | typeof reputationRegistryAbi,
    fn: string,
    args: unknown[],
  ) => {
    const data = encodeFunctionData({ abi, functionName: fn as never, args: args as never });
    const out = await node.request<Hex>('eth_call', [{ to, data }, 'latest']);
    return decodeFunctionResult({ abi, functionName: fn as never, data: out }) as unknown;
  };
  const owner = (await call(reg.identityRegistry, identityRegistryAbi, 'ownerOf', [BigInt(i)])) as string;
  const uri = await call(reg.identityRegistry, identityRegistryAbi, 'tokenURI', [BigInt(i)]);
  const clients = (await call(reg.reputationRegistry, reputationRegistryAbi, 'getClients', [
    BigInt(i),
  ])) as string[];
  const fb = (await call(reg.reputationRegistry, reputationRegistryAbi, 'readFeedback', [
    BigInt(i),
    clients[0],
    1n,
  ])) as readonly [bigint, number, string, string, boolean];
  const summary = (await call(reg.reputationRegistry, reputationRegistryAbi, 'getSummary', [
    BigInt(i),
    clients,
    '',
    '',
  ])) as readonly [bigint, bigint, number];
  const notRevoked = Array.from({ length: PER_AGENT }, (_, j) => j).filter((j) => !revokedOf(i, j)).length;
  const ok =
    owner.toLowerCase() === ownerOf(i) &&
    uri === uriOf(i) &&
    clients.length === PER_AGENT &&
    clients[0]!.toLowerCase() === clientOf(i, 0) &&
    fb[0] === BigInt(valueOf(i, 0)) &&
    fb[4] === revokedOf(i, 0) &&
    Number(summary[0]) === notRevoked;
  if (!ok)
    throw new Error(
      `storage layout check failed for agent ${i}: ${JSON.stringify({ owner, uri, clients, fb: fb.map(String), summary: summary.map(String) })}`,
    );
}
