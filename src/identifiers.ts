/**
 * Shapes of the identifiers the contract accepts. EVM addresses are case-insensitive and
 * normalized to lower case (so any case gives a byte-identical answer); Solana base58 keys are
 * case-sensitive and kept verbatim; agent ids are always strings.
 */
type WalletKind = 'evm' | 'solana';
export interface ParsedWallet {
  kind: WalletKind;
  /** Normalised form used for storage and lookups. */
  address: string;
}

const EVM_RE = /^0x[0-9a-fA-F]{40}$/;
const BARE_HEX_RE = /^[0-9a-fA-F]{40}$/;
const BASE58_RE = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const AGENT_COUNTER_RE = /^\d{1,78}$/;

export function isBase58Key(s: string): boolean {
  return BASE58_RE.test(s);
}

/** An EVM agent id: a uint256 counter written in decimal. */
export function isAgentCounter(s: string): boolean {
  return AGENT_COUNTER_RE.test(s);
}

/**
 * Parses a wallet: `0x` + 40 hex (any case), 40 hex without prefix, or a Solana base58 key.
 * Returns null for anything else.
 */
export function parseWallet(input: string): ParsedWallet | null {
  if (EVM_RE.test(input)) return { kind: 'evm', address: input.toLowerCase() };
  if (BARE_HEX_RE.test(input)) return { kind: 'evm', address: `0x${input.toLowerCase()}` };
  if (BASE58_RE.test(input)) return { kind: 'solana', address: input };
  return null;
}

/** Canonical decimal form of an EVM agent id ("007" → "7"); base58 agent ids stay verbatim. */
export function normalizeAgentId(network: string, agentId: string): string | null {
  if (network === 'solana') return BASE58_RE.test(agentId) ? agentId : null;
  if (!AGENT_COUNTER_RE.test(agentId)) return null;
  const n = BigInt(agentId);
  return n < 2n ** 256n ? n.toString() : null;
}
