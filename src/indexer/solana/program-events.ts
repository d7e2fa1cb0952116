/**
 * The ERC-8004 Solana program's (QuantuLabs `agent_registry_8004`) Anchor events: their
 * discriminators, their types, one decoder per event over the shared Borsh reader (borsh.ts), and
 * decodeEvent, which picks the decoder by discriminator. No I/O.
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
 * WalletUpdated, sync_owner's reset), read as "no wallet" by toAgentWallet (normalize.ts).
 */
import { createHash } from 'node:crypto';
import { BorshReader } from './borsh.js';

export function eventDiscriminator(name: string): Uint8Array {
  return new Uint8Array(createHash('sha256').update(`event:${name}`).digest().subarray(0, 8));
}

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
export type SolanaEvent =
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

/** Bytes as lowercase hex (no 0x): the discriminators' keys here; hashes and values in normalize.ts. */
export const hexOf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString('hex');
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
