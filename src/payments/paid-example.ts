/**
 * The copy-paste paid call, written in ONE place: the demo prints it with its public test keys and
 * the explorer's wallet page shows it with a placeholder key. It runs the stock x402 client
 * (`examples/pay-with-x402-fetch.ts`: @x402/fetch with the EVM `exact` scheme), which signs only
 * for the pinned treasury, in the allowed token, up to a cap.
 */
export interface PaidExample {
  /** Where the API answers (REPINDEX_URL). */
  apiUrl: string;
  /** The metered path to call, e.g. `/reputation/wallet/0x…`. */
  path: string;
  /** The buyer's private key, or a placeholder to replace. */
  buyerKey: string;
  /** The treasury `GET /pricing` publishes: the only payTo the client signs for. */
  treasury: string;
  /** The token the 402 quotes on the paying network. */
  asset: string;
}

export function paidExampleCommand(p: PaidExample): string {
  return (
    `REPINDEX_URL=${p.apiUrl} BUYER_KEY=${p.buyerKey} TREASURY_ADDRESS=${p.treasury} X402_ASSET=${p.asset} ` +
    `npx tsx examples/pay-with-x402-fetch.ts ${p.path}`
  );
}
