/**
 * What the log server of `bench:coldstart` answers, made on demand from ./world.ts's typed arrays:
 * the logs of one event (ABI-encoded by hand: the scanner's own decoder reads them; `selfCheck`
 * compares them with viem's decoding at start), and the registries' view functions the census and
 * the configuration check call (ownerOf, tokenURI, getClients, getLastIndex, getSummary,
 * getIdentityRegistry), alone or inside Multicall3's aggregate3.
 */
import { decodeEventLog, keccak256, toHex, type Hex } from 'viem';
import { IDENTITY_EVENTS, REPUTATION_EVENTS, TOPIC } from '../../src/indexer/evm-abi.js';
import { IDENTITY_REGISTRY, REPUTATION_REGISTRY } from './addresses.js';
import { KIND, type ChainWorld } from './world.js';

const W = 64;
const word = (n: number | bigint) => n.toString(16).padStart(W, '0');
const addrWord = (a: string) => a.slice(2).padStart(W, '0');
const strTail = (s: string) => {
  const hex = Buffer.from(s, 'utf8').toString('hex');
  return word(hex.length / 2) + hex.padEnd(Math.ceil(hex.length / W) * W, '0');
};

export const ownerAddress = (id: number) => `0xa0${id.toString(16).padStart(38, '0')}`;
export const clientAddress = (id: number) => `0xc1${id.toString(16).padStart(38, '0')}`;
export const agentUri = (chain: number, agent: number) =>
  `https://agents.example.invalid/${chain}/${agent}.json`;

const TAGS = ['starred', 'reachable', 'uptime', 'successRate', 'responseTime'];
const TAG_HASH = TAGS.map((t) => keccak256(toHex(t)).slice(2));
const WALLET_KEY_HASH = keccak256(toHex('agentWallet')).slice(2);
const ZERO = '0'.repeat(W);

const blockHash = (chain: number, block: number) =>
  `0x${chain.toString(16).padStart(4, '0')}b1${block.toString(16).padStart(58, '0')}`;
const txHash = (chain: number, kind: number, ref: number) =>
  `0x${chain.toString(16).padStart(4, '0')}${kind.toString(16).padStart(2, '0')}${ref.toString(16).padStart(58, '0')}`;

export interface BlockInfo {
  number: string;
  hash: string;
  parentHash: string;
  timestamp: string;
  transactions: never[];
}

export function timestampOf(w: ChainWorld, block: number): number {
  return 1_760_000_000 + Math.floor((block - w.spec.start) * w.spec.blockSeconds);
}

export function blockOf(w: ChainWorld, block: number): BlockInfo {
  return {
    number: `0x${block.toString(16)}`,
    hash: blockHash(w.index, block),
    parentHash: blockHash(w.index, block - 1),
    timestamp: `0x${timestampOf(w, block).toString(16)}`,
    transactions: [],
  };
}

/** Topics and data of event `e` (its position in the chain's order). */
function topicsAndData(w: ChainWorld, e: number): { address: string; topics: string[]; data: string } {
  const ref = w.evRef[e]!;
  const kind = w.evKind[e]!;
  const T = (h: string) => `0x${h}`;
  switch (kind) {
    case KIND.mint:
      return {
        address: IDENTITY_REGISTRY,
        topics: [TOPIC.Transfer, T(ZERO), T(addrWord(ownerAddress(w.minter[ref]!))), T(word(ref))],
        data: '0x',
      };
    case KIND.registered:
      return {
        address: IDENTITY_REGISTRY,
        topics: [TOPIC.Registered, T(word(ref)), T(addrWord(ownerAddress(w.minter[ref]!)))],
        data: `0x${word(32)}${strTail(agentUri(w.index, ref))}`,
      };
    case KIND.wallet: {
      const value = ownerAddress(w.minter[ref]!).slice(2);
      const key = strTail('agentWallet');
      return {
        address: IDENTITY_REGISTRY,
        topics: [TOPIC.MetadataSet, T(word(ref)), T(WALLET_KEY_HASH)],
        data: `0x${word(64)}${word(64 + key.length / 2)}${key}${word(20)}${value.padEnd(W, '0')}`,
      };
    }
    case KIND.feedback: {
      const tag = ref % TAGS.length;
      const s1 = strTail(TAGS[tag]!);
      const s2 = strTail('');
      const s3 = strTail(ref % 3 === 0 ? 'https://agents.example.invalid/mcp' : '');
      const s4 = strTail(ref % 2 === 0 ? `ipfs://bafkreifeedback${ref.toString(36)}` : '');
      const o1 = 8 * 32;
      const o2 = o1 + s1.length / 2;
      const o3 = o2 + s2.length / 2;
      const o4 = o3 + s3.length / 2;
      return {
        address: REPUTATION_REGISTRY,
        topics: [
          TOPIC.NewFeedback,
          T(word(w.fbAgent[ref]!)),
          T(addrWord(clientAddress(w.fbClient[ref]!))),
          T(TAG_HASH[tag]!),
        ],
        data: `0x${word(w.fbIndex[ref]!)}${word(w.fbValue[ref]!)}${word(0)}${word(o1)}${word(o2)}${word(o3)}${word(o4)}${word(ref + 1)}${s1}${s2}${s3}${s4}`,
      };
    }
    case KIND.revoked: {
      const fb = w.revFb[ref]!;
      return {
        address: REPUTATION_REGISTRY,
        topics: [
          TOPIC.FeedbackRevoked,
          T(word(w.fbAgent[fb]!)),
          T(addrWord(clientAddress(w.fbClient[fb]!))),
          T(word(w.fbIndex[fb]!)),
        ],
        data: '0x',
      };
    }
    case KIND.response: {
      const fb = w.respFb[ref]!;
      const agent = w.fbAgent[fb]!;
      return {
        address: REPUTATION_REGISTRY,
        topics: [
          TOPIC.ResponseAppended,
          T(word(agent)),
          T(addrWord(clientAddress(w.fbClient[fb]!))),
          T(addrWord(ownerAddress(w.owner[agent]!))),
        ],
        data: `0x${word(w.fbIndex[fb]!)}${word(96)}${word(ref + 7)}${strTail(`ipfs://bafkreiresponse${ref.toString(36)}`)}`,
      };
    }
    default: {
      return {
        address: IDENTITY_REGISTRY,
        topics: [
          TOPIC.Transfer,
          T(addrWord(ownerAddress(w.trFrom[ref]!))),
          T(addrWord(ownerAddress(w.trTo[ref]!))),
          T(word(w.trAgent[ref]!)),
        ],
        data: '0x',
      };
    }
  }
}

/** Event `e` as eth_getLogs answers it (with the block's timestamp when `stamp`). */
export function logOf(w: ChainWorld, e: number, stamp: boolean): Record<string, unknown> {
  const block = w.evBlock[e]!;
  const kind = w.evKind[e]!;
  const ref = w.evRef[e]!;
  // A registration's three logs are one transaction; every other event is its own.
  const tx = kind <= KIND.wallet ? txHash(w.index, 0, ref) : txHash(w.index, kind, ref);
  return {
    ...topicsAndData(w, e),
    blockNumber: `0x${block.toString(16)}`,
    blockHash: blockHash(w.index, block),
    transactionHash: tx,
    transactionIndex: '0x0',
    logIndex: `0x${w.evLogIndex[e]!.toString(16)}`,
    removed: false,
    ...(stamp ? { blockTimestamp: `0x${timestampOf(w, block).toString(16)}` } : {}),
  };
}

/** Decodes one log of every kind with viem (throws when an encoding is wrong). */
export function selfCheck(w: ChainWorld): void {
  const seen = new Set<number>();
  for (let e = 0; e < w.evKind.length && seen.size < 7; e++) {
    if (seen.has(w.evKind[e]!)) continue;
    seen.add(w.evKind[e]!);
    const l = topicsAndData(w, e);
    const abi = l.address === IDENTITY_REGISTRY ? IDENTITY_EVENTS : REPUTATION_EVENTS;
    decodeEventLog({ abi, data: l.data as Hex, topics: l.topics as [Hex], strict: true });
  }
}

// ------------------------------------------------------------------ view functions

/** A call's outcome: return data (hex, no 0x) or null (reverted). */
type Outcome = string | null;

const uintAt = (data: string, i: number) => Number.parseInt(data.slice(8 + i * W, 8 + (i + 1) * W), 16);
const addrAt = (data: string, i: number) => `0x${data.slice(8 + i * W + 24, 8 + (i + 1) * W)}`;

/** The pairs of `agent`, and the position of `client` among them (-1 when none). */
function pairOf(w: ChainWorld, agent: number, client: number): number {
  let lo = w.pairStart[agent]!;
  let hi = w.pairStart[agent + 1]! - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const c = w.pairClient[mid]!;
    if (c === client) return mid;
    if (c < client) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

const clientIdOf = (a: string) => (a.startsWith('0xc1') ? Number.parseInt(a.slice(4), 16) : -1);

/** One view call of `to` with calldata `data` (hex without 0x). */
export function viewCall(w: ChainWorld, to: string, data: string): Outcome {
  const sel = data.slice(0, 8);
  const agent = data.length >= 8 + W ? uintAt(data, 0) : -1;
  const known = agent >= 0 && agent < w.agents;
  if (to === IDENTITY_REGISTRY) {
    if (sel === '6352211e') return known ? addrWord(ownerAddress(w.owner[agent]!)) : null; // ownerOf
    if (sel === 'c87b56dd') return known ? word(32) + strTail(agentUri(w.index, agent)) : null; // tokenURI
    return null;
  }
  if (to !== REPUTATION_REGISTRY) return null;
  if (sel === 'bc4d861b') return addrWord(IDENTITY_REGISTRY); // getIdentityRegistry
  if (!known) return sel === '42dd519c' ? word(32) + word(0) : sel === 'f2d81759' ? word(0) : null;
  if (sel === '42dd519c') {
    // getClients
    const a = w.pairStart[agent]!;
    const b = w.pairStart[agent + 1]!;
    let out = word(32) + word(b - a);
    for (let p = a; p < b; p++) out += addrWord(clientAddress(w.pairClient[p]!));
    return out;
  }
  if (sel === 'f2d81759') {
    // getLastIndex
    const p = pairOf(w, agent, clientIdOf(addrAt(data, 1)));
    return word(p < 0 ? 0 : w.pairLast[p]!);
  }
  if (sel === '81bbba58') {
    // getSummary(agent, clients, tag1, tag2): the count of feedback not revoked
    const at = uintAt(data, 1) / 32;
    const n = uintAt(data, at);
    let count = 0;
    for (let i = 0; i < n; i++) {
      const p = pairOf(w, agent, clientIdOf(addrAt(data, at + 1 + i)));
      if (p >= 0) count += w.pairLast[p]! - w.pairRevoked[p]!;
    }
    return word(count) + word(0) + word(0);
  }
  return null;
}

/** aggregate3((address target, bool allowFailure, bytes callData)[]) over `viewCall`. */
export function aggregate3(w: ChainWorld, data: string): string {
  const at = uintAt(data, 0) / 32;
  const n = uintAt(data, at);
  const base = 8 + (at + 1) * W; // hex position of the offsets
  const results: Outcome[] = [];
  for (let i = 0; i < n; i++) {
    const off = Number.parseInt(data.slice(base + i * W, base + (i + 1) * W), 16) * 2;
    const t = base + off;
    const target = `0x${data.slice(t + 24, t + W)}`;
    const bytesAt = t + Number.parseInt(data.slice(t + 2 * W, t + 3 * W), 16) * 2;
    const len = Number.parseInt(data.slice(bytesAt, bytesAt + W), 16) * 2;
    results.push(viewCall(w, target, data.slice(bytesAt + W, bytesAt + W + len)));
  }
  const heads: string[] = [];
  const tails: string[] = [];
  let offset = 32 * n;
  for (const r of results) {
    const body = r ?? '';
    const padded = body.padEnd(Math.ceil(body.length / W) * W, '0');
    heads.push(word(offset));
    tails.push(word(r === null ? 0 : 1) + word(64) + word(body.length / 2) + padded);
    offset += 96 + padded.length / 2;
  }
  return `0x${word(32)}${word(n)}${heads.join('')}${tails.join('')}`;
}
