/**
 * `npm run demo` is a full x402 market (issue 9, point 9): the demo's base chain carries the
 * project's EIP-3009 token, the official x402 facilitator answers over HTTP in process, and the
 * command the demo prints, run as printed, pays with the STOCK @x402/fetch client
 * (examples/pay-with-x402-fetch.ts): 200 with a real settlement, balances moved by exactly the
 * price, and a replay of the same header served free with the same bytes. Every 402 rejection
 * names its reason.
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, http, type Hex } from 'viem';
import { paidExampleCommand, startDemoMarket, type Demo } from '../src/demo/run-demo.js';
import type { Market } from '../src/demo/market.js';
import { tierById } from '../src/payments/pricing.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { openDemoCopy } from './helpers/demo.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

describe('the demo market', () => {
  let demo: Demo;
  let market: Market;
  let server: RunningServer;

  beforeAll(async () => {
    // The demo index, plus a live base chain (the registries, nothing played) for the market.
    demo = await openDemoCopy({ liveBase: true });
    market = await startDemoMarket(demo);
    server = await startHttpServer(
      { config: demo.config, db: demo.db, now: () => new Date() },
      { host: '127.0.0.1', port: 0 },
    );
  }, 300_000);
  afterAll(async () => {
    await server?.close();
    await market?.close();
    await demo?.close();
  });

  it('quotes the local token, to the demo treasury, through the local facilitator', async () => {
    const res = await fetch(`${server.url}/reputation/wallet/${demo.facts.multiChainOwner.address}`);
    expect(res.status).toBe(402);
    const body = await res.json();
    expect(body.accepts[0]).toMatchObject({
      network: 'eip155:8453',
      asset: market.token,
      payTo: market.treasury,
      amount: '10000',
    });
    expect(body.facilitator).toBe(market.facilitatorUrl);
    const pricing = await (await fetch(`${server.url}/pricing`)).json();
    expect(pricing.treasury).toBe(market.treasury);
    expect(pricing.accepted_networks[0].asset).toBe(market.token);
  });

  it('the printed command pays with the stock @x402/fetch client, then replays for free', async () => {
    const path = `/reputation/wallet/${demo.facts.multiChainOwner.address}`;
    const price = BigInt(tierById('wallet-lookup').amount);
    const before = {
      buyer: await market.balanceOf(market.buyer),
      treasury: await market.balanceOf(market.treasury),
    };
    const command = paidExampleCommand(market, server.url, path);
    const { stdout } = await run('sh', ['-c', command], { cwd: ROOT, timeout: 180_000 });
    const line = stdout.split('\n').find((l) => l.startsWith('summary: '));
    expect(line, stdout).toBeTruthy();
    const summary = JSON.parse(line!.slice('summary: '.length));
    expect(summary).toMatchObject({
      status: 200,
      reused: 'false',
      replay_status: 200,
      replay_reused: 'true',
      replay_identical: true,
    });
    expect(summary.receipt).toMatch(/^0x[0-9a-f]{64}$/);
    expect(summary.settlement).toMatchObject({
      success: true,
      transaction: summary.receipt,
      network: 'eip155:8453',
    });
    const receipt = await createPublicClient({
      transport: http(demo.nodes.find((n) => n.network === 'base')!.node.rpcUrl),
    }).getTransactionReceipt({
      hash: summary.receipt as Hex,
    });
    expect(receipt.status).toBe('success');
    expect(before.buyer - (await market.balanceOf(market.buyer))).toBe(price);
    expect((await market.balanceOf(market.treasury)) - before.treasury).toBe(price);
    expect(market.settlements()).toBe(1);
  }, 240_000);

  it('every 402 rejection names its reason', async () => {
    const path = `/reputation/rater/${market.buyer}`;
    for (const header of ['%%%', Buffer.from('{}').toString('base64')]) {
      const res = await fetch(`${server.url}${path}`, { headers: { 'X-PAYMENT': header } });
      expect(res.status).toBe(402);
      const body = await res.json();
      expect(body.error).toMatch(/^[a-z_]+$/);
      expect(body.error).not.toBe('payment_required');
      expect(body.message).toContain(body.error);
    }
  });
});
