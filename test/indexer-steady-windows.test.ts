/**
 * A chain whose every window holds the same number of logs (a steady stream of feedback: the
 * worst case of the silent-cap rule, as in `bench:backfill`): after one window checked and found
 * whole the scanner asks narrower windows that need no check (src/indexer/evm-range.ts
 * `trimAfterCheck`), and a node that cuts answers at any number is still caught.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { giveFeedbackCall, registerAgent } from '../src/demo/registries.js';
import { ResponseBodyTooLargeError } from 'viem';
import { AdaptiveRange, DEFAULT_EVM_SCAN_OPTIONS, emptyStats, sizeHint } from '../src/indexer/evm-range.js';
import { createEvmScanner, type EvmScanOptions } from '../src/indexer/evm-scanner.js';
import { runIndexPass } from '../src/indexer/pass.js';
import type { IndexEvent } from '../src/index-events.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  configFor,
  quietLogger,
  startLocalChain,
  target,
  type LocalChain,
} from './helpers/indexer-fixtures.js';
import { startHostileRpc, withHostileRpc, type HostileRpc, type ProxyMode } from './helpers/rpc-proxy.js';

const BLOCKS = 24;
const PER_BLOCK = 4;
/** Windows of 4 blocks that never grow: 16 logs each. */
const STEADY: Partial<EvmScanOptions> = { initialRange: 4, maxRange: 4, baseDelayMs: 5, maxDelayMs: 20 };

let chain: LocalChain;
let first: number;
let head: number;
let bare: IndexEvent[];

async function scan(url: string, opts: Partial<EvmScanOptions> = STEADY) {
  const scanner = createEvmScanner(
    { ...configFor([target(chain)]).chains.find((c) => c.network === 'base')!, rpcUrl: url },
    opts,
    quietLogger(),
  );
  const events: IndexEvent[] = [];
  const widths: number[] = [];
  for await (const b of scanner.scan(first, head)) {
    events.push(...b.events);
    widths.push(b.to - b.from + 1);
  }
  return { events, widths, stats: scanner.stats };
}

const through = <T>(mode: ProxyMode, fn: (p: HostileRpc) => Promise<T>): Promise<T> =>
  withHostileRpc(chain.node.rpcUrl, mode, fn);

beforeAll(async () => {
  chain = await startLocalChain('base', 8453);
  const k = chain.node.privateKeys;
  const agents = [
    (await registerAgent(chain.reg, k[0]!, 'https://a.example')).agentId,
    (await registerAgent(chain.reg, k[0]!, 'https://b.example')).agentId,
  ];
  const clients = chain.node.accounts.slice(1);
  first = Number(await chain.node.request<string>('eth_blockNumber')) + 1;
  await chain.node.request('evm_setAutomine', [false]);
  for (let b = 0; b < BLOCKS; b++) {
    for (let j = 0; j < PER_BLOCK; j++) {
      const call = giveFeedbackCall(chain.reg, { agentId: agents[j % 2]!, value: (b + j) % 101, tag1: 'q' });
      await chain.node.request('eth_sendTransaction', [
        { from: clients[j], to: call.to, data: call.data, gas: `0x${call.gas.toString(16)}` },
      ]);
    }
    await chain.node.request('evm_mine', []);
  }
  await chain.node.request('evm_setAutomine', [true]);
  head = Number(await chain.node.request<string>('eth_blockNumber'));
  expect(head - first + 1).toBe(BLOCKS);
  bare = (await scan(chain.node.rpcUrl)).events;
  expect(bare).toHaveLength(BLOCKS * PER_BLOCK);
}, 120_000);

afterAll(async () => {
  await chain?.close();
});

describe('AdaptiveRange.trimAfterCheck', () => {
  const range = (o: Partial<EvmScanOptions> = {}) => {
    const opts = { ...DEFAULT_EVM_SCAN_OPTIONS, initialRange: 48, maxRange: 48, ...o };
    return new AdaptiveRange(opts, emptyStats(opts));
  };

  it('a full window: the next ones are an eighth narrower (at least one block)', () => {
    const r = range();
    r.trimAfterCheck(48, 7200);
    expect(r.width).toBe(42);
    const small = range({ initialRange: 4, maxRange: 4 });
    small.trimAfterCheck(4, 16);
    expect(small.width).toBe(3);
  });

  it('a window clipped by the end of the scan, or of one block, trims nothing', () => {
    const r = range();
    r.trimAfterCheck(5, 700);
    expect(r.width).toBe(48);
    const one = range({ initialRange: 1, maxRange: 1 });
    one.trimAfterCheck(1, 20);
    expect(one.width).toBe(1);
  });

  it('a trimmed range grows back only after an answer of less than half the checked count', () => {
    // at the plateau: a doubled window (80) would pass maxRange (below it a check trims nothing:
    // test/indexer-opening.test.ts)
    const r = range({ initialRange: 40, maxRange: 60 });
    r.trimAfterCheck(40, 16);
    expect(r.width).toBe(35);
    r.succeeded(14);
    expect(r.width).toBe(35);
    r.succeeded(8);
    expect(r.width).toBe(35);
    r.succeeded(7);
    expect(r.width).toBe(60);
  });

  it('an untrimmed range grows after an answer with few logs, as before', () => {
    const r = range({ initialRange: 40, maxRange: 100 });
    r.succeeded(14);
    expect(r.width).toBe(80);
  });
});

describe('AdaptiveRange.open (a scan opens narrow)', () => {
  const range = (o: Partial<EvmScanOptions> = {}) => {
    const opts = { ...DEFAULT_EVM_SCAN_OPTIONS, ...o };
    return new AdaptiveRange(opts, emptyStats(opts));
  };

  it('opens at the opening width and grows x8 per answer of fewer than an eighth of growBelowLogs, back to initialRange', () => {
    const r = range();
    r.open(32);
    expect(r.width).toBe(32);
    r.succeeded(0);
    expect(r.width).toBe(256);
    r.succeeded(249);
    expect(r.width).toBe(2_048);
    r.succeeded(10);
    expect(r.width).toBe(10_000);
    // opened: the usual rule (x2 after an answer of few logs) from there
    r.succeeded(10);
    expect(r.width).toBe(20_000);
  });

  it('the first answer with more logs ends the opening: a dense chain keeps its narrow windows', () => {
    const r = range();
    r.open(32);
    r.succeeded(4_800);
    expect(r.width).toBe(32);
    r.succeeded(100);
    expect(r.width).toBe(64);
    r.succeeded(100);
    expect(r.width).toBe(128);
  });

  it('a refusal ends the opening; a width already narrower does not open', () => {
    const r = range();
    r.open(32);
    expect(r.shrink(32, {})).toBe(16);
    r.succeeded(0);
    r.succeeded(0);
    r.succeeded(0);
    expect(r.width).toBe(32);
    const narrow = range({ initialRange: 4, maxRange: 4 });
    narrow.open(32);
    expect(narrow.width).toBe(4);
  });
});

describe('every window of the same count', () => {
  it('an honest node: one window checked, the next ones narrower and unchecked, the same events', async () => {
    await through({ kind: 'well-behaved' }, async (p) => {
      const { events, widths, stats } = await scan(p.url);
      expect(events).toEqual(bare);
      expect(stats.capChecks).toBe(1);
      expect(stats.truncations).toBe(0);
      // 4 blocks (16 logs, checked), then windows of 3 (12 logs: below the largest count seen)
      expect(widths[0]).toBe(4);
      expect(new Set(widths.slice(1, -1))).toEqual(new Set([3]));
      // one request per window, two for the one check: 10 where every window checked asked 18
      expect(p.calls.eth_getLogs).toBe(widths.length + 2);
    });
  });

  for (const max of [15, 12, 11, 5]) {
    it(`a node that cuts every answer above ${max} logs to ${max}: caught, the same events`, async () => {
      await through({ kind: 'cap-results', max }, async (p) => {
        const { events, stats } = await scan(p.url);
        expect(p.spoiled).toBeGreaterThan(0);
        expect(stats.truncations).toBeGreaterThan(0);
        expect(stats.cap).toBe(max);
        expect(events).toEqual(bare);
      });
    });
  }

  it('a full pass into the database through a node that cuts at 12: every rating, census ok', async () => {
    const t: TestDatabase = await openTestDatabase();
    const p = await startHostileRpc(chain.node.rpcUrl, { kind: 'cap-results', max: 12 });
    try {
      const r = await runIndexPass({
        db: t.db,
        config: configFor([target(chain, { rpcUrl: p.url, startBlock: 0 })]),
        log: quietLogger(),
        afterPass: null,
        scan: STEADY,
      });
      if (r.status !== 'ok') throw new Error('pass locked');
      expect(r.failed).toEqual([]);
      expect(r.chains[0]!.census?.state).toBe('ok');
      const [row] = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM ratings');
      expect(Number(row!.n)).toBe(BLOCKS * PER_BLOCK);
    } finally {
      await p.close();
      await t.close();
    }
  });
});

describe('an answer refused for its size', () => {
  it('sizeHint: the share of the window that fits, with a margin, when the full size was known', () => {
    const big = new ResponseBodyTooLargeError({ maxSize: 1_000, size: 10_000 });
    expect(sizeHint(big, 100, 50)).toEqual({ from: 100, to: 103 });
    // wrapped in another error's cause, as a client may hand it on
    expect(sizeHint(new Error('request failed', { cause: big }), 100, 50)).toEqual({ from: 100, to: 103 });
    // refused while being read (no Content-Length): only "too large", the caller halves
    expect(sizeHint(new ResponseBodyTooLargeError({ maxSize: 1_000, size: 1_064 }), 100, 50)).toBeNull();
    expect(sizeHint(new Error('range too large'), 100, 50)).toBeNull();
    // one block never gets narrower
    expect(sizeHint(big, 7, 1)).toBeNull();
  });

  it('a node that sends its answers with their length: one refusal, then windows that fit, the same events', async () => {
    await through({ kind: 'well-behaved' }, async (p) => {
      const limit = 30_000;
      const { events, widths, stats } = await scan(p.url, {
        ...STEADY,
        initialRange: BLOCKS,
        maxRange: BLOCKS,
        maxResponseBytes: limit,
      });
      expect(events).toEqual(bare);
      expect(p.logRanges[0]).toBe(BLOCKS);
      expect(p.logRanges[1]).toBeLessThan(BLOCKS / 2);
      expect(stats.halvings).toBe(0);
      expect(stats.suggested).toBe(1);
      // one refused request, then every window fits: no window wider than the first that did
      expect(p.logRanges.slice(1).every((w) => w <= p.logRanges[1]!)).toBe(true);
      expect(p.logRanges).toHaveLength(1 + widths.length + 2 * stats.capChecks);
    });
  });
});

describe('the next window asked ahead', () => {
  it('is asked while a batch is being taken, and a consumer that stops early loses nothing it took', async () => {
    await through({ kind: 'well-behaved' }, async (p) => {
      const scanner = createEvmScanner(
        { ...configFor([target(chain)]).chains.find((c) => c.network === 'base')!, rpcUrl: p.url },
        STEADY,
        quietLogger(),
      );
      const it = scanner.scan(first, head)[Symbol.asyncIterator]();
      const one = await it.next();
      // the first window (4 blocks) and its check's two parts, then the next window, already asked
      await new Promise((r) => setTimeout(r, 300));
      expect(p.logRanges).toEqual([4, 2, 2, 3]);
      expect(one.value!.events).toEqual(bare.slice(0, 4 * PER_BLOCK));
      const two = await it.next();
      expect(two.value!.events).toEqual(bare.slice(4 * PER_BLOCK, 7 * PER_BLOCK));
      // stopping: the window asked ahead of the third batch is left unread, nothing fails
      await it.return!(undefined);
      // (the request asked ahead reaches the proxy a moment later: block times no longer hold the batch)
      await new Promise((r) => setTimeout(r, 300));
      expect(p.logRanges).toEqual([4, 2, 2, 3, 3]);
    });
  });
});

describe('block times and the checkpoint hash', () => {
  it("a full pass with the default scanner: every rating carries its block's time, the checkpoint the block's hash, each block asked once", async () => {
    const t: TestDatabase = await openTestDatabase();
    const p = await startHostileRpc(chain.node.rpcUrl, { kind: 'well-behaved' });
    try {
      const r = await runIndexPass({
        db: t.db,
        config: configFor([target(chain, { rpcUrl: p.url, startBlock: 0 })]),
        log: quietLogger(),
        afterPass: null,
      });
      if (r.status !== 'ok') throw new Error('pass locked');
      expect(r.failed).toEqual([]);
      const rows = await t.db.query<{ block_number: number; block_time: Date }>(
        'SELECT DISTINCT block_number::int AS block_number, block_time FROM ratings ORDER BY 1',
      );
      expect(rows).toHaveLength(BLOCKS);
      for (const row of rows) {
        const block = await chain.node.request<{ timestamp: string }>('eth_getBlockByNumber', [
          `0x${row.block_number.toString(16)}`,
          false,
        ]);
        expect(new Date(row.block_time).getTime()).toBe(Number(block.timestamp) * 1000);
      }
      const [saved] = await t.db.query<{ block_number: number; block_hash: string }>(
        'SELECT block_number::int AS block_number, block_hash FROM chain_block_hashes WHERE network = $1',
        ['base'],
      );
      const at = await chain.node.request<{ hash: string }>('eth_getBlockByNumber', [
        `0x${saved!.block_number.toString(16)}`,
        false,
      ]);
      expect(saved!.block_number).toBe(r.chains[0]!.to);
      expect(saved!.block_hash).toBe(at.hash.toLowerCase());
      // the blocks of the events (the feedback's and the two registrations'), each asked once;
      // the checkpoint (the last feedback block) not asked again for its hash
      expect(p.calls.eth_getBlockByNumber).toBe(BLOCKS + 2);
    } finally {
      await p.close();
      await t.close();
    }
  });
});
