/**
 * A real listening app for the log and metrics tests: the HTTP shell (access log, metrics, rate
 * limit) with /health, /ready and one metered route behind the real paywall and a stub
 * facilitator, served on a socket (the access log and the HTTP metrics count socket requests).
 */
import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '../../src/config.js';
import { createAppShell } from '../../src/doors/http/app.js';
import type { AppContext } from '../../src/doors/http/context.js';
import { registerHealth } from '../../src/doors/http/routes/health.js';
import { registerChains } from '../../src/store/chain-state.js';
import { registerPaidRoute } from '../../src/doors/http/routes/reputation.js';
import type { TestDatabase } from './db.js';
import { walletEchoHandler } from './paid-handler.js';
import { StubFacilitator, TREASURY } from './x402-stub.js';

export const WALLET = '0x3333333333333333333333333333333333333333';

export interface ObservedApp {
  url: string;
  ctx: AppContext;
  stub: StubFacilitator;
  close(): Promise<void>;
}

export async function startObservedApp(
  t: TestDatabase,
  env: Record<string, string> = {},
): Promise<ObservedApp> {
  const stub = new StubFacilitator();
  const config = loadConfig({
    TREASURY_ADDRESS: TREASURY,
    X402_FACILITATOR_URL: 'http://127.0.0.1:9/facilitator',
    ...env,
  });
  await registerChains(t.db, config.chains);
  const ctx: AppContext = { config, db: t.db, now: () => new Date(), facilitator: stub };
  const app = createAppShell(ctx);
  registerHealth(app, ctx);
  registerPaidRoute(app, ctx, { path: '/reputation/wallet/{wallet}', handler: walletEchoHandler() });
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ctx,
    stub,
    close: () =>
      new Promise<void>((res) => {
        server.close(() => res());
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
