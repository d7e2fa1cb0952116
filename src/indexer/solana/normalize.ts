/**
 * The mapping of decoded Solana program events onto the chain-neutral IndexEvent types of
 * src/index-events.ts (what ingest writes), and onto the agent wallet changes the Solana scanner
 * writes itself. No I/O.
 */
import { capKeyText, scaleDecimal } from '../scanner.js';
import type { AgentWalletEvent, IndexEvent, EventPosition } from '../../index-events.js';
import { hexOf, type SolanaEvent } from './program-events.js';

/** The System Program address: the `from` of the transfer a registration implies. */
const SYSTEM_ADDRESS = '11111111111111111111111111111111';
/** Longest metadata key kept (part of a primary key), as on EVM. */
export const MAX_META_KEY_CHARS = 256;

const utf8Fatal = new TextDecoder('utf-8', { fatal: true });

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
