/**
 * A real x402 payment rail, offline: a local EDR chain with chain id 8453 and the demo's market on
 * it (src/demo/market.ts: the project's own EIP-3009 token, a funded payer, a treasury and the
 * official x402 facilitator behind node:http). `signPayment` plays the client: it signs a 402
 * challenge with the EVM exact client scheme.
 */
import type { Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { x402Client } from '@x402/core/client';
import { encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { toClientEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmClientScheme } from '@x402/evm/exact/client';
import { startLocalNode, type LocalNode } from '../../src/demo/local-node.js';
import { openMarket, type Market } from '../../src/demo/market.js';

export const LOCAL_CHAIN_ID = 8453;
export const LOCAL_NETWORK = `eip155:${LOCAL_CHAIN_ID}` as const;

export interface LocalPayments extends Omit<Market, 'close' | 'buyerKey' | 'buyer'> {
  node: LocalNode;
  /** Dev account 2's key: a funded payer (1000 USDC minted). */
  payerKey: Hex;
  payer: Hex;
  close(): Promise<void>;
}

export async function startLocalPayments(): Promise<LocalPayments> {
  // Block timestamps near the wall clock: the facilitator checks validBefore against Date.now().
  const node = await startLocalNode({
    chainId: LOCAL_CHAIN_ID,
    genesisTimestamp: Math.floor(Date.now() / 1000) - 60,
  });
  try {
    const market = await openMarket({
      rpcUrl: node.rpcUrl,
      chainId: LOCAL_CHAIN_ID,
      facilitatorKey: node.privateKeys[3]!,
      treasury: node.accounts[1]!,
      buyerKey: node.privateKeys[2]!,
    });
    const { close, buyerKey, buyer, ...rest } = market;
    return {
      ...rest,
      node,
      payerKey: buyerKey,
      payer: buyer,
      async close() {
        await close();
        await node.close();
      },
    };
  } catch (e) {
    await node.close();
    throw e;
  }
}

/**
 * Signs a 402 challenge body as an x402 v2 client would (EVM exact scheme, EIP-3009), choosing the
 * local network's `accepts[]` entry, and returns the base64 `X-PAYMENT` value. `tamper` may alter
 * the requirement before signing (to sign a wrong amount or payTo on purpose).
 */
export async function signPayment(
  challenge: unknown,
  privateKey: Hex,
  tamper?: (r: PaymentRequirements) => PaymentRequirements,
): Promise<{ header: string; payload: PaymentPayload }> {
  const body = challenge as PaymentRequired;
  const accepts = body.accepts
    .filter((a) => a.network === LOCAL_NETWORK)
    .map((a) => (tamper ? tamper({ ...a }) : a));
  const client = new x402Client()
    .register(LOCAL_NETWORK, new ExactEvmClientScheme(toClientEvmSigner(privateKeyToAccount(privateKey))))
    // The local token is not a "default asset" of the library: allow it explicitly.
    .setSpendControls({ allowedAssets: true });
  const payload = await client.createPaymentPayload({ ...body, accepts });
  return { header: encodePaymentSignatureHeader(payload), payload };
}

/** The EIP-3009 nonce inside a signed payload. */
export function nonceOf(payload: PaymentPayload): Hex {
  return (payload.payload as { authorization: { nonce: Hex } }).authorization.nonce;
}
