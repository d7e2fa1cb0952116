/**
 * The ERC-8004 events the EVM scanner reads (signatures of the mainnet Identity and Reputation
 * registries, version 2.0.0). Topic0 values are derived here, never typed by hand.
 */
import { parseAbi, toEventSelector, type Hex } from 'viem';

export const IDENTITY_EVENTS = parseAbi([
  'event Registered(uint256 indexed agentId, string agentURI, address indexed owner)',
  'event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)',
  'event URIUpdated(uint256 indexed agentId, string newURI, address indexed updatedBy)',
  'event MetadataSet(uint256 indexed agentId, string indexed indexedMetadataKey, string metadataKey, bytes metadataValue)',
]);

export const REPUTATION_EVENTS = parseAbi([
  'event NewFeedback(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, int128 value, uint8 valueDecimals, string indexed indexedTag1, string tag1, string tag2, string endpoint, string feedbackURI, bytes32 feedbackHash)',
  'event FeedbackRevoked(uint256 indexed agentId, address indexed clientAddress, uint64 indexed feedbackIndex)',
  'event ResponseAppended(uint256 indexed agentId, address indexed clientAddress, uint64 feedbackIndex, address indexed responder, string responseURI, bytes32 responseHash)',
]);

export const TOPIC = {
  Registered: toEventSelector(IDENTITY_EVENTS[0]),
  Transfer: toEventSelector(IDENTITY_EVENTS[1]),
  URIUpdated: toEventSelector(IDENTITY_EVENTS[2]),
  MetadataSet: toEventSelector(IDENTITY_EVENTS[3]),
  NewFeedback: toEventSelector(REPUTATION_EVENTS[0]),
  FeedbackRevoked: toEventSelector(REPUTATION_EVENTS[1]),
  ResponseAppended: toEventSelector(REPUTATION_EVENTS[2]),
} as const satisfies Record<string, Hex>;

export const IDENTITY_TOPICS: Hex[] = [TOPIC.Registered, TOPIC.Transfer, TOPIC.URIUpdated, TOPIC.MetadataSet];
export const REPUTATION_TOPICS: Hex[] = [TOPIC.NewFeedback, TOPIC.FeedbackRevoked, TOPIC.ResponseAppended];
