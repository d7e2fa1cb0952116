/**
 * The checks the paywall makes ITSELF on an x402 `exact` EIP-3009 payment, before any facilitator
 * call: they need no network, and a credential that fails one of them can never become valid, so
 * it gets a precise 402 (never a 503 with the advice to retry the same header).
 *
 *  - `payment_requirements_mismatch`: the payload's `resource` names another request, or a field
 *    of `accepted` differs from the requirement this request offers for that network (scheme,
 *    network, asset, amount, payTo, maxTimeoutSeconds, extra.name/version), or the signed
 *    authorization's `to`/`value` differ from payTo/amount.
 *  - `payment_expired`: `validBefore` is already past (or within the facilitator's 6-second margin).
 *  - `payment_not_yet_valid`: `validAfter` is in the future.
 *  - `invalid_payment_signature`: the EIP-712 `TransferWithAuthorization` signature (domain: the
 *    requirement's asset, extra.name, extra.version and chain id) does not recover to
 *    `authorization.from`. Checked locally for plain ECDSA signatures (64/65 bytes: EOA wallets);
 *    smart-account signatures (ERC-1271 / ERC-6492, any other length) are left to the facilitator,
 *    which can call the wallet contract.
 *
 * Pure functions except `checkSignature` (async, but local: viem recovers the signer, no RPC).
 */
import { getAddress, verifyTypedData, type Hex } from 'viem';
import type { PaymentRequirements } from '@x402/core/types';
import { canonicalResource } from './challenge.js';

/** The facilitator refuses an authorization that expires within this many seconds. */
const VALID_BEFORE_MARGIN_SECONDS = 6;

interface ExactAuthorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

interface ExactPayload {
  accepted: {
    scheme: string;
    network: string;
    asset: string;
    amount: string;
    payTo: string;
    maxTimeoutSeconds?: number | undefined;
    extra?: Record<string, unknown> | undefined;
  };
  payload: { signature: string; authorization: ExactAuthorization };
  resource?: unknown;
}

export interface Rejection {
  error: string;
  reason: string;
}

const eqAddr = (x: string, y: string) => x.toLowerCase() === y.toLowerCase();

/**
 * The resource a payload was made for, as our canonical `METHOD /path?query`: our own challenge's
 * string, or an x402 v2 `ResourceInfo` object's `url`. Undefined when the payload names none.
 */
function payloadResource(resource: unknown): string | undefined | null {
  if (resource === undefined || resource === null) return undefined;
  if (typeof resource === 'string') return resource.slice(0, 2048);
  if (typeof resource === 'object' && typeof (resource as { url?: unknown }).url === 'string') {
    try {
      return canonicalResource('GET', new URL((resource as { url: string }).url, 'http://x'));
    } catch {
      return null;
    }
  }
  return null; // present but unreadable: matches nothing
}

/** `accepted`, the signed authorization and the payload's resource against this request. */
export function requirementMismatch(
  p: ExactPayload,
  r: PaymentRequirements,
  resource: string,
): Rejection | null {
  const a = p.accepted;
  const auth = p.payload.authorization;
  const no = (reason: string): Rejection => ({ error: 'payment_requirements_mismatch', reason });
  const named = payloadResource(p.resource);
  if (named !== undefined && named !== resource) {
    return no(
      named === null
        ? 'the payload names a resource that cannot be read'
        : `this payment was made for ${JSON.stringify(named).slice(0, 200)}, not for ${resource}`,
    );
  }
  if (a.scheme !== r.scheme) return no(`scheme must be ${r.scheme}`);
  if (a.network !== r.network) return no(`network must be ${r.network}`);
  if (!eqAddr(a.asset, r.asset)) return no(`asset must be ${r.asset} on ${r.network}`);
  if (!eqAddr(a.payTo, r.payTo) || !eqAddr(auth.to, r.payTo))
    return no(`payTo must be the treasury ${r.payTo}`);
  if (BigInt(a.amount) !== BigInt(r.amount) || BigInt(auth.value) !== BigInt(r.amount)) {
    return no(`amount must be exactly ${r.amount} base units`);
  }
  if (a.maxTimeoutSeconds !== r.maxTimeoutSeconds)
    return no(`maxTimeoutSeconds must be ${r.maxTimeoutSeconds}`);
  const want = r.extra ?? {};
  const got = a.extra ?? {};
  const keys = new Set([...Object.keys(want), ...Object.keys(got)]);
  for (const k of keys) {
    if (got[k] !== want[k]) return no(`extra.${k.slice(0, 40)} must be ${JSON.stringify(want[k] ?? null)}`);
  }
  return null;
}

/** The authorization's validity window against `now` (seconds are compared as bigint). */
export function timeWindowRejection(auth: ExactAuthorization, now: Date): Rejection | null {
  const nowSec = BigInt(Math.floor(now.getTime() / 1000));
  if (BigInt(auth.validBefore) < nowSec + BigInt(VALID_BEFORE_MARGIN_SECONDS)) {
    return {
      error: 'payment_expired',
      reason: `the authorization expired (validBefore ${auth.validBefore.slice(0, 30)} is not later than now + ${VALID_BEFORE_MARGIN_SECONDS} s)`,
    };
  }
  if (BigInt(auth.validAfter) > nowSec) {
    return {
      error: 'payment_not_yet_valid',
      reason: `the authorization is not valid yet (validAfter ${auth.validAfter.slice(0, 30)} is in the future)`,
    };
  }
  return null;
}

const AUTHORIZATION_TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** Chain id of a CAIP-2 `eip155:<id>` network. */
export function chainIdOf(network: string): number | null {
  const m = /^eip155:(\d{1,12})$/.exec(network);
  return m ? Number(m[1]) : null;
}

/**
 * The EIP-3009 typed-data signature, recovered locally against the requirement's token domain.
 * Returns null when it recovers to `from`, or when it is not a plain ECDSA signature (left to the
 * facilitator, see the module comment).
 */
export async function signatureRejection(p: ExactPayload, r: PaymentRequirements): Promise<Rejection | null> {
  const sig = p.payload.signature;
  const bytes = (sig.length - 2) / 2;
  if (bytes !== 64 && bytes !== 65) return null;
  const auth = p.payload.authorization;
  const chainId = chainIdOf(r.network);
  const name = r.extra?.name;
  const version = r.extra?.version;
  if (chainId === null || typeof name !== 'string' || typeof version !== 'string') return null;
  let ok = false;
  try {
    ok = await verifyTypedData({
      address: getAddress(auth.from),
      domain: { name, version, chainId, verifyingContract: getAddress(r.asset) },
      types: AUTHORIZATION_TYPES,
      primaryType: 'TransferWithAuthorization',
      message: {
        from: getAddress(auth.from),
        to: getAddress(auth.to),
        value: BigInt(auth.value),
        validAfter: BigInt(auth.validAfter),
        validBefore: BigInt(auth.validBefore),
        nonce: auth.nonce as Hex,
      },
      signature: sig as Hex,
    });
  } catch {
    ok = false;
  }
  return ok
    ? null
    : {
        error: 'invalid_payment_signature',
        reason:
          'the EIP-712 TransferWithAuthorization signature does not come from authorization.from for this token, amount, payTo and window',
      };
}
