/**
 * The vocabulary of indexed events, shared by the scanners that produce them (src/indexer/) and the
 * store that writes them (src/store/): normalized events, one per registry log (or Solana program
 * event). Normalized means: addresses as the chain spells them (EVM ones lower-cased), agent ids and
 * counters as decimal strings, every chain string already made safe for PostgreSQL TEXT, block
 * times from the chain's own clock. Types only: no code, no imports.
 */

/** Where an event sits on its chain; (network, txHash, logIndex) is its identity. */
export interface EventPosition {
  network: string;
  txHash: string;
  /**
   * Position inside the block: the log's index in its block (EVM); on Solana the transaction's
   * index among the program's transactions of the slot and the event's index in that transaction,
   * packed as tx * 4096 + event * 2 (+ 1 for a derived event), see solanaLogIndex.
   */
  logIndex: number;
  blockNumber: number;
  /** The block's on-chain timestamp; null = undated (the chain did not give one). */
  blockTime: Date | null;
}

/** Registered(agentId, agentURI, owner): `minter` is Registered.owner, not the current owner. */
export interface RegisteredEvent extends EventPosition {
  kind: 'registered';
  agentId: string;
  agentUri: string;
  minter: string;
}

/** ERC-721 Transfer (a mint has from = the zero address): moves the current owner. */
export interface TransferEvent extends EventPosition {
  kind: 'transfer';
  agentId: string;
  from: string;
  to: string;
}

export interface UriUpdatedEvent extends EventPosition {
  kind: 'uri';
  agentId: string;
  uri: string;
  updatedBy: string;
}

export interface MetadataSetEvent extends EventPosition {
  kind: 'metadata';
  agentId: string;
  key: string;
  /** The raw bytes as 0x-prefixed lower-case hex. */
  valueHex: string;
  /** The UTF-8 reading of the bytes when they decode cleanly (no NUL); null otherwise. */
  valueText: string | null;
}

export interface FeedbackEvent extends EventPosition {
  kind: 'feedback';
  agentId: string;
  rater: string;
  feedbackIndex: string;
  /** int128 raw value, decimal string. */
  valueRaw: string;
  valueDecimals: number;
  /** Exact decimal valueRaw / 10^valueDecimals (bigint arithmetic, no float). */
  value: string;
  tag1: string;
  tag2: string;
  endpoint: string;
  feedbackUri: string;
  feedbackHash: string | null;
}

export interface RevocationEvent extends EventPosition {
  kind: 'revocation';
  agentId: string;
  rater: string;
  feedbackIndex: string;
}

/** ResponseAppended(agentId, clientAddress, feedbackIndex, responder, responseURI, responseHash). */
export interface ResponseEvent extends EventPosition {
  kind: 'response';
  agentId: string;
  /** The rater whose rating is answered (clientAddress). */
  rater: string;
  feedbackIndex: string;
  responder: string;
  responseUri: string;
  /** 0x + 64 hex, lower-case. */
  responseHash: string | null;
}

/**
 * Solana only: the agent wallet (the program's `agent_wallet`, the `operator` of a response) set by
 * WalletUpdated, or cleared (null) by WalletResetOnOwnerSync or a WalletUpdated to the all-zero
 * key. Not an IndexEvent: the Solana scanner writes it with its batch (ScanBatch.persist).
 */
export interface AgentWalletEvent extends EventPosition {
  kind: 'agent_wallet';
  agentId: string;
  wallet: string | null;
}

export type IndexEvent =
  | RegisteredEvent
  | TransferEvent
  | UriUpdatedEvent
  | MetadataSetEvent
  | FeedbackEvent
  | RevocationEvent
  | ResponseEvent;
