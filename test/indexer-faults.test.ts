/**
 * The indexer under faults, against a REAL local chain: crashes between and inside batches,
 * a node that refuses wide getLogs ranges or is slow on them, 429s, and a chain whose RPC is down
 * while another proceeds. Every network below points at the same local node, so one database
 * holds several independent indexes of the same chain that must end up row-for-row identical.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Address } from 'viem';
import { giveFeedback, registerAgent, revokeFeedback, transferAgent } from '../src/demo/registries.js';
import { loadConfig } from '../src/config.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  configFor,
  deadRpcUrl,
  dumpNetwork,
  quietLogger,
  startLocalChain,
  target,
  type LocalChain,
} from './helpers/indexer-fixtures.js';
import { startHostileRpc } from './helpers/rpc-proxy.js';

let chain: LocalChain;
let t: TestDatabase;
let reference: Record<string, unknown[]>;
let head: number;

/** Small ranges so that the scenario spans many batches. */
const SMALL = { initialRange: 3, maxRange: 3, baseDelayMs: 5, maxDelayMs: 20 };

async function play(c: LocalChain): Promise<void> {
  const k = c.node.privateKeys;
  const a = c.node.accounts;
  const ids: bigint[] = [];
  for (let i = 0; i < 4; i++) ids.push((await registerAgent(c.reg, k[1]!, `https://a${i}.example`)).agentId);
  await transferAgent(c.reg, k[1]!, ids[0]!, a[3] as Address);
  for (let i = 0; i < 12; i++) {
    await giveFeedback(c.reg, k[7 + (i % 3)]!, { agentId: ids[i % 4]!, value: 60 + i, tag1: `t${i % 2}` });
  }
  await revokeFeedback(c.reg, k[7]!, ids[0]!, 1);
  await transferAgent(c.reg, k[3]!, ids[0]!, a[6] as Address);
  await revokeFeedback(c.reg, k[8]!, ids[1]!, 1);
}

beforeAll(async () => {
  [chain, t] = await Promise.all([startLocalChain('base', 8453), openTestDatabase()]);
  await play(chain);
  head = Number(await chain.node.request<string>('eth_blockNumber'));
  const r = await runIndexPass({
    db: t.db,
    config: configFor([target(chain)]),
    log: quietLogger(),
    afterPass: null,
  });
  expect(r.status === 'ok' && r.failed).toEqual([]);
  reference = await dumpNetwork(t.db, 'base');
  expect(reference.ratings).toHaveLength(12);
});

afterAll(async () => {
  await t?.close();
  await chain?.close();
});

async function checkpoint(
  network: string,
): Promise<{ last_scanned_block: number | null; last_error: string | null }> {
  const [row] = await t.db.query<{ last_scanned_block: number | null; last_error: string | null }>(
    'SELECT last_scanned_block, last_error FROM chains WHERE network = $1',
    [network],
  );
  return row!;
}

describe('crash safety', () => {
  it('a crash between batches loses nothing and duplicates nothing', async () => {
    const config = configFor([target(chain, { network: 'optimism' })]);
    const crashed = await runIndexPass({
      db: t.db,
      config,
      log: quietLogger(),
      afterPass: null,
      scan: SMALL,
      hooks: {
        afterBatch: (info) => {
          if (info.batch === 2) throw new Error('simulated crash after batch 2');
        },
      },
    });
    expect(crashed.status === 'ok' && crashed.failed).toEqual(['optimism']);
    const cp = await checkpoint('optimism');
    expect(cp.last_error).toContain('simulated crash');
    const partial = await dumpNetwork(t.db, 'optimism');
    expect(partial.ratings!.length).toBeLessThan(12);

    const resumed = await runIndexPass({
      db: t.db,
      config,
      log: quietLogger(),
      afterPass: null,
      scan: SMALL,
    });
    expect(resumed.status === 'ok' && resumed.failed).toEqual([]);
    // resumed from the checkpoint, not from the start
    expect(resumed.status === 'ok' && resumed.chains[0]!.from).toBe(cp.last_scanned_block! + 1);
    expect(await dumpNetwork(t.db, 'optimism')).toEqual(reference);
    expect((await checkpoint('optimism')).last_error).toBeNull();
  });

  it('a transaction that fails mid-write rolls back with its checkpoint; the next pass completes exactly', async () => {
    const config = configFor([target(chain, { network: 'arbitrum' })]);
    let failedAt: { from: number; to: number } | null = null;
    const crashed = await runIndexPass({
      db: t.db,
      config,
      log: quietLogger(),
      afterPass: null,
      scan: SMALL,
      hooks: {
        beforeCommit: async (info, tx) => {
          if (info.batch === 4) {
            // the batch's rows and checkpoint are written (inside the transaction) ...
            const [cp] = await tx.query<{ last_scanned_block: number }>(
              'SELECT last_scanned_block FROM chains WHERE network = $1',
              ['arbitrum'],
            );
            expect(cp!.last_scanned_block).toBe(info.to);
            failedAt = { from: info.from, to: info.to };
            throw new Error('simulated failure before COMMIT');
          }
        },
      },
    });
    expect(crashed.status === 'ok' && crashed.failed).toEqual(['arbitrum']);
    expect(failedAt).not.toBeNull();
    // ... and none of them survived: the checkpoint is the previous batch's end
    const cp = await checkpoint('arbitrum');
    expect(cp.last_scanned_block).toBe(failedAt!.from - 1);
    const late = await t.db.query('SELECT 1 FROM ratings WHERE network = $1 AND block_number >= $2', [
      'arbitrum',
      failedAt!.from,
    ]);
    expect(late).toHaveLength(0);
    const resumed = await runIndexPass({ db: t.db, config, log: quietLogger(), afterPass: null });
    expect(resumed.status === 'ok' && resumed.failed).toEqual([]);
    expect(await dumpNetwork(t.db, 'arbitrum')).toEqual(reference);
  });
});

describe('adaptive ranges and retries', () => {
  it('halves the range against a node that rejects wide getLogs, and still gets every row', async () => {
    const proxy = await startHostileRpc(chain.node.rpcUrl, {
      kind: 'range-error',
      above: 4,
      message: 'query returned more than 10000 results',
    });
    try {
      const config = configFor([{ ...target(chain, { network: 'polygon' }), rpcUrl: proxy.url }]);
      const log = quietLogger();
      const r = await runIndexPass({ db: t.db, config, log, afterPass: null });
      expect(r.status === 'ok' && r.failed).toEqual([]);
      if (r.status !== 'ok') return;
      const scan = r.chains[0]!.scan!;
      expect(proxy.spoiled).toBeGreaterThan(0);
      expect(scan.halvings).toBeGreaterThan(0);
      expect(scan.minRange).toBeLessThanOrEqual(4);
      expect(Math.max(...proxy.servedRanges)).toBeLessThanOrEqual(4);
      expect(
        log.warnings.some((w) =>
          /query returned more than 10000 results\)?; range \d+ -> \d+ blocks/.test(w),
        ),
        log.warnings.join('\n'),
      ).toBe(true);
      expect(await dumpNetwork(t.db, 'polygon')).toEqual(reference);
    } finally {
      await proxy.close();
    }
  });

  it('understands "block range too large" wording too', async () => {
    const proxy = await startHostileRpc(chain.node.rpcUrl, {
      kind: 'range-error',
      above: 7,
      message: 'eth_getLogs block range too large, max 7',
    });
    try {
      const config = configFor([{ ...target(chain, { network: 'celo' }), rpcUrl: proxy.url }]);
      const r = await runIndexPass({ db: t.db, config, log: quietLogger(), afterPass: null });
      expect(r.status === 'ok' && r.failed).toEqual([]);
      expect(Math.max(...proxy.servedRanges)).toBeLessThanOrEqual(7);
      expect(await dumpNetwork(t.db, 'celo')).toEqual(reference);
    } finally {
      await proxy.close();
    }
  });

  it('halves the range on timeouts', async () => {
    const proxy = await startHostileRpc(chain.node.rpcUrl, { kind: 'slow-range', above: 8, ms: 1_000 });
    try {
      const config = configFor([{ ...target(chain, { network: 'ethereum' }), rpcUrl: proxy.url }]);
      const r = await runIndexPass({
        db: t.db,
        config,
        log: quietLogger(),
        afterPass: null,
        scan: { timeoutMs: 300 },
      });
      expect(r.status === 'ok' && r.failed).toEqual([]);
      if (r.status !== 'ok') return;
      expect(r.chains[0]!.scan!.halvings).toBeGreaterThan(0);
      expect(Math.max(...proxy.servedRanges)).toBeLessThanOrEqual(8);
      expect(await dumpNetwork(t.db, 'ethereum')).toEqual(reference);
    } finally {
      await proxy.close();
    }
  });

  it('retries 429 and 5xx answers with backoff', async () => {
    for (const [network, status] of [
      ['bsc', 429],
      ['monad', 503],
    ] as const) {
      const proxy = await startHostileRpc(chain.node.rpcUrl, { kind: 'fail-first', times: 3, status });
      try {
        const config = configFor([{ ...target(chain, { network }), rpcUrl: proxy.url }]);
        const r = await runIndexPass({
          db: t.db,
          config,
          log: quietLogger(),
          afterPass: null,
          scan: { baseDelayMs: 5, maxDelayMs: 20 },
        });
        expect(r.status === 'ok' && r.failed).toEqual([]);
        if (r.status !== 'ok') return;
        expect(proxy.failed).toBe(3);
        expect(r.chains[0]!.scan!.retries).toBe(3);
        expect(await dumpNetwork(t.db, network)).toEqual(reference);
      } finally {
        await proxy.close();
      }
    }
  });

  it('gives up after bounded attempts', async () => {
    const proxy = await startHostileRpc(chain.node.rpcUrl, { kind: 'fail-first', times: 1_000, status: 502 });
    try {
      const config = configFor([{ ...target(chain, { network: 'robinhood' }), rpcUrl: proxy.url }]);
      const r = await runIndexPass({
        db: t.db,
        config,
        log: quietLogger(),
        afterPass: null,
        scan: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 4 },
      });
      expect(r.status === 'ok' && r.failed).toEqual(['robinhood']);
      expect(proxy.failed).toBe(4);
      expect((await checkpoint('robinhood')).last_error).toMatch(/after 4 attempts/);
    } finally {
      await proxy.close();
    }
  });
});

describe("the operator's retry policy", () => {
  it('RPC_MAX_ATTEMPTS bounds the attempts and RPC_RETRY_BASE_MS sets the first backoff (doubling)', async () => {
    const proxy = await startHostileRpc(chain.node.rpcUrl, { kind: 'fail-first', times: 1_000, status: 502 });
    try {
      const operator = loadConfig({ RPC_MAX_ATTEMPTS: '3', RPC_RETRY_BASE_MS: '40' });
      const config = configFor([{ ...target(chain, { network: 'celo' }), rpcUrl: proxy.url }], {
        rpcMaxAttempts: operator.rpcMaxAttempts!,
        rpcRetryBaseMs: operator.rpcRetryBaseMs!,
      });
      const log = quietLogger();
      const r = await runIndexPass({ db: t.db, config, log, afterPass: null });
      expect(r.status === 'ok' && r.failed).toEqual(['celo']);
      expect(proxy.failed).toBe(3);
      expect((await checkpoint('celo')).last_error).toMatch(/after 3 attempts/);
      // Backoff before retry n: 40·2^(n−1) ms, jittered over its upper half.
      const delays = log.debugs.map((l) => /retry (\d+)\/2 in (\d+) ms/.exec(l)).filter((m) => m !== null);
      expect(delays.map((m) => Number(m[1]))).toEqual([1, 2]);
      const [first, second] = delays.map((m) => Number(m[2]));
      expect(first).toBeGreaterThanOrEqual(20);
      expect(first).toBeLessThanOrEqual(40);
      expect(second).toBeGreaterThanOrEqual(40);
      expect(second).toBeLessThanOrEqual(80);
    } finally {
      await proxy.close();
    }
  });
});

describe('a chain whose RPC is down', () => {
  it('fails alone: the other chain lands its rows, the dead one records last_error and is listed in failed', async () => {
    const dead = await deadRpcUrl();
    const config = configFor([
      { ...target(chain, { network: 'avalanche' }), rpcUrl: dead },
      target(chain, { network: 'solana' }), // any free slug: a second, healthy index of the chain
    ]);
    const before = new Date();
    const r = await runIndexPass({
      db: t.db,
      config,
      log: quietLogger(),
      afterPass: null,
      scan: { baseDelayMs: 5, maxDelayMs: 20, maxAttempts: 3 },
    });
    expect(r.status).toBe('ok');
    if (r.status !== 'ok') return;
    expect(r.failed).toEqual(['avalanche']);
    expect(r.chains.find((c) => c.network === 'solana')!.status).toBe('ok');
    expect(await dumpNetwork(t.db, 'solana')).toEqual(reference);
    const [row] = await t.db.query<{
      last_error: string;
      last_error_at: Date;
      last_scanned_block: number | null;
    }>('SELECT last_error, last_error_at, last_scanned_block FROM chains WHERE network = $1', ['avalanche']);
    expect(row!.last_error).toMatch(/eth_chainId failed after 3 attempts/);
    expect(row!.last_error_at.getTime()).toBeGreaterThanOrEqual(before.getTime() - 1000);
    expect(row!.last_scanned_block).toBeNull();
    expect(head).toBeGreaterThan(0);
  });
});
