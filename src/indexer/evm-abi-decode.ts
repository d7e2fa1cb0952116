/**
 * Hand-written decoders of the ERC-8004 events the scanner reads (./evm-abi.ts), for the hot path
 * of a backfill: viem's generic `decodeEventLog` hashes every ABI item's signature on every log
 * to find the event, then walks a cursor over a byte copy of the data. Here the event is known
 * from topic 0 and the ABI words are read straight from the hex string.
 *
 * The result is what `decodeEventLog({ abi, data, topics, strict: true }).args` gives for the
 * same log (test/indexer-abi-decode.test.ts checks it on random logs), except that addresses are
 * lower-case (the scanner lower-cases them anyway; no checksum is computed). Where viem throws,
 * this throws too (the scanner skips the log with a warning): a topic missing, data shorter than
 * its head, an offset or a length that is not a safe integer or points outside the data, a
 * `uint8` above 2^53. Data that is not even-length hex is refused (viem would pad it).
 */
import type { Hex } from 'viem';
import { TOPIC } from './evm-abi.js';

/** Decoded arguments by name, as viem names them (indexed strings stay their topic hash). */
export type EventArgs = Record<string, bigint | number | string>;

class AbiWords {
  /** Hex digits of the data, without 0x. */
  private readonly h: string;
  /** Length of the data in bytes. */
  readonly size: number;

  constructor(data: string) {
    if (typeof data !== 'string' || !/^0x(?:[0-9a-fA-F]{2})*$/.test(data)) {
      throw new Error('log data is not hex of whole bytes');
    }
    this.h = data.slice(2);
    this.size = this.h.length / 2;
  }

  private word(byteOffset: number): string {
    if (byteOffset < 0 || byteOffset + 32 > this.size) {
      throw new Error(`ABI word at ${byteOffset} is outside the ${this.size}-byte data`);
    }
    return this.h.slice(byteOffset * 2, byteOffset * 2 + 64);
  }

  uint(byteOffset: number): bigint {
    return BigInt(`0x${this.word(byteOffset)}`);
  }

  /** A signed integer in two's complement over the whole word (as viem reads any intN). */
  int(byteOffset: number): bigint {
    const v = this.uint(byteOffset);
    return v >= 1n << 255n ? v - (1n << 256n) : v;
  }

  /** A word read as a JavaScript number: a safe integer or an error. */
  safe(byteOffset: number): number {
    const v = this.uint(byteOffset);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new Error(`ABI integer ${v} is not a safe integer`);
    return Number(v);
  }

  bytes32(byteOffset: number): Hex {
    return `0x${this.word(byteOffset)}`;
  }

  /** The bytes of a dynamic value whose offset sits in the head word at `headOffset`, as hex. */
  dynamicHex(headOffset: number): string {
    // viem steps back to the word after the first head word once it has read a dynamic value, and
    // refuses data that ends there (a one-word head and nothing after it): refused the same way.
    if (this.size <= 32) throw new Error(`log data of ${this.size} bytes holds no dynamic value`);
    const start = this.safe(headOffset);
    const length = this.safe(start);
    if (length === 0) return '';
    if (start + 32 + length > this.size) {
      throw new Error(`ABI value of ${length} bytes at ${start} runs past the ${this.size}-byte data`);
    }
    return this.h.slice((start + 32) * 2, (start + 32 + length) * 2);
  }
}

const utf8 = new TextDecoder();

function text(hex: string): string {
  return hex === '' ? '' : utf8.decode(Buffer.from(hex, 'hex'));
}

function topicAt(topics: readonly unknown[], i: number): string {
  const t = topics[i];
  if (typeof t !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(t))
    throw new Error(`topic ${i} missing or not 32 bytes`);
  return t;
}

const topicUint = (topics: readonly unknown[], i: number): bigint => BigInt(topicAt(topics, i));
const topicAddress = (topics: readonly unknown[], i: number): string =>
  `0x${topicAt(topics, i).slice(26).toLowerCase()}`;

function head(data: string, words: number): AbiWords {
  const w = new AbiWords(data);
  if (w.size === 0) throw new Error('log data is empty');
  if (w.size < 32 * words)
    throw new Error(`log data of ${w.size} bytes is shorter than its ${words}-word head`);
  return w;
}

type Decoder = (topics: readonly unknown[], data: string) => EventArgs;

const DECODERS = new Map<string, Decoder>([
  [
    TOPIC.Registered,
    (t, d) => {
      const agentId = topicUint(t, 1);
      const owner = topicAddress(t, 2);
      return { agentId, owner, agentURI: text(head(d, 1).dynamicHex(0)) };
    },
  ],
  [TOPIC.Transfer, (t) => ({ from: topicAddress(t, 1), to: topicAddress(t, 2), tokenId: topicUint(t, 3) })],
  [
    TOPIC.URIUpdated,
    (t, d) => {
      const agentId = topicUint(t, 1);
      const updatedBy = topicAddress(t, 2);
      return { agentId, updatedBy, newURI: text(head(d, 1).dynamicHex(0)) };
    },
  ],
  [
    TOPIC.MetadataSet,
    (t, d) => {
      const agentId = topicUint(t, 1);
      const indexedMetadataKey = topicAt(t, 2);
      const w = head(d, 2);
      const metadataKey = text(w.dynamicHex(0));
      const metadataValue = `0x${w.dynamicHex(32)}`;
      return { agentId, indexedMetadataKey, metadataKey, metadataValue };
    },
  ],
  [
    TOPIC.NewFeedback,
    (t, d) => {
      const agentId = topicUint(t, 1);
      const clientAddress = topicAddress(t, 2);
      const indexedTag1 = topicAt(t, 3);
      const w = head(d, 8);
      return {
        agentId,
        clientAddress,
        indexedTag1,
        feedbackIndex: w.uint(0),
        value: w.int(32),
        valueDecimals: w.safe(64),
        tag1: text(w.dynamicHex(96)),
        tag2: text(w.dynamicHex(128)),
        endpoint: text(w.dynamicHex(160)),
        feedbackURI: text(w.dynamicHex(192)),
        feedbackHash: w.bytes32(224),
      };
    },
  ],
  [
    TOPIC.FeedbackRevoked,
    (t) => ({ agentId: topicUint(t, 1), clientAddress: topicAddress(t, 2), feedbackIndex: topicUint(t, 3) }),
  ],
  [
    TOPIC.ResponseAppended,
    (t, d) => {
      const agentId = topicUint(t, 1);
      const clientAddress = topicAddress(t, 2);
      const responder = topicAddress(t, 3);
      const w = head(d, 3);
      return {
        agentId,
        clientAddress,
        responder,
        feedbackIndex: w.uint(0),
        responseURI: text(w.dynamicHex(32)),
        responseHash: w.bytes32(64),
      };
    },
  ],
]);

/**
 * The arguments of one of the known events (by its lower-case topic 0); throws on a log that does
 * not decode, and on an unknown topic 0.
 */
export function decodeKnownEvent(topic0: string, topics: readonly unknown[], data: unknown): EventArgs {
  const decoder = DECODERS.get(topic0);
  if (!decoder) throw new Error(`unknown event ${topic0.slice(0, 66)}`);
  return decoder(topics, typeof data === 'string' ? data : '');
}
