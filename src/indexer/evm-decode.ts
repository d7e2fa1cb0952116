/**
 * Decoding of the registries' raw logs into normalized events (src/index-events.ts): the known
 * events by their hand decoders (./evm-abi-decode.ts); a log that does not decode is skipped with
 * a warning; every string is made storable (sanitizeText) and addresses are lower-cased.
 */
import { hexToBytes, type Hex, type Log } from 'viem';
import type { IndexEvent } from '../index-events.js';
import { decodeKnownEvent, type EventArgs } from './evm-abi-decode.js';
import { IDENTITY_TOPICS, REPUTATION_TOPICS, TOPIC } from './evm-abi.js';
import { describeError } from './rpc-retry.js';
import { capKeyText, sanitizeText, scaleDecimal, type ScannerLogger } from './scanner.js';
import type { EvmScanStats } from './evm-range.js';

/** Longest metadata key kept (it is part of a primary key; btree entries are limited). */
const MAX_META_KEY_CHARS = 256;

/** A JSON-RPC quantity as a safe integer, else null. */
export function hexToNumber(h: unknown): number | null {
  if (typeof h !== 'string' || !/^0x[0-9a-fA-F]{1,16}$/.test(h)) return null;
  const n = Number.parseInt(h.slice(2), 16);
  return Number.isSafeInteger(n) ? n : null;
}

const utf8Fatal = new TextDecoder('utf-8', { fatal: true });

// eslint-disable-next-line no-control-regex -- control characters mark binary values
const BINARY_RE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

/**
 * UTF-8 reading of metadata bytes when they are text: valid UTF-8 without NUL or other control
 * characters (an agentWallet's 20 raw bytes are not text); else null.
 */
function bytesAsText(hex: Hex): string | null {
  try {
    const s = utf8Fatal.decode(hexToBytes(hex));
    return BINARY_RE.test(s) ? null : s;
  } catch {
    return null;
  }
}

/** Raw log as eth_getLogs returns it (plus the optional blockTimestamp newer nodes add). */
export type RawLog = Log<Hex, Hex, false> & { blockTimestamp?: Hex };

/** What decoding needs: which registries are ours, and where a skipped or cut log is reported. */
export interface DecodeContext {
  network: string;
  identity: Hex;
  reputation: Hex;
  skip(l: RawLog, why: string): void;
  keyCut(l: RawLog, length: number): void;
}

const str = (a: EventArgs, k: string): string => sanitizeText(String(a[k] ?? ''));
const addr = (a: EventArgs, k: string): string => String(a[k]).toLowerCase();
const big = (a: EventArgs, k: string): string => (a[k] as bigint).toString();

/** Decodes one raw log into a normalized event, or null (skipped, warned). */
export function decodeLog(l: RawLog, c: DecodeContext): IndexEvent | null {
  if (l.removed) return null;
  const blockNumber = hexToNumber(l.blockNumber);
  const logIndex = hexToNumber(l.logIndex);
  const tx = typeof l.transactionHash === 'string' ? l.transactionHash.toLowerCase() : '';
  if (blockNumber === null || logIndex === null || !/^0x[0-9a-f]{64}$/.test(tx)) {
    c.skip(l, 'missing or malformed blockNumber/logIndex/transactionHash');
    return null;
  }
  const address = typeof l.address === 'string' ? l.address.toLowerCase() : '';
  const topic0 = typeof l.topics?.[0] === 'string' ? l.topics[0].toLowerCase() : '';
  const fromIdentity = address === c.identity && IDENTITY_TOPICS.includes(topic0 as Hex);
  const fromReputation = address === c.reputation && REPUTATION_TOPICS.includes(topic0 as Hex);
  if (!fromIdentity && !fromReputation) return null; // not ours (a node that ignores filters)
  // (no closures and no object spread per log: both cost more than the decoding itself)
  const network = c.network;
  const txHash = tx;
  const blockTime = null as Date | null;
  try {
    const a = decodeKnownEvent(topic0, l.topics, l.data);
    switch (topic0) {
      case TOPIC.Registered:
        return {
          network,
          txHash,
          logIndex,
          blockNumber,
          blockTime,
          kind: 'registered',
          agentId: big(a, 'agentId'),
          agentUri: str(a, 'agentURI'),
          minter: addr(a, 'owner'),
        };
      case TOPIC.Transfer:
        return {
          network,
          txHash,
          logIndex,
          blockNumber,
          blockTime,
          kind: 'transfer',
          agentId: big(a, 'tokenId'),
          from: addr(a, 'from'),
          to: addr(a, 'to'),
        };
      case TOPIC.URIUpdated:
        return {
          network,
          txHash,
          logIndex,
          blockNumber,
          blockTime,
          kind: 'uri',
          agentId: big(a, 'agentId'),
          uri: str(a, 'newURI'),
          updatedBy: addr(a, 'updatedBy'),
        };
      case TOPIC.MetadataSet: {
        let key = str(a, 'metadataKey');
        if (key.length > MAX_META_KEY_CHARS) {
          c.keyCut(l, key.length);
          key = capKeyText(key, MAX_META_KEY_CHARS);
        }
        const valueHex = String(a.metadataValue).toLowerCase() as Hex;
        return {
          network,
          txHash,
          logIndex,
          blockNumber,
          blockTime,
          kind: 'metadata',
          agentId: big(a, 'agentId'),
          key,
          valueHex,
          valueText: bytesAsText(valueHex),
        };
      }
      case TOPIC.NewFeedback: {
        const raw = a.value as bigint;
        const decimals = Number(a.valueDecimals);
        return {
          network,
          txHash,
          logIndex,
          blockNumber,
          blockTime,
          kind: 'feedback',
          agentId: big(a, 'agentId'),
          rater: addr(a, 'clientAddress'),
          feedbackIndex: big(a, 'feedbackIndex'),
          valueRaw: raw.toString(),
          valueDecimals: decimals,
          value: scaleDecimal(raw, decimals),
          tag1: str(a, 'tag1'),
          tag2: str(a, 'tag2'),
          endpoint: str(a, 'endpoint'),
          feedbackUri: str(a, 'feedbackURI'),
          feedbackHash: typeof a.feedbackHash === 'string' ? a.feedbackHash.toLowerCase() : null,
        };
      }
      case TOPIC.FeedbackRevoked:
        return {
          network,
          txHash,
          logIndex,
          blockNumber,
          blockTime,
          kind: 'revocation',
          agentId: big(a, 'agentId'),
          rater: addr(a, 'clientAddress'),
          feedbackIndex: big(a, 'feedbackIndex'),
        };
      case TOPIC.ResponseAppended:
        return {
          network,
          txHash,
          logIndex,
          blockNumber,
          blockTime,
          kind: 'response',
          agentId: big(a, 'agentId'),
          rater: addr(a, 'clientAddress'),
          feedbackIndex: big(a, 'feedbackIndex'),
          responder: addr(a, 'responder'),
          responseUri: str(a, 'responseURI'),
          responseHash: typeof a.responseHash === 'string' ? a.responseHash.toLowerCase() : null,
        };
    }
    return null;
  } catch (err) {
    c.skip(l, describeError(err));
    return null;
  }
}

export /** Where decoding reports a skipped log (counted, warned) and a metadata key cut to length. */
function decodeContextFor(
  network: string,
  identity: Hex,
  reputation: Hex,
  stats: EvmScanStats,
  log: ScannerLogger,
): DecodeContext {
  return {
    network,
    identity,
    reputation,
    skip(l, why) {
      stats.skippedLogs++;
      log.warn(
        `[index] ${network}: skipped an undecodable log ${JSON.stringify({
          tx: String(l.transactionHash ?? '').slice(0, 66),
          logIndex: String(l.logIndex ?? ''),
          block: String(l.blockNumber ?? ''),
          topic0: String(l.topics?.[0] ?? '').slice(0, 66),
          reason: sanitizeText(why).slice(0, 300),
        })}`,
      );
    },
    keyCut: (l, length) =>
      log.warn(
        `[index] ${network}: metadata key of ${length} chars cut to ${MAX_META_KEY_CHARS} ${JSON.stringify({
          tx: String(l.transactionHash ?? '').slice(0, 66),
          logIndex: String(l.logIndex ?? ''),
        })}`,
      ),
  };
}
