/** Address comparison used by scoring: EVM case-insensitive, everything else (Solana) verbatim. */
import { BURN_ADDRESSES } from './policies.js';

const EVM_RE = /^0x[0-9a-fA-F]{40}$/;

/** Canonical form for comparison and grouping: EVM lower-cased, anything else unchanged. */
export function normalizeAddress(address: string): string {
  // No ASCII capital (every EVM address the indexer stores): the answer is the input whichever kind
  // it is, found without the new string `toLowerCase` makes even when nothing changes (a subject's
  // answer normalizes once per rater). A capital outside ASCII never makes an EVM address.
  for (let i = 0; i < address.length; i++) {
    const c = address.charCodeAt(i);
    if (c >= 65 && c <= 90) return EVM_RE.test(address) ? address.toLowerCase() : address;
  }
  return address;
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
