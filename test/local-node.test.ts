/**
 * The in-process EDR node behind an HTTP JSON-RPC server: several chains at once, batches,
 * automine and timestamps, clean shutdown.
 */
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPublicClient, createWalletClient, http, parseEther, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import {
  DEFAULT_GENESIS_TIMESTAMP,
  JsonRpcError,
  localNodeAt,
  startLocalNode,
  type LocalNode,
} from '../src/demo/local-node.js';
import { publicClientFor } from '../src/demo/registries.js';

async function rpc(url: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

/** Resolves true when the port can be bound again (i.e. nobody listens on it any more). */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

describe('local node', () => {
  let base: LocalNode;
  let optimism: LocalNode;

  beforeAll(async () => {
    [base, optimism] = await Promise.all([
      startLocalNode({ chainId: 8453 }),
      startLocalNode({ chainId: 10 }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([base?.close(), optimism?.close()]);
  });

  it('runs two chains with different ids side by side, each with its own state', async () => {
    expect(base.rpcUrl).not.toBe(optimism.rpcUrl);
    const a = createPublicClient({ transport: http(base.rpcUrl) });
    const b = createPublicClient({ transport: http(optimism.rpcUrl) });
    expect(await a.getChainId()).toBe(8453);
    expect(await b.getChainId()).toBe(10);
    expect(base.accounts).toHaveLength(10);
    expect(base.accounts[0]).toBe(privateKeyToAccount(base.privateKeys[0]!).address);
    expect(await a.getBalance({ address: base.accounts[0]! })).toBe(parseEther('10000'));

    const before = await b.getBlockNumber({ cacheTime: 0 });
    const wallet = createWalletClient({
      account: privateKeyToAccount(base.privateKeys[1]!),
      transport: http(base.rpcUrl),
    });
    const hash = await wallet.sendTransaction({ to: base.accounts[2]!, value: 1n, chain: null });
    const receipt = await a.getTransactionReceipt({ hash });
    expect(receipt.status).toBe('success');
    expect(await b.getBlockNumber({ cacheTime: 0 })).toBe(before);
    expect(await b.getTransactionCount({ address: base.accounts[1]! })).toBe(0);
  });

  it('automines one block per transaction with increasing timestamps; timestamps can be set', async () => {
    const client = createPublicClient({ transport: http(base.rpcUrl) });
    const genesis = await client.getBlock({ blockNumber: 0n });
    expect(Number(genesis.timestamp)).toBe(DEFAULT_GENESIS_TIMESTAMP);

    const start = await client.getBlockNumber({ cacheTime: 0 });
    // Unlocked accounts: the node signs eth_sendTransaction itself.
    const hashes: Hex[] = [];
    for (let i = 0; i < 3; i++) {
      hashes.push(
        await base.request<Hex>('eth_sendTransaction', [
          { from: base.accounts[3], to: base.accounts[4], value: '0x1' },
        ]),
      );
    }
    const receipts = await Promise.all(hashes.map((hash) => client.getTransactionReceipt({ hash })));
    expect(receipts.map((r) => r.blockNumber)).toEqual([start + 1n, start + 2n, start + 3n]);
    const stamps = await Promise.all(
      receipts.map(async (r) => Number((await client.getBlock({ blockNumber: r.blockNumber })).timestamp)),
    );
    expect(stamps[1]!).toBeGreaterThan(stamps[0]!);
    expect(stamps[2]!).toBeGreaterThan(stamps[1]!);

    const target = DEFAULT_GENESIS_TIMESTAMP + 30 * 86_400;
    await base.setNextBlockTimestamp(target);
    await base.mine();
    expect(Number((await client.getBlock({ blockTag: 'latest' })).timestamp)).toBe(target);
    await base.request('evm_increaseTime', [3_600]);
    await base.mine(5);
    const latest = await client.getBlock({ blockTag: 'latest' });
    expect(latest.number).toBe(start + 9n);
    expect(Number(latest.timestamp)).toBeGreaterThanOrEqual(target + 3_600);
    await expect(base.setNextBlockTimestamp(target)).rejects.toBeInstanceOf(JsonRpcError);
  });

  it('answers JSON-RPC batches in order, with per-call errors and without answers to notifications', async () => {
    const { status, json } = await rpc(base.rpcUrl, [
      { jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] },
      { jsonrpc: '2.0', id: 'two', method: 'no_such_method', params: [] },
      { jsonrpc: '2.0', method: 'eth_blockNumber', params: [] },
      { jsonrpc: '2.0', id: 3, method: 'eth_getBalance', params: [base.accounts[0], 'latest'] },
      42,
    ]);
    expect(status).toBe(200);
    const answers = json as { id: unknown; result?: unknown; error?: { code: number } }[];
    expect(answers.map((a) => a.id)).toEqual([1, 'two', 3, null]);
    expect(answers[0]!.result).toBe('0x2105');
    expect(answers[1]!.error?.code).toBe(-32004);
    expect(typeof answers[2]!.result).toBe('string');
    expect(answers[3]!.error?.code).toBe(-32600);

    expect((await rpc(base.rpcUrl, [])).json).toMatchObject({ id: null, error: { code: -32600 } });
    expect((await rpc(base.rpcUrl, { jsonrpc: '2.0', id: 9, method: 'eth_chainId' })).json).toEqual({
      jsonrpc: '2.0',
      id: 9,
      result: '0x2105',
    });
    const bad = await fetch(base.rpcUrl, { method: 'POST', body: '{not json' });
    expect(await bad.json()).toMatchObject({ error: { code: -32700 } });
    expect((await fetch(base.rpcUrl)).status).toBe(405);

    // viem's own batching goes through the same path.
    const batched = createPublicClient({ transport: http(optimism.rpcUrl, { batch: true }) });
    const [chainId, block, balance] = await Promise.all([
      batched.getChainId(),
      batched.getBlockNumber(),
      batched.getBalance({ address: optimism.accounts[9]! }),
    ]);
    expect([chainId, typeof block, balance]).toEqual([10, 'bigint', parseEther('10000')]);
  });
});

describe('local node shutdown', () => {
  it('close() releases the port, even with keep-alive connections open', async () => {
    const node = await startLocalNode({ chainId: 42161 });
    const port = Number(new URL(node.rpcUrl).port);
    const client = createPublicClient({ transport: http(node.rpcUrl) });
    expect(await client.getChainId()).toBe(42161);
    expect(await portIsFree(port)).toBe(false);
    await node.close();
    await node.close(); // idempotent
    expect(await portIsFree(port)).toBe(true);
    await expect(fetch(node.rpcUrl, { method: 'POST', body: '{}' })).rejects.toThrow();

    // The same port can serve a new node.
    const again = await startLocalNode({ chainId: 42161, port });
    expect(again.rpcUrl).toBe(node.rpcUrl);
    await again.close();
  });

  it('the demo helpers call a node of this process directly; a new node on the same URL gets its own client', async () => {
    const node = await startLocalNode({ chainId: 10 });
    const port = Number(new URL(node.rpcUrl).port);
    expect(localNodeAt(node.rpcUrl)).toBe(node);
    const direct = publicClientFor(node.rpcUrl);
    expect(direct.transport.type).toBe('custom');
    expect(await direct.getChainId()).toBe(10);
    await node.close();
    expect(localNodeAt(node.rpcUrl)).toBeUndefined();
    // No node of this process serves the URL any more: an HTTP client.
    expect(publicClientFor(node.rpcUrl).transport.type).toBe('http');

    const again = await startLocalNode({ chainId: 8453, port });
    try {
      const next = publicClientFor(again.rpcUrl);
      expect(next).not.toBe(direct);
      expect(next.transport.type).toBe('custom');
      expect(await next.getChainId()).toBe(8453);
    } finally {
      await again.close();
    }
  });

  it('honours a custom genesis timestamp', async () => {
    const genesisTimestamp = Date.UTC(2025, 0, 1) / 1000;
    const node = await startLocalNode({ chainId: 31337, genesisTimestamp, accountCount: 2 });
    try {
      expect(node.accounts).toHaveLength(2);
      const block = await node.request<{ timestamp: Hex }>('eth_getBlockByNumber', ['0x0', false]);
      expect(Number(block.timestamp)).toBe(genesisTimestamp);
    } finally {
      await node.close();
    }
  });
});
