/** Address comparison used by scoring: EVM case-insensitive, everything else (Solana) verbatim. */
import { BURN_ADDRESSES } from './policies.js';

const EVM_RE = /^0x[0-9a-fA-F]{40}$/;

/** Canonical form for comparison and grouping: EVM lower-cased, anything else unchanged. */
export function normalizeAddress(address: string): string {
  return EVM_RE.test(address) ? address.toLowerCase() : address;
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
