/**
 * The scanner's narrow opening (src/indexer/evm-range.ts `openingRange`, evm-scanner.ts
 * `probeRangeLimit`) and the silent-cap check's trim: a deep scan opens narrow only on a node that
 * serves a window wider than its first one, and a check trims and pins the range only at its
 * plateau. Last round's failure: with the opening on, the first checks came at small counts and
 * their trims kept every window narrow for the whole scan through a range-capped endpoint (the
 * cold start at scale 0.01: 605 getLogs on bsc instead of 84).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { giveFeedbackCall, registerAgent } from '../src/demo/registries.js';
import { AdaptiveRange, DEFAULT_EVM_SCAN_OPTIONS, emptyStats } from '../src/indexer/evm-range.js';
import { createEvmScanner, type EvmScanOptions } from '../src/indexer/evm-scanner.js';
import { mustCheck, newCapGuard } from '../src/indexer/log-caps.js';
import type { IndexEvent } from '../src/index-events.js';
import {
  configFor,
  quietLogger,
  startLocalChain,
  target,
  type LocalChain,
} from './helpers/indexer-fixtures.js';
import { withHostileRpc, type HostileRpc, type ProxyMode } from './helpers/rpc-proxy.js';

/**
 * The scanner's loop over a chain of `density` logs a block, as AdaptiveRange sees it: every
 * answer that log-caps.ts would check (it reaches the largest count seen) is found whole and
 * trims; returns the widths asked and the number of checks.
 */
function simulate(r: AdaptiveRange, density: (width: number, i: number) => number, windows: number) {
  const g = newCapGuard();
  const widths: number[] = [];
  let checks = 0;
  for (let i = 0; i < windows; i++) {
    const w = r.width;
    widths.push(w);
    const n = density(w, i);
    if (mustCheck(g, n)) {
      checks++;
      r.trimAfterCheck(w, n);
    }
    g.maxSeen = Math.max(g.maxSeen, n);
    r.succeeded(n);
  }
  return { widths, checks };
}

const rangeOf = (o: Partial<EvmScanOptions> = {}) => {
  const opts = { ...DEFAULT_EVM_SCAN_OPTIONS, ...o };
  return new AdaptiveRange(opts, emptyStats(opts));
};

describe('AdaptiveRange: a check trims only at the plateau', () => {
  it('the opening is on by default, at 32 blocks', () => {
    expect(DEFAULT_EVM_SCAN_OPTIONS.openingRange).toBe(32);
  });

  it('a narrow opening on a sparse chain grows back to initialRange in three answers, every answer checked (it failed on the old rule: the first check pinned it)', () => {
    fc.assert(
      fc.property(
        // up to 0.02 logs a block: a 2,048-block window holds fewer than growBelowLogs / 8
        fc.double({ min: 0.001, max: 0.02, noNaN: true }),
        fc.array(fc.double({ min: 0.8, max: 1.2, noNaN: true }), { minLength: 8, maxLength: 8 }),
        (density, jitter) => {
          const r = rangeOf();
          r.open(32);
          // at least 2 logs in every window, so that each record is checked
          const { widths } = simulate(r, (w, i) => Math.max(2 + i, Math.floor(density * w * jitter[i]!)), 4);
          expect(widths.slice(0, 3)).toEqual([32, 256, 2_048]);
          expect(widths[3]).toBe(DEFAULT_EVM_SCAN_OPTIONS.initialRange);
        },
      ),
    );
  });

  it('below the plateau a check trims nothing: the range goes on doubling', () => {
    const r = rangeOf({ initialRange: 1_000, maxRange: 100_000 });
    r.trimAfterCheck(1_000, 300);
    expect(r.width).toBe(1_000);
    r.succeeded(300);
    expect(r.width).toBe(2_000);
  });

  it('at the plateau (a steady count): one window checked, the next ones an eighth narrower and unchecked', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 8, max: 5_000 }),
        fc.integer({ min: 16, max: 6_000 }),
        fc.boolean(),
        (width, count, byLogs) => {
          // the plateau: a doubled window passes maxRange, or the count is about growBelowLogs
          const r = byLogs
            ? rangeOf({
                initialRange: width,
                maxRange: 100 * width,
                growBelowLogs: Math.min(count * 2, 2_000),
              })
            : rangeOf({ initialRange: width, maxRange: width });
          const { widths, checks } = simulate(r, (w) => Math.floor((count * w) / width), 30);
          expect(checks).toBe(1);
          expect(new Set(widths.slice(1))).toEqual(new Set([width - Math.max(1, Math.floor(width / 8))]));
        },
      ),
    );
  });

  it('after a refusal every check trims and pins as before (a width the node set is the plateau)', () => {
    const r = rangeOf();
    expect(r.shrink(10_000, {})).toBe(5_000);
    r.trimAfterCheck(5_000, 40);
    expect(r.width).toBe(4_375);
    r.succeeded(30);
    expect(r.width).toBe(4_375);
    r.succeeded(19);
    r.succeeded(19);
    r.succeeded(19);
    expect(r.width).toBe(8_750);
  });
});

// ------------------------------------------------------------------ through a local node

/** ~2,000 blocks, 2 feedback every 16 blocks: every 32-block window holds about 4 logs. */
const SPACING = 16;
const ROUNDS = 125;

let chain: LocalChain;
let head: number;
let bare: IndexEvent[];

async function scan(url: string, opts: Partial<EvmScanOptions> = {}) {
  const scanner = createEvmScanner(
    { ...configFor([target(chain)]).chains.find((c) => c.network === 'base')!, rpcUrl: url },
    { baseDelayMs: 5, maxDelayMs: 20, ...opts },
    quietLogger(),
  );
  const events: IndexEvent[] = [];
  for await (const b of scanner.scan(0, head)) events.push(...b.events);
  return { events, stats: scanner.stats };
}

const through = <T>(mode: ProxyMode, fn: (p: HostileRpc) => Promise<T>): Promise<T> =>
  withHostileRpc(chain.node.rpcUrl, mode, fn);

beforeAll(async () => {
  chain = await startLocalChain('base', 8453);
  const k = chain.node.privateKeys;
  const agent = (await registerAgent(chain.reg, k[0]!, 'https://a.example')).agentId;
  const clients = chain.node.accounts.slice(1, 3);
  await chain.node.request('evm_setAutomine', [false]);
  for (let b = 0; b < ROUNDS; b++) {
    for (const [j, from] of clients.entries()) {
      const call = giveFeedbackCall(chain.reg, { agentId: agent, value: (b + j) % 101, tag1: 'q' });
      await chain.node.request('eth_sendTransaction', [
        { from, to: call.to, data: call.data, gas: `0x${call.gas.toString(16)}` },
      ]);
    }
    await chain.node.request('evm_mine', []);
    await chain.node.mine(SPACING - 1);
  }
  await chain.node.request('evm_setAutomine', [true]);
  head = Number(await chain.node.request<string>('eth_blockNumber'));
  bare = (await scan(chain.node.rpcUrl, { openingRange: null })).events;
  expect(bare.filter((e) => e.kind === 'feedback')).toHaveLength(2 * ROUNDS);
}, 120_000);

afterAll(async () => {
  await chain?.close();
});

describe('the opening through a range-capped endpoint', () => {
  for (const mode of [
    { kind: 'range-error', above: 500, style: 'quicknode' },
    { kind: 'range-error', above: 500, style: 'ankr-like' },
  ] as const) {
    it(`${mode.style} capping at ${mode.above} blocks: the windows reach the cap, no more getLogs than without the opening, the same events (the old rule kept them at ~28 blocks: ~70 windows)`, async () => {
      const off = await through(mode, async (p) => {
        const r = await scan(p.url, { openingRange: null });
        return { ...r, asked: p.calls.eth_getLogs ?? 0 };
      });
      await through(mode, async (p) => {
        const { events, stats } = await scan(p.url);
        expect(events).toEqual(bare);
        expect(off.events).toEqual(bare);
        expect(p.calls.eth_getLogs).toBeLessThanOrEqual(off.asked);
        expect(p.calls.eth_getLogs).toBeLessThan(30);
        expect(p.servedRanges.filter((w) => w <= 32).length).toBeLessThanOrEqual(3);
        expect(stats.widest).toBeGreaterThanOrEqual(mode.above / 2);
        // the probe (a filter that matches nothing) was refused: no narrow window was asked
        expect(p.logRanges[0]).toBe(head + 1);
      });
    });
  }
});

describe('the opening on a node without a range limit', () => {
  it('opens at 32 blocks after the probe and grows back x8, every check found whole, the same events', async () => {
    await through({ kind: 'well-behaved' }, async (p) => {
      const { events, stats } = await scan(p.url);
      expect(events).toEqual(bare);
      expect(stats.truncations).toBe(0);
      const scanned = p.logRanges.filter((_, i) => i > 0);
      expect(p.logRanges[0]).toBe(head + 1);
      expect(scanned[0]).toBe(32);
      expect(Math.max(...scanned)).toBeGreaterThanOrEqual(256);
      expect(p.calls.eth_getLogs).toBeLessThan(20);
    });
  });

  it('a scan of at most 8 x openingRange blocks asks no probe and does not open', async () => {
    await through({ kind: 'well-behaved' }, async (p) => {
      const scanner = createEvmScanner(
        { ...configFor([target(chain)]).chains.find((c) => c.network === 'base')!, rpcUrl: p.url },
        { baseDelayMs: 5, maxDelayMs: 20 },
        quietLogger(),
      );
      for await (const _ of scanner.scan(0, 255)) void _;
      expect(p.logRanges[0]).toBe(256);
    });
  });
});
