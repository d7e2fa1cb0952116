/**
 * Pure decoding of the ERC-8004 Solana program's (QuantuLabs `agent_registry_8004`) Anchor events:
 * discriminators, a small Borsh reader for the IDL's types, the `Program data:` log extraction
 * (invoke-depth aware, so CPI logs of other programs are never read as ours) and the mapping onto
 * the chain-neutral IndexEvent types of scanner.ts. No I/O.
 *
 * Layouts: `idl/agent_registry_8004.json` (program version 0.5.2) in QuantuLabs/8004-solana. An
 * Anchor event is `sha256("event:<Name>")[0..8]` followed by the Borsh fields in IDL order, logged
 * base64-encoded as `Program data: <base64>` by `emit!`. ResponseAppended follows the same SEAL v1
 * generation as NewFeedback and FeedbackRevoked here (the answered feedback's `seal_hash` after
 * `response_hash`); the older 0.5.0 layouts (without `seal_hash`, or without `slot` and the
 * digest) are 32 or more bytes shorter and are refused like any other undecodable event.
 * WalletUpdated and WalletResetOnOwnerSync follow the same asset-keyed generation, read from the
 * program source (`programs/agent-registry-8004/src/identity/events.rs`, the version with
 * CollectionPointerSet and ParentAssetSet): the stored 0.5.0 IDL has WalletUpdated with the same
 * fields and predates WalletResetOnOwnerSync. Both carry `new_wallet` as a plain key: the program
 * writes the all-zero key (the System address in base58) when it clears the wallet (transfer_agent's
 * WalletUpdated, sync_owner's reset), read here as "no wallet".
 */
import { createHash } from 'node:crypto';
import { getBase58Decoder } from '@solana/kit';
import { capKeyText, sanitizeText, scaleDecimal } from './scanner.js';
import type { AgentWalletEvent, IndexEvent, EventPosition } from '../index-events.js';

/** The System Program address: the `from` of the transfer a registration implies. */
const SYSTEM_ADDRESS = '11111111111111111111111111111111';
/** Longest metadata key kept (part of a primary key), as on EVM. */
export const MAX_META_KEY_CHARS = 256;

export function eventDiscriminator(name: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`event:${name}`).digest().subarray(0, 8));
}

// ------------------------------------------------------------------ Borsh reader

class BorshError extends Error {}

const base58 = getBase58Decoder();
const utf8Lenient = new TextDecoder('utf-8', { fatal: false });
const utf8Fatal = new TextDecoder('utf-8', { fatal: true });

/** Reads Borsh values from a byte buffer; every read is bounds-checked (BorshError). */
export class BorshReader {
  private pos = 0;
  private readonly view: DataView;

  constructor(private readonly bytes: Uint8Array) {
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  }

  get remaining(): number {
    return this.bytes.length - this.pos;
  }

  private need(n: number): number {
    if (n < 0 || this.pos + n > this.bytes.length)
      throw new BorshError(`need ${n} bytes at offset ${this.pos}, have ${this.remaining}`);
    const at = this.pos;
    this.pos += n;
    return at;
  }

  fixed(n: number): Uint8Array {
    const at = this.need(n);
    return this.bytes.subarray(at, at + n);
  }
  u8(): number {
    return this.view.getUint8(this.need(1));
  }
  u16(): number {
    return this.view.getUint16(this.need(2), true);
  }
  u32(): number {
    return this.view.getUint32(this.need(4), true);
  }
  u64(): bigint {
    return this.view.getBigUint64(this.need(8), true);
  }
  i128(): bigint {
    const at = this.need(16);
    const lo = this.view.getBigUint64(at, true);
    const hi = this.view.getBigInt64(at + 8, true);
    return (hi << 64n) + lo;
  }
  bool(): boolean {
    const b = this.u8();
    if (b > 1) throw new BorshError(`invalid bool ${b}`);
    return b === 1;
  }
  pubkey(): string {
    return base58.decode(this.fixed(32));
  }
  bytesVec(): Uint8Array {
    return this.fixed(this.u32());
  }
  /** A Borsh string, read leniently (invalid UTF-8 → U+FFFD) and made storable. */
  string(): string {
    return sanitizeText(utf8Lenient.decode(this.bytesVec()));
  }
  option<T>(read: () => T): T | null {
    const tag = this.u8();
    if (tag === 0) return null;
    if (tag === 1) return read();
    throw new BorshError(`invalid option tag ${tag}`);
  }
  end(): void {
    if (this.remaining !== 0) throw new BorshError(`${this.remaining} trailing bytes`);
  }
}

// ------------------------------------------------------------------ events

export interface AgentRegistered {
  name: 'AgentRegistered';
  asset: string;
  collection: string;
  owner: string;
  atomEnabled: boolean;
  agentUri: string;
}
export interface AgentOwnerSynced {
  name: 'AgentOwnerSynced';
  asset: string;
  oldOwner: string;
  newOwner: string;
}
export interface UriUpdated {
  name: 'UriUpdated';
  asset: string;
  updatedBy: string;
  newUri: string;
}
export interface MetadataSet {
  name: 'MetadataSet';
  asset: string;
  immutable: boolean;
  key: string;
  value: Uint8Array;
}
export interface NewFeedback {
  name: 'NewFeedback';
  asset: string;
  clientAddress: string;
  feedbackIndex: bigint;
  slot: bigint;
  value: bigint;
  valueDecimals: number;
  score: number | null;
  feedbackFileHash: Uint8Array | null;
  sealHash: Uint8Array;
  tag1: string;
  tag2: string;
  endpoint: string;
  feedbackUri: string;
}
export interface FeedbackRevoked {
  name: 'FeedbackRevoked';
  asset: string;
  clientAddress: string;
  feedbackIndex: bigint;
  sealHash: Uint8Array;
  slot: bigint;
}
export interface ResponseAppended {
  name: 'ResponseAppended';
  asset: string;
  /** The client whose feedback is answered (the rating's rater). */
  client: string;
  feedbackIndex: bigint;
  slot: bigint;
  responder: string;
  responseHash: Uint8Array;
  /** The answered feedback's seal hash (SEAL v1). */
  sealHash: Uint8Array;
  responseUri: string;
}
export interface WalletUpdated {
  name: 'WalletUpdated';
  asset: string;
  oldWallet: string | null;
  newWallet: string;
  updatedBy: string;
}
export interface WalletResetOnOwnerSync {
  name: 'WalletResetOnOwnerSync';
  asset: string;
  oldWallet: string | null;
  newWallet: string;
  ownerAfterSync: string;
}
type SolanaEvent =
  | AgentRegistered
  | AgentOwnerSynced
  | UriUpdated
  | MetadataSet
  | NewFeedback
  | FeedbackRevoked
  | ResponseAppended
  | WalletUpdated
  | WalletResetOnOwnerSync;

type Decoder = (r: BorshReader) => SolanaEvent;

const DECODERS: Record<string, Decoder> = {
  // AgentRegistered { asset: pubkey, collection: pubkey, owner: pubkey, atom_enabled: bool, agent_uri: string }
  AgentRegistered: (r) => ({
    name: 'AgentRegistered',
    asset: r.pubkey(),
    collection: r.pubkey(),
    owner: r.pubkey(),
    atomEnabled: r.bool(),
    agentUri: r.string(),
  }),
  // AgentOwnerSynced { asset: pubkey, old_owner: pubkey, new_owner: pubkey }
  AgentOwnerSynced: (r) => ({
    name: 'AgentOwnerSynced',
    asset: r.pubkey(),
    oldOwner: r.pubkey(),
    newOwner: r.pubkey(),
  }),
  // UriUpdated { asset: pubkey, updated_by: pubkey, new_uri: string }
  UriUpdated: (r) => ({ name: 'UriUpdated', asset: r.pubkey(), updatedBy: r.pubkey(), newUri: r.string() }),
  // MetadataSet { asset: pubkey, immutable: bool, key: string, value: bytes }
  MetadataSet: (r) => ({
    name: 'MetadataSet',
    asset: r.pubkey(),
    immutable: r.bool(),
    key: r.string(),
    value: r.bytesVec(),
  }),
  // NewFeedback { asset, client_address: pubkey, feedback_index: u64, slot: u64, value: i128,
  //   value_decimals: u8, score: Option<u8>, feedback_file_hash: Option<[u8;32]>, seal_hash: [u8;32],
  //   atom_enabled: bool, new_trust_tier: u8, new_quality_score: u16, new_confidence: u16,
  //   new_risk_score: u8, new_diversity_ratio: u8, is_unique_client: bool,
  //   new_feedback_digest: [u8;32], new_feedback_count: u64, tag1, tag2, endpoint, feedback_uri: string }
  NewFeedback: (r) => {
    const asset = r.pubkey();
    const clientAddress = r.pubkey();
    const feedbackIndex = r.u64();
    const slot = r.u64();
    const value = r.i128();
    const valueDecimals = r.u8();
    const score = r.option(() => r.u8());
    const feedbackFileHash = r.option(() => r.fixed(32));
    const sealHash = r.fixed(32);
    r.bool(); // atom_enabled
    r.u8(); // new_trust_tier
    r.u16(); // new_quality_score
    r.u16(); // new_confidence
    r.u8(); // new_risk_score
    r.u8(); // new_diversity_ratio
    r.bool(); // is_unique_client
    r.fixed(32); // new_feedback_digest
    r.u64(); // new_feedback_count
    return {
      name: 'NewFeedback',
      asset,
      clientAddress,
      feedbackIndex,
      slot,
      value,
      valueDecimals,
      score,
      feedbackFileHash,
      sealHash,
      tag1: r.string(),
      tag2: r.string(),
      endpoint: r.string(),
      feedbackUri: r.string(),
    };
  },
  // FeedbackRevoked { asset, client_address: pubkey, feedback_index: u64, seal_hash: [u8;32],
  //   slot: u64, original_score: u8, atom_enabled: bool, had_impact: bool, new_trust_tier: u8,
  //   new_quality_score: u16, new_confidence: u16, new_revoke_digest: [u8;32], new_revoke_count: u64 }
  FeedbackRevoked: (r) => {
    const asset = r.pubkey();
    const clientAddress = r.pubkey();
    const feedbackIndex = r.u64();
    const sealHash = r.fixed(32);
    const slot = r.u64();
    r.u8(); // original_score
    r.bool(); // atom_enabled
    r.bool(); // had_impact
    r.u8(); // new_trust_tier
    r.u16(); // new_quality_score
    r.u16(); // new_confidence
    r.fixed(32); // new_revoke_digest
    r.u64(); // new_revoke_count
    return { name: 'FeedbackRevoked', asset, clientAddress, feedbackIndex, sealHash, slot };
  },
  // ResponseAppended { asset, client: pubkey, feedback_index: u64, slot: u64, responder: pubkey,
  //   response_hash: [u8;32], seal_hash: [u8;32], new_response_digest: [u8;32],
  //   new_response_count: u64, response_uri: string }
  ResponseAppended: (r) => {
    const asset = r.pubkey();
    const client = r.pubkey();
    const feedbackIndex = r.u64();
    const slot = r.u64();
    const responder = r.pubkey();
    const responseHash = r.fixed(32);
    const sealHash = r.fixed(32);
    r.fixed(32); // new_response_digest
    r.u64(); // new_response_count
    return {
      name: 'ResponseAppended',
      asset,
      client,
      feedbackIndex,
      slot,
      responder,
      responseHash,
      sealHash,
      responseUri: r.string(),
    };
  },
  // WalletUpdated { asset: pubkey, old_wallet: Option<pubkey>, new_wallet: pubkey, updated_by: pubkey }
  WalletUpdated: (r) => ({
    name: 'WalletUpdated',
    asset: r.pubkey(),
    oldWallet: r.option(() => r.pubkey()),
    newWallet: r.pubkey(),
    updatedBy: r.pubkey(),
  }),
  // WalletResetOnOwnerSync { asset: pubkey, old_wallet: Option<pubkey>, new_wallet: pubkey,
  //   owner_after_sync: pubkey }
  WalletResetOnOwnerSync: (r) => ({
    name: 'WalletResetOnOwnerSync',
    asset: r.pubkey(),
    oldWallet: r.option(() => r.pubkey()),
    newWallet: r.pubkey(),
    ownerAfterSync: r.pubkey(),
  }),
};

/** Events of the program the index does not need (known, so never warned about). */
const IGNORED_EVENTS = [
  'AtomEnabled',
  'CollectionPointerSet',
  'MetadataDeleted',
  'ParentAssetSet',
  'RegistryInitialized',
];

const hexOf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
const BY_DISCRIMINATOR = new Map<string, string>(
  [...Object.keys(DECODERS), ...IGNORED_EVENTS].map((n) => [hexOf(eventDiscriminator(n)), n]),
);

type DecodeResult =
  | { ok: true; event: SolanaEvent }
  | { ok: false; ignored: true; name: string }
  | { ok: false; ignored: false; reason: string };

/** Decodes one event payload (discriminator + Borsh fields, no trailing bytes allowed). */
export function decodeEvent(data: Uint8Array): DecodeResult {
  if (data.length < 8) return { ok: false, ignored: false, reason: `payload of ${data.length} bytes` };
  const name = BY_DISCRIMINATOR.get(hexOf(data.subarray(0, 8)));
  if (!name)
    return { ok: false, ignored: false, reason: `unknown discriminator ${hexOf(data.subarray(0, 8))}` };
  const decoder = DECODERS[name];
  if (!decoder) return { ok: false, ignored: true, name };
  try {
    const r = new BorshReader(data.subarray(8));
    const event = decoder(r);
    r.end();
    return { ok: true, event };
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return { ok: false, ignored: false, reason: `${name}: ${why}` };
  }
}

// ------------------------------------------------------------------ log extraction

interface ProgramData {
  /** 0-based order of this program's `Program data:` lines in the transaction: a stable index. */
  index: number;
  /** The decoded payload; null when the base64 is malformed. */
  data: Uint8Array | null;
}

const INVOKE_RE = /^Program (\S+) invoke \[(\d+)\]$/;
const END_RE = /^Program (\S+) (success|failed|consumed)\b/;
const DATA_PREFIX = 'Program data: ';
const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

/**
 * The `Program data:` payloads logged by `programId` itself (the innermost invoked program at the
 * line), in log order. Data lines of other programs (CPI callees, or callers of ours) are skipped.
 * `truncated` is true when the node cut the logs (`Log truncated`): later events are missing.
 */
export function extractProgramData(
  logs: readonly string[],
  programId: string,
): { items: ProgramData[]; truncated: boolean } {
  const stack: string[] = [];
  const items: ProgramData[] = [];
  let truncated = false;
  for (const line of logs) {
    if (typeof line !== 'string') continue;
    const inv = INVOKE_RE.exec(line);
    if (inv) {
      const depth = Number(inv[2]);
      // depth n means n − 1 programs are on the stack below it (a top-level instruction resets it)
      stack.length = Math.max(0, Math.min(stack.length, depth - 1));
      stack.push(inv[1]!);
      continue;
    }
    const end = END_RE.exec(line);
    if (end && end[2] !== 'consumed') {
      if (stack.length && stack[stack.length - 1] === end[1]) stack.pop();
      continue;
    }
    if (line === 'Log truncated') {
      truncated = true;
      continue;
    }
    if (line.startsWith(DATA_PREFIX) && stack.length && stack[stack.length - 1] === programId) {
      const b64 = line.slice(DATA_PREFIX.length).trim();
      const index = items.length;
      // Anchor logs one base64 field per event; more fields (space-separated) are not an event of ours
      const ok = b64.length > 0 && b64.length % 4 === 0 && BASE64_RE.test(b64);
      items.push({ index, data: ok ? new Uint8Array(Buffer.from(b64, 'base64')) : null });
    }
  }
  return { items, truncated };
}

// ------------------------------------------------------------------ normalization

// eslint-disable-next-line no-control-regex -- control characters mark binary values
const BINARY_RE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]/;

function bytesAsText(b: Uint8Array): string | null {
  try {
    const s = utf8Fatal.decode(b);
    return BINARY_RE.test(s) ? null : s;
  } catch {
    return null;
  }
}

/** log_index positions one transaction spans: events 0..2047, two positions each. */
const SOLANA_TX_STRIDE = 4096;
/** Most events of one transaction that get a position (a node's 10 kB log cap keeps far below). */
export const SOLANA_MAX_EVENTS_PER_TX = SOLANA_TX_STRIDE / 2;
/** Highest transaction index inside one slot that fits log_index (a 32-bit integer). */
export const SOLANA_MAX_TX_INDEX = Math.floor(0x7fffffff / SOLANA_TX_STRIDE) - 1;

/**
 * The position inside its slot of the event with data-line index `index` of the transaction with
 * index `txIndex` among the program's transactions of that slot (block order, 0 = first), `sub`
 * 0 or 1 (derived events). Slot, then this number, is the chain order.
 */
export function solanaLogIndex(txIndex: number, index: number, sub: 0 | 1 = 0): number {
  if (!Number.isInteger(txIndex) || txIndex < 0 || txIndex > SOLANA_MAX_TX_INDEX)
    throw new RangeError(`transaction index ${txIndex} out of 0..${SOLANA_MAX_TX_INDEX}`);
  if (!Number.isInteger(index) || index < 0 || index >= SOLANA_MAX_EVENTS_PER_TX)
    throw new RangeError(`event index ${index} out of 0..${SOLANA_MAX_EVENTS_PER_TX - 1}`);
  return txIndex * SOLANA_TX_STRIDE + index * 2 + sub;
}

/**
 * Maps one decoded event onto normalized IndexEvents. `pos.logIndex` must be solanaLogIndex(t, i);
 * a registration also yields a transfer (System address → owner) at solanaLogIndex(t, i, 1) so the
 * owner is set by ingest's forward-only ownership rule.
 */
export function toIndexEvents(e: SolanaEvent, pos: EventPosition): IndexEvent[] {
  switch (e.name) {
    case 'AgentRegistered':
      return [
        { ...pos, kind: 'registered', agentId: e.asset, agentUri: e.agentUri, minter: e.owner },
        {
          ...pos,
          logIndex: pos.logIndex + 1,
          kind: 'transfer',
          agentId: e.asset,
          from: SYSTEM_ADDRESS,
          to: e.owner,
        },
      ];
    case 'AgentOwnerSynced':
      return [{ ...pos, kind: 'transfer', agentId: e.asset, from: e.oldOwner, to: e.newOwner }];
    case 'UriUpdated':
      return [{ ...pos, kind: 'uri', agentId: e.asset, uri: e.newUri, updatedBy: e.updatedBy }];
    case 'MetadataSet':
      return [
        {
          ...pos,
          kind: 'metadata',
          agentId: e.asset,
          key: capKeyText(e.key, MAX_META_KEY_CHARS),
          valueHex: `0x${hexOf(e.value)}`,
          valueText: bytesAsText(e.value),
        },
      ];
    case 'NewFeedback':
      return [
        {
          ...pos,
          kind: 'feedback',
          agentId: e.asset,
          rater: e.clientAddress,
          feedbackIndex: e.feedbackIndex.toString(),
          valueRaw: e.value.toString(),
          valueDecimals: e.valueDecimals,
          value: scaleDecimal(e.value, e.valueDecimals),
          tag1: e.tag1,
          tag2: e.tag2,
          endpoint: e.endpoint,
          feedbackUri: e.feedbackUri,
          feedbackHash: e.feedbackFileHash ? `0x${hexOf(e.feedbackFileHash)}` : null,
        },
      ];
    case 'FeedbackRevoked':
      return [
        {
          ...pos,
          kind: 'revocation',
          agentId: e.asset,
          rater: e.clientAddress,
          feedbackIndex: e.feedbackIndex.toString(),
        },
      ];
    case 'ResponseAppended':
      // feedback index as NewFeedback stores it (the program's per-agent counter, decimal), so
      // the response joins its rating on (network, agent, rater, feedback index)
      return [
        {
          ...pos,
          kind: 'response',
          agentId: e.asset,
          rater: e.client,
          feedbackIndex: e.feedbackIndex.toString(),
          responder: e.responder,
          responseUri: e.responseUri,
          responseHash: `0x${hexOf(e.responseHash)}`,
        },
      ];
    case 'WalletUpdated':
    case 'WalletResetOnOwnerSync':
      // not an IndexEvent: the agent wallet history is written by the Solana scanner (toAgentWallet)
      return [];
  }
}

/**
 * The agent wallet an event puts in force from its position on: WalletUpdated's `new_wallet`, or
 * none (null) for a reset on owner sync or the all-zero key (the program's "no wallet"). Null for
 * events that do not touch the wallet.
 */
export function toAgentWallet(e: SolanaEvent, pos: EventPosition): AgentWalletEvent | null {
  if (e.name !== 'WalletUpdated' && e.name !== 'WalletResetOnOwnerSync') return null;
  const wallet = e.name === 'WalletUpdated' && e.newWallet !== SYSTEM_ADDRESS ? e.newWallet : null;
  return { ...pos, kind: 'agent_wallet', agentId: e.asset, wallet };
}
