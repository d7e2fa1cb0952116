/**
 * `GET /api`: the informative 402 (contract, Errors table). It shows what a challenge looks like,
 * quoting the entry tier (`wallet-lookup`) as the example, and sells nothing: an `X-PAYMENT` sent
 * here is ignored and never settled. With TREASURY_ADDRESS unset it answers the same 503 as the
 * metered routes (there is no payTo to show).
 */
import type { App, AppContext } from '../context.js';
import { buildChallenge, canonicalResource } from '../../../payments/challenge.js';
import { paymentsNotConfiguredBody } from '../../../payments/paywall.js';
import { tierById } from '../../../payments/pricing.js';

export const API_EXAMPLE_TIER = 'wallet-lookup';

export function registerApiChallenge(app: App, ctx: AppContext): void {
  app.get('/api', (c) => {
    const treasury = ctx.config.treasuryAddress;
    if (!treasury) return c.json(paymentsNotConfiguredBody(), 503, { 'Cache-Control': 'no-store' });
    const { body, headers } = buildChallenge({
      tier: tierById(API_EXAMPLE_TIER),
      resource: canonicalResource(c.req.method, new URL(c.req.url)),
      config: {
        treasuryAddress: treasury,
        facilitatorUrl: ctx.config.facilitatorUrl,
        paymentAssetOverrides: ctx.config.paymentAssetOverrides,
      },
      error: 'payment_required',
      retryable: false,
      nextAction:
        'Nothing is sold at /api: this is an example challenge (the wallet-lookup tier). Call a metered route, e.g. ' +
        'GET /reputation/wallet/{wallet}, without X-PAYMENT and sign the accepts[] of ITS own 402; see GET /pricing for every tier.',
    });
    return c.json(body, 402, headers);
  });
}
