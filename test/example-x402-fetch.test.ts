/**
 * examples/pay-with-x402-fetch.ts (the STOCK @x402/fetch client) against the real app on a local
 * market (src/demo/market.ts on a chain of its own): it pays, sees the settlement in
 * PAYMENT-RESPONSE, and its replay of the same header is free and byte-identical. The same script
 * against `npm run demo` itself is test/demo-market.test.ts.
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { startLocalPayments, type LocalPayments } from './helpers/local-facilitator.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

describe('examples/pay-with-x402-fetch.ts', () => {
  let rail: LocalPayments;
  let t: TestDatabase;
  let server: RunningServer;

  beforeAll(async () => {
    rail = await startLocalPayments();
    t = await openTestDatabase();
    const config = loadConfig({
      TREASURY_ADDRESS: rail.treasury,
      X402_FACILITATOR_URL: rail.facilitatorUrl,
      X402_ASSET_BASE: rail.token,
    });
    server = await startHttpServer(
      { config, db: t.db, now: () => new Date() },
      { host: '127.0.0.1', port: 0 },
    );
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    await t?.close();
    await rail?.close();
  });

  const example = (env: Record<string, string>, path: string) =>
    run(process.execPath, ['--import', 'tsx', 'examples/pay-with-x402-fetch.ts', path], {
      cwd: ROOT,
      timeout: 180_000,
      env: {
        ...process.env,
        REPINDEX_URL: server.url,
        BUYER_KEY: rail.payerKey,
        TREASURY_ADDRESS: rail.treasury,
        X402_ASSET: rail.token,
        ...env,
      },
    });

  it('pays once, shows the settlement, replays free with the same bytes', async () => {
    const before = await rail.balanceOf(rail.payer);
    const { stdout } = await example({}, '/reputation/rater/0x1111111111111111111111111111111111111111');
    const line = stdout.split('\n').find((l) => l.startsWith('summary: '));
    expect(line, stdout).toBeTruthy();
    const s = JSON.parse(line!.slice('summary: '.length));
    expect(s).toMatchObject({
      status: 200,
      reused: 'false',
      replay_status: 200,
      replay_reused: 'true',
      replay_identical: true,
    });
    expect(s.settlement).toMatchObject({ success: true, transaction: s.receipt, network: 'eip155:8453' });
    expect(before - (await rail.balanceOf(rail.payer))).toBe(10_000n);
    expect(rail.settlements()).toBe(1);
  }, 240_000);

  it('refuses to sign for a payee other than the pinned treasury (nothing paid)', async () => {
    const before = await rail.balanceOf(rail.payer);
    const out = await example(
      { TREASURY_ADDRESS: rail.payer },
      '/reputation/rater/0x2222222222222222222222222222222222222222',
    ).then(
      (r) => ({ code: 0, text: r.stdout + r.stderr }),
      (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, text: e.stdout + e.stderr }),
    );
    expect(out.code).not.toBe(0);
    expect(await rail.balanceOf(rail.payer)).toBe(before);
  }, 240_000);
});
