/**
 * A facilitator stub for paywall tests (the real one runs in payments-e2e.test.ts): modes for
 * verify and settle, nonces it has "spent", and a signer-free X-PAYMENT builder.
 */
import { expect } from 'vitest';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import type { FacilitatorClient } from '../../src/payments/facilitator.js';

export const TREASURY = '0x1111111111111111111111111111111111111111';
export const PAYER = '0x2222222222222222222222222222222222222222';
export const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';

export type Mode = 'ok' | 'invalid' | 'refused' | 'timeout' | 'pending' | 'fail';

export class StubFacilitator implements FacilitatorClient {
  verifyMode: Mode = 'ok';
  settleMode: Mode = 'ok';
  verifies = 0;
  settles: string[] = [];
  /** Nonces spent "on chain". */
  spent = new Set<string>();
  private nonce(p: PaymentPayload): string {
    return (p.payload as { authorization: { nonce: string } }).authorization.nonce;
  }
  private fail(mode: Mode): never {
    if (mode === 'refused') throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    throw new DOMException('The operation timed out', 'TimeoutError');
  }
  async verify(p: PaymentPayload, r: PaymentRequirements): Promise<VerifyResponse> {
    this.verifies += 1;
    if (this.verifyMode === 'refused' || this.verifyMode === 'timeout') this.fail(this.verifyMode);
    if (this.verifyMode === 'invalid') return { isValid: false, invalidReason: 'invalid_exact_evm_payload_signature', payer: PAYER };
    if (this.spent.has(this.nonce(p))) return { isValid: false, invalidReason: 'invalid_exact_evm_payload_authorization_nonce_used' };
    expect(r.payTo).toBe(TREASURY);
    return { isValid: true, payer: PAYER };
  }
  async settle(p: PaymentPayload, r: PaymentRequirements): Promise<SettleResponse> {
    if (this.settleMode === 'refused') this.fail('refused');
    const tx = `0x${(this.settles.length + 1).toString(16).padStart(64, '0')}`;
    if (this.settleMode === 'timeout') {
      this.spent.add(this.nonce(p)); // the worst case: it did settle, we never heard
      this.fail('timeout');
    }
    if (this.settleMode === 'pending') return { success: false, errorReason: 'settlement_pending', transaction: tx, network: r.network };
    if (this.settleMode === 'fail') return { success: false, errorReason: 'transaction_failed', transaction: '', network: r.network };
    this.spent.add(this.nonce(p));
    this.settles.push(tx);
    return { success: true, transaction: tx, network: r.network, payer: PAYER };
  }
  async getSupported() {
    return { kinds: [], extensions: [], signers: {} };
  }
}

let nonceCounter = 0;
export function payment(over: { amount?: string; payTo?: string; value?: string; network?: string; asset?: string } = {}): string {
  nonceCounter += 1;
  const payload: PaymentPayload = {
    x402Version: 2,
    accepted: {
      scheme: 'exact',
      network: (over.network ?? 'eip155:8453') as PaymentRequirements['network'],
      asset: over.asset ?? BASE_USDC,
      amount: over.amount ?? '10000',
      payTo: over.payTo ?? TREASURY,
      maxTimeoutSeconds: 120,
      extra: { name: 'USD Coin', version: '2' },
    },
    payload: {
      signature: `0x${'ab'.repeat(65)}`,
      authorization: {
        from: PAYER,
        to: over.payTo ?? TREASURY,
        value: over.value ?? over.amount ?? '10000',
        validAfter: '0',
        validBefore: '99999999999',
        nonce: `0x${nonceCounter.toString(16).padStart(64, '0')}`,
      },
    },
  };
  return encodePaymentSignatureHeader(payload);
}

