/**
 * The stand-in paid handler of the paywall, x402 and observability tests: validates `{wallet}` (an
 * EVM address, else 422 `not_an_address`), counts its runs and answers the wallet with the
 * payment's receipt. The real handlers are tested against the demo index (paid-handlers.test.ts).
 */
import type { PaidHandler } from '../../src/paid/handler.js';

export function walletEchoHandler(
  tier = 'wallet-lookup',
  runs: { count: number } = { count: 0 },
): PaidHandler<{ wallet: string }> {
  return {
    tier,
    validate(_ctx, req) {
      const w = req.params.wallet ?? '';
      if (!/^0x[0-9a-fA-F]{40}$/.test(w)) {
        return { ok: false, status: 422, body: { detail: { error: 'not_an_address', wallet: w } } };
      }
      return { ok: true, input: { wallet: w } };
    },
    async run(_ctx, input, payment) {
      runs.count += 1;
      return { status: 200, body: { wallet: input.wallet, receipt: payment.receipt } };
    },
  };
}
