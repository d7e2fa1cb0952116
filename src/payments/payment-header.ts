/**
 * The payment header of a metered request (`X-PAYMENT`, or x402 v2's `PAYMENT-SIGNATURE`) and its
 * decoding: size cap, base64 JSON, the x402 v2 exact EIP-3009 payload shape (zod). Hostile input
 * never throws: a bad header is a reason string the paywall answers `402 invalid_payment_header`.
 * The receipt key of a payment is sha256(header + "\n" + canonical resource).
 */
import { createHash } from 'node:crypto';
import { decodePaymentSignatureHeader } from '@x402/core/http';
import { z } from 'zod';

/** Largest accepted payment header (a real EIP-3009 payload is well under 2 KiB). */
const MAX_PAYMENT_HEADER_BYTES = 16 * 1024;

const hex = (n: number) => z.string().regex(new RegExp(`^0x[0-9a-fA-F]{${n}}$`));
const address = hex(40);
const uint = z.string().regex(/^\d{1,78}$/);

const paymentPayloadSchema = z.object({
  x402Version: z.literal(2),
  accepted: z.object({
    scheme: z.string().max(64),
    network: z.string().max(64),
    asset: z.string().max(128),
    amount: uint,
    payTo: z.string().max(128),
    maxTimeoutSeconds: z.number().int().nonnegative().optional(),
    extra: z.record(z.string(), z.unknown()).optional(),
  }),
  payload: z.object({
    signature: z.string().regex(/^0x[0-9a-fA-F]{2,4096}$/),
    authorization: z.object({
      from: address,
      to: address,
      value: uint,
      validAfter: uint,
      validBefore: uint,
      nonce: hex(64),
    }),
  }),
  resource: z.unknown().optional(),
  extensions: z.record(z.string(), z.unknown()).optional(),
});
export type DecodedPayment = z.infer<typeof paymentPayloadSchema>;

/**
 * The payment header of a request: `X-PAYMENT` (contract) or x402 v2 `PAYMENT-SIGNATURE`; both with
 * different values is a conflict (never guess which one the client meant).
 */
export function paymentHeader(request: Request): { header?: string; conflict: boolean } {
  const norm = (v: string | null) => (v === null || v.trim() === '' ? undefined : v.trim());
  const x = norm(request.headers.get('x-payment'));
  const s = norm(request.headers.get('payment-signature'));
  if (x !== undefined && s !== undefined && x !== s) return { conflict: true };
  return { header: x ?? s, conflict: false };
}

/** The decoded payload, or why it is not one (never a 500 for hostile input). */
export function decodePayment(
  header: string,
): { ok: true; decoded: DecodedPayment } | { ok: false; reason: string } {
  if (header.length > MAX_PAYMENT_HEADER_BYTES)
    return { ok: false, reason: 'the payment header is too large' };
  try {
    const parsed = paymentPayloadSchema.safeParse(decodePaymentSignatureHeader(header));
    if (!parsed.success)
      return { ok: false, reason: 'the payment header is not an x402 v2 exact EIP-3009 payload' };
    return { ok: true, decoded: parsed.data };
  } catch {
    return { ok: false, reason: 'the payment header is not base64-encoded JSON' };
  }
}

/** The receipt key of a payment header for one canonical resource. */
export function receiptKeyOf(header: string, resource: string): string {
  return createHash('sha256').update(`${header}\n${resource}`, 'utf8').digest('hex');
}
