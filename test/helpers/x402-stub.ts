/**
 * A facilitator stub for paywall tests (the real one runs in payments-e2e.test.ts): modes for
 * verify and settle, nonces it has "spent", and a signer-free X-PAYMENT builder.
 */
import { expect } from 'vitest';
import { secp256k1 } from '@noble/curves/secp256k1';
import { getAddress, hashTypedData, type Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import type { FacilitatorClient } from '../../src/payments/facilitator.js';

export const TREASURY = '0x1111111111111111111111111111111111111111';
/** The stub payer's key (a public test key): payments are really signed, the paywall checks them locally. */
export const PAYER_KEY: Hex = '0x2a871d0798f97d79848a013d4936a73bf4cc922c825d33c1cf7073dff6d409c6';
export const PAYER = privateKeyToAddress(PAYER_KEY);
export const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

export type Mode = 'ok' | 'invalid' | 'refused' | 'timeout' | 'pending' | 'fail';

export class StubFacilitator implements FacilitatorClient {
  verifyMode: Mode = 'ok';
  settleMode: Mode = 'ok';
  verifies = 0;
  settles: string[] = [];
  /** Nonces spent "on chain". */
  spent = new Set<string>();
  /** The settlement transaction of each spent nonce (what a chain reader would find). */
  txOfNonce = new Map<string, string>();
  /** Wait this long before a settle answers (a slow facilitator: concurrent races). */
  settleDelayMs = 0;
  /** Runs after a successful settle, before its answer returns (e.g. cut the database there). */
  afterSettle: (() => void | Promise<void>) | null = null;
  /** The chain as a reader of authorization states sees it (the paywall's `readAuthorization`). */
  readAuthorization = async (q: { nonce: string }) => {
    const nonce = [...this.spent].find((n) => n.toLowerCase() === q.nonce.toLowerCase());
    return { used: nonce !== undefined, tx: nonce ? (this.txOfNonce.get(nonce) ?? null) : null };
  };
  private nonce(p: PaymentPayload): string {
    return (p.payload as { authorization: { nonce: string } }).authorization.nonce;
  }
  private fail(mode: Mode): never {
    if (mode === 'refused')
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    throw new DOMException('The operation timed out', 'TimeoutError');
  }
  async verify(p: PaymentPayload, r: PaymentRequirements): Promise<VerifyResponse> {
    this.verifies += 1;
    if (this.verifyMode === 'refused' || this.verifyMode === 'timeout') this.fail(this.verifyMode);
    if (this.verifyMode === 'invalid')
      return { isValid: false, invalidReason: 'invalid_exact_evm_payload_signature', payer: PAYER };
    if (this.spent.has(this.nonce(p)))
      return { isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_nonce_used' };
    expect(r.payTo).toBe(TREASURY);
    return { isValid: true, payer: PAYER };
  }
  async settle(p: PaymentPayload, r: PaymentRequirements): Promise<SettleResponse> {
    if (this.settleMode === 'refused') this.fail('refused');
    const tx = `0x${(this.settles.length + 1).toString(16).padStart(64, '0')}`;
    if (this.settleMode === 'timeout') {
      this.spent.add(this.nonce(p)); // the worst case: it did settle, we never heard
      this.txOfNonce.set(this.nonce(p), tx);
      this.fail('timeout');
    }
    if (this.settleMode === 'pending')
      return { success: false, errorReason: 'settlement_pending', transaction: tx, network: r.network };
    if (this.settleMode === 'fail')
      return { success: false, errorReason: 'transaction_failed', transaction: '', network: r.network };
    if (this.settleDelayMs > 0) await new Promise((res) => setTimeout(res, this.settleDelayMs));
    if (this.spent.has(this.nonce(p)))
      return {
        success: false,
        errorReason: 'invalid_exact_evm_payload_authorization_nonce_used',
        transaction: '',
        network: r.network,
      };
    this.spent.add(this.nonce(p));
    this.txOfNonce.set(this.nonce(p), tx);
    this.settles.push(tx);
    await this.afterSettle?.();
    return { success: true, transaction: tx, network: r.network, payer: PAYER };
  }
  async getSupported() {
    return { kinds: [], extensions: [], signers: {} };
  }
}

let nonceCounter = 0;

/** A synchronous EIP-712 signature (viem's signers are async; the stub helpers stay sync). */
export function signTypedDataSync(key: Hex, typed: Parameters<typeof hashTypedData>[0]): Hex {
  const hash = hashTypedData(typed);
  const sig = secp256k1.sign(hash.slice(2), key.slice(2));
  const r = sig.r.toString(16).padStart(64, '0');
  const s = sig.s.toString(16).padStart(64, '0');
  return `0x${r}${s}${(27 + sig.recovery).toString(16)}`;
}

export interface PaymentOverrides {
  amount?: string;
  payTo?: string;
  value?: string;
  network?: string;
  asset?: string;
  /** Payload resource (absent by default, as a hand-built payload may leave it out). */
  resource?: unknown;
  validAfter?: string;
  validBefore?: string;
  maxTimeoutSeconds?: number;
  extra?: Record<string, unknown>;
  /** Replaces the signature (garbage, another signer's). */
  signature?: string;
  /** Signs with another key than the payer's (the authorization still names PAYER). */
  signerKey?: Hex;
  /** Signs for another chain id / token domain than the requirement's. */
  signChainId?: number;
  nonce?: string;
}

/** The payload of a stub payment (signed for real by PAYER_KEY unless told otherwise). */
export function paymentPayload(over: PaymentOverrides = {}): PaymentPayload {
  nonceCounter += 1;
  const network = over.network ?? 'eip155:8453';
  const asset = over.asset ?? BASE_USDC;
  const payTo = over.payTo ?? TREASURY;
  const extra = over.extra ?? { name: 'USD Coin', version: '2' };
  const authorization = {
    from: PAYER,
    to: payTo,
    value: over.value ?? over.amount ?? '10000',
    validAfter: over.validAfter ?? '0',
    validBefore: over.validBefore ?? '99999999999',
    nonce:
      over.nonce ??
      `0x${(nonceCounter + Math.floor(Math.random() * 1e9) * 1e6).toString(16).padStart(64, '0')}`,
  };
  const chainId = over.signChainId ?? Number(/^eip155:(\d+)$/.exec(network)?.[1] ?? 8453);
  const signature =
    over.signature ??
    signTypedDataSync(over.signerKey ?? PAYER_KEY, {
      domain: {
        name: String(extra.name),
        version: String(extra.version),
        chainId,
        verifyingContract: getAddress(asset),
      },
      types: {
        TransferWithAuthorization: [
          { name: 'from', type: 'address' },
          { name: 'to', type: 'address' },
          { name: 'value', type: 'uint256' },
          { name: 'validAfter', type: 'uint256' },
          { name: 'validBefore', type: 'uint256' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'TransferWithAuthorization',
      message: {
        from: getAddress(authorization.from),
        to: getAddress(authorization.to),
        value: BigInt(authorization.value),
        validAfter: BigInt(authorization.validAfter),
        validBefore: BigInt(authorization.validBefore),
        nonce: authorization.nonce as Hex,
      },
    });
  const payload = {
    x402Version: 2,
    accepted: {
      scheme: 'exact',
      network: network as PaymentRequirements['network'],
      asset,
      amount: over.amount ?? '10000',
      payTo,
      maxTimeoutSeconds: over.maxTimeoutSeconds ?? 120,
      extra,
    },
    payload: { signature, authorization },
    ...(over.resource !== undefined ? { resource: over.resource } : {}),
  };
  return payload as PaymentPayload;
}

/** A base64 X-PAYMENT value (see {@link paymentPayload}). */
export function payment(over: PaymentOverrides = {}): string {
  return encodePaymentSignatureHeader(paymentPayload(over));
}
