/**
 * The census's ABI encoding and decoding, for its few fixed signatures only, on hex strings.
 * A full census moves about a million reads through Multicall3; viem's general codec spent most of
 * the census's CPU there (each decoded address is checksummed: a keccak per client per agent,
 * every call). These are the same bytes by the ABI specification (test/completeness-codec.test.ts
 * checks them against viem's encoder and decoder), with addresses kept lower-case and a reply that
 * does not parse decoded as null (a failed read).
 */
import type { Hex } from 'viem';

/** Function selectors (the first four bytes of keccak256 of the signature; checked by the test). */
export const SELECTOR = {
  ownerOf: '6352211e', // ownerOf(uint256)
  tokenURI: 'c87b56dd', // tokenURI(uint256)
  getClients: '42dd519c', // getClients(uint256)
  getLastIndex: 'f2d81759', // getLastIndex(uint256,address)
  getSummary: '81bbba58', // getSummary(uint256,address[],string,string)
  aggregate3: '82ad56cb', // aggregate3((address,bool,bytes)[])
} as const;

const WORD = 64; // hex characters per 32-byte word
const ZEROS_48 = '0'.repeat(48);
const ZEROS_24 = '0'.repeat(24);

/** A uint256 word (decimal string or number input). */
export function uintWord(n: bigint | number | string): string {
  return BigInt(n).toString(16).padStart(WORD, '0');
}

/** An address word (lower-case). */
export function addressWord(a: string): string {
  return a.slice(2).toLowerCase().padStart(WORD, '0');
}

/** Calldata of a function of static arguments (words already encoded). */
export function encodeStatic(selector: string, ...words: string[]): Hex {
  return `0x${selector}${words.join('')}`;
}

/** getSummary(agentId, clients, "", ""). */
export function encodeGetSummary(agentId: string, clients: readonly string[]): Hex {
  const arrayAt = 4 * 32;
  const tag1At = arrayAt + 32 * (1 + clients.length);
  const tag2At = tag1At + 32;
  return `0x${SELECTOR.getSummary}${uintWord(agentId)}${uintWord(arrayAt)}${uintWord(tag1At)}${uintWord(tag2At)}${uintWord(
    clients.length,
  )}${clients.map(addressWord).join('')}${uintWord(0)}${uintWord(0)}`;
}

/** aggregate3(calls) with allowFailure true for every call. */
export function encodeAggregate3(calls: readonly { to: Hex; data: Hex }[]): Hex {
  const heads: string[] = [];
  const tails: string[] = [];
  let offset = 32 * calls.length;
  for (const c of calls) {
    const body = c.data.slice(2);
    const padded = body.padEnd(Math.ceil(body.length / WORD) * WORD, '0');
    heads.push(uintWord(offset));
    tails.push(`${addressWord(c.to)}${uintWord(1)}${uintWord(96)}${uintWord(body.length / 2)}${padded}`);
    offset += 32 * 4 + padded.length / 2;
  }
  return `0x${SELECTOR.aggregate3}${uintWord(32)}${uintWord(calls.length)}${heads.join('')}${tails.join('')}`;
}

// ------------------------------------------------------------------ decoding

/** Hex without 0x, and a word reader that fails (null) past the end. */
class Reader {
  constructor(readonly hex: string) {}

  /** The word at byte `at` as a safe integer (null: beyond the data or too large). */
  int(at: number): number | null {
    const w = this.word(at);
    if (w === null) return null;
    if (!w.startsWith(ZEROS_48)) return null;
    return Number.parseInt(w.slice(48), 16);
  }

  word(at: number): string | null {
    const start = at * 2;
    return start >= 0 && start + WORD <= this.hex.length ? this.hex.slice(start, start + WORD) : null;
  }

  /** `length` bytes from byte `at` as hex (null: beyond the data). */
  bytes(at: number, length: number): string | null {
    const start = at * 2;
    return start + length * 2 <= this.hex.length ? this.hex.slice(start, start + length * 2) : null;
  }
}

/** Without the 0x (replies come lower-case from the reads: src/indexer/evm-scanner.ts). */
const strip = (h: Hex) => (h.startsWith('0x') ? h.slice(2) : h);

/** aggregate3's (bool success, bytes returnData)[]: each reply's data, or null when it failed. */
export function decodeAggregate3(data: Hex, expected: number): (Hex | null)[] | null {
  const r = new Reader(strip(data));
  const at = r.int(0);
  if (at === null) return null;
  const n = r.int(at);
  if (n !== expected) return null;
  const base = at + 32;
  const out: (Hex | null)[] = [];
  for (let i = 0; i < n; i++) {
    const off = r.int(base + 32 * i);
    if (off === null) return null;
    const tuple = base + off;
    const success = r.int(tuple);
    const bytesOff = r.int(tuple + 32);
    if (success === null || bytesOff === null) return null;
    const len = r.int(tuple + bytesOff);
    if (len === null) return null;
    const body = r.bytes(tuple + bytesOff + 32, len);
    if (body === null) return null;
    out.push(success === 1 ? `0x${body}` : null);
  }
  return out;
}

/** A uint reply (getLastIndex, getSummary's count: the first word); null when it does not parse. */
export function decodeUint(data: Hex | null): bigint | null {
  if (data === null) return null;
  const w = new Reader(strip(data)).word(0);
  return w === null ? null : BigInt(`0x${w}`);
}

/** An address reply (ownerOf), lower-case; null when it does not parse. */
export function decodeAddress(data: Hex | null): string | null {
  if (data === null) return null;
  const w = new Reader(strip(data)).word(0);
  return w === null || !w.startsWith(ZEROS_24) ? null : `0x${w.slice(24)}`;
}

const utf8 = new TextDecoder();

/** A string reply (tokenURI), decoded as viem does (UTF-8, invalid bytes replaced); null when it does not parse. */
export function decodeString(data: Hex | null): string | null {
  if (data === null) return null;
  const r = new Reader(strip(data));
  const off = r.int(0);
  if (off === null) return null;
  const len = r.int(off);
  if (len === null) return null;
  const body = r.bytes(off + 32, len);
  return body === null ? null : utf8.decode(Buffer.from(body, 'hex'));
}

/** An address[] reply (getClients), lower-case; null when it does not parse. */
export function decodeAddresses(data: Hex | null): string[] | null {
  if (data === null) return null;
  const r = new Reader(strip(data));
  const off = r.int(0);
  if (off === null) return null;
  const n = r.int(off);
  if (n === null) return null;
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const w = r.word(off + 32 * (1 + i));
    if (w === null || !w.startsWith(ZEROS_24)) return null;
    out.push(`0x${w.slice(24)}`);
  }
  return out;
}
