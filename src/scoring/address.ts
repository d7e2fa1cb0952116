/** Address comparison used by scoring: EVM case-insensitive, everything else (Solana) verbatim. */
import { BURN_ADDRESSES } from './policies.js';

const EVM_RE = /^0x[0-9a-fA-F]{40}$/;

/** Canonical form for comparison and grouping: EVM lower-cased, anything else unchanged. */
export function normalizeAddress(address: string): string {
  // Already lower case (every EVM address the indexer stores): the answer is the input whichever
  // kind it is, so the pattern test is skipped (a subject's answer normalizes once per rater).
  const lower = address.toLowerCase();
  if (lower === address) return address;
  return EVM_RE.test(address) ? lower : address;
}

/** True when both strings denote the same account (EVM case-insensitive, Solana exact). */
export function sameAddress(a: string, b: string): boolean {
  return normalizeAddress(a) === normalizeAddress(b);
}

const BURN_SET = new Set(BURN_ADDRESSES.map(normalizeAddress));

/** True for a known burn address (see `BURN_ADDRESSES`). */
export function isBurnAddress(address: string): boolean {
  return BURN_SET.has(normalizeAddress(address));
}
