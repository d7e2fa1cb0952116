/**
 * The EVM indexer against hostile RPC endpoints (test/helpers/rpc-proxy.ts in front of a real
 * local chain): every provider's "range too large" wording, silent truncation and empty answers
 * above a window (caught by the completeness census and repaired by rescans), batch caps, 429s with
 * and without Retry-After; and the configuration mistakes a new operator makes (an implementation
 * address, a reputation registry of another identity registry, no code, a startBlock above the
 * head or moved earlier later). Every network slug points at the same local chain, so the index
 * built through each endpoint must equal the one built from the bare node, row for row.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pad, type Address, type Hex } from 'viem';
import { MULTICALL3_ADDRESS } from '../src/chains.js';
import { createApp } from '../src/doors/http/app.js';
import {
  deployRegistries,
  giveFeedback,
  registerAgent,
  revokeFeedback,
  transferAgent,
} from '../src/demo/registries.js';
import { createEvmScanner, type EvmScanOptions } from '../src/indexer/evm-scanner.js';
import { EIP1967_IMPLEMENTATION_SLOT, INITIALIZABLE_SLOT } from '../src/indexer/config-check.js';
import { runCensus } from '../src/completeness/census.js';
import { runIndexPass, type ChainPassResult } from '../src/indexer/pass.js';
import type { IndexEvent } from '../src/index-events.js';
import { renderMetrics, setMetricsDatabase } from '../src/metrics.js';
import { countingDb } from './helpers/counting-db.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  configFor,
  dumpNetwork,
  quietLogger,
  startLocalChain,
  target,
  type ChainTarget,
  type LocalChain,
} from './helpers/indexer-fixtures.js';
import { PROVIDER_STYLES, withHostileRpc, type HostileRpc, type ProxyMode } from './helpers/rpc-proxy.js';

let chain: LocalChain;
let t: TestDatabase;
let reference: Record<string, unknown[]>;
let bareEvents: IndexEvent[];
let head: number;

const FAST: Partial<EvmScanOptions> = { baseDelayMs: 5, maxDelayMs: 20 };

/** Four agents, a transfer chain, 12 ratings, two revocations; empty blocks between (~70 blocks). */
async function play(c: LocalChain): Promise<void> {
  const k = c.node.privateKeys;
  const a = c.node.accounts;
  const ids: bigint[] = [];
  for (let i = 0; i < 4; i++) {
    ids.push((await registerAgent(c.reg, k[1]!, `https://a${i}.example`)).agentId);
    await c.node.mine(2);
  }
  await transferAgent(c.reg, k[1]!, ids[0]!, a[3] as Address);
  for (let i = 0; i < 12; i++) {
    await giveFeedback(c.reg, k[7 + (i % 3)]!, { agentId: ids[i % 4]!, value: 60 + i, tag1: `t${i % 2}` });
    await c.node.mine(3);
  }
  await revokeFeedback(c.reg, k[7]!, ids[0]!, 1);
  await transferAgent(c.reg, k[3]!, ids[0]!, a[6] as Address);
  await revokeFeedback(c.reg, k[8]!, ids[1]!, 1);
}

/** Every event a scanner reads from `url` over the whole chain (no database). */
async function scanAll(url: string, opts: Partial<EvmScanOptions> = {}) {
  const scanner = createEvmScanner(
    { ...configFor([target(chain)]).chains.find((c) => c.network === 'base')!, rpcUrl: url },
    { ...FAST, ...opts },
    quietLogger(),
  );
  const events: IndexEvent[] = [];
  for await (const b of scanner.scan(0, head)) events.push(...b.events);
  return { events, stats: scanner.stats };
}

const through = <T>(mode: ProxyMode, fn: (p: HostileRpc) => Promise<T>): Promise<T> =>
  withHostileRpc(chain.node.rpcUrl, mode, fn);

async function pass(targets: ChainTarget[], over: Parameters<typeof configFor>[1] = {}) {
  const log = quietLogger();
  const r = await runIndexPass({
    db: t.db,
    config: configFor(targets, over),
    log,
    afterPass: null,
    scan: FAST,
  });
  if (r.status !== 'ok') throw new Error('pass locked');
  return { r, chain: r.chains[0]!, log };
}

async function chainRow(network: string) {
  const [row] = await t.db.query<Record<string, unknown>>('SELECT * FROM chains WHERE network = $1', [
    network,
  ]);
  return row!;
}

beforeAll(async () => {
  [chain, t] = await Promise.all([startLocalChain('base', 8453), openTestDatabase()]);
  await play(chain);
  head = Number(await chain.node.request<string>('eth_blockNumber'));
  const { r } = await pass([target(chain)]);
  expect(r.failed).toEqual([]);
  reference = await dumpNetwork(t.db, 'base');
  expect(reference.ratings).toHaveLength(12);
  bareEvents = (await scanAll(chain.node.rpcUrl)).events;
}, 120_000);

afterAll(async () => {
  setMetricsDatabase(null);
  await t?.close();
  await chain?.close();
});

describe('"range too large" in every provider\'s words', () => {
  for (const style of PROVIDER_STYLES) {
    it(`${style}: the same events, never a served range above the cap${style === 'ankr-like' ? '' : ', the suggested range taken'}`, async () => {
      await through({ kind: 'range-error', above: 10, style }, async (p) => {
        const { events, stats } = await scanAll(p.url);
        expect(events).toEqual(bareEvents);
        expect(p.spoiled).toBeGreaterThan(0);
        if (style === 'ankr-like') {
          // no range named: halving is all the scanner can do
          expect(stats.halvings).toBeGreaterThan(0);
        } else {
          // one refusal is enough: the next range is the one the error named
          expect(stats.suggested).toBeGreaterThan(0);
          expect(stats.halvings).toBe(0);
          expect(stats.minRange).toBe(10);
        }
        if (['quicknode', 'reth', 'tenderly', 'infura-range'].includes(style)) {
          // a named limit is a ceiling: the range never grows back into refusals
          expect(stats.ceiling).toBe(10);
          expect(p.spoiled).toBe(1);
        }
      });
    });
  }
});

describe('a silent cap on the number of logs, at any number', () => {
  for (const max of [7, 13, 10]) {
    it(`every answer above ${max} logs cut to exactly ${max} (HTTP 200), default settings: the same events`, async () => {
      await through({ kind: 'cap-results', max }, async (p) => {
        const { events, stats } = await scanAll(p.url);
        expect(p.spoiled).toBeGreaterThan(0);
        expect(stats.truncations).toBeGreaterThan(0);
        expect(stats.cap).toBe(max);
        expect(events).toEqual(bareEvents);
      });
    });
  }

  it('an honest node: answers checked only when they reach the largest count seen, never proven cut', async () => {
    await through({ kind: 'well-behaved' }, async (p) => {
      const { events, stats } = await scanAll(p.url, { initialRange: 8, maxRange: 8 });
      expect(events).toEqual(bareEvents);
      expect(stats.truncations).toBe(0);
      expect(stats.cap).toBeNull();
      // each check costs two getLogs: far fewer checks than windows
      const windows = Math.ceil((head + 1) / 8);
      expect(stats.capChecks).toBeGreaterThan(0);
      expect(stats.capChecks).toBeLessThan(windows / 2);
      expect(p.calls.eth_getLogs).toBeLessThanOrEqual(
        windows + 2 * (stats.capChecks + stats.denseBlocks) + 2,
      );
    });
  });
});

describe('batches, rate limits', () => {
  it('a node that caps JSON-RPC batches at 10: the same events, no batch refused', async () => {
    await through({ kind: 'batch-cap', max: 10 }, async (p) => {
      const { events } = await scanAll(p.url);
      expect(events).toEqual(bareEvents);
      expect(p.refusedBatches).toBe(0);
    });
  });

  it('429 without Retry-After: retried with backoff, the same events', async () => {
    await through({ kind: 'rate-limit', every: 3, times: 4 }, async (p) => {
      const { events, stats } = await scanAll(p.url, { initialRange: 8, maxRange: 8 });
      expect(events).toEqual(bareEvents);
      expect(p.rateLimited).toBe(4);
      expect(stats.retries).toBe(4);
    });
  });

  it('429 with Retry-After: no request comes back before it ran out', async () => {
    await through({ kind: 'rate-limit', every: 2, times: 2, retryAfterSeconds: 1 }, async (p) => {
      const t0 = Date.now();
      const { events } = await scanAll(p.url, { initialRange: 16, maxRange: 16 });
      expect(events).toEqual(bareEvents);
      expect(p.rateLimited).toBe(2);
      expect(p.early).toBe(0);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    });
  }, 30_000);
});

describe('silent loss, caught by the census', () => {
  it('a well-behaved node: a full census through Multicall3 agrees, no repair', async () => {
    await through({ kind: 'well-behaved' }, async (p) => {
      const { chain: c } = await pass([{ ...target(chain, { network: 'bsc' }), rpcUrl: p.url }]);
      expect(c.status).toBe('ok');
      expect(c.census).toEqual({
        state: 'ok',
        scope: 'full',
        method: 'multicall3',
        repairs: 0,
        repaired: 0,
        differences: 0,
        calls: expect.any(Number),
      });
      // four agents, 12 ratings: the minted count and three rounds of reads, a handful of eth_calls
      expect(c.census!.calls).toBeLessThanOrEqual(8);
      expect(p.calls.eth_call).toBe(c.census!.calls + 1); // + the configuration check's getIdentityRegistry
      expect(await dumpNetwork(t.db, 'bsc')).toEqual(reference);
    });
  });

  for (const [network, kind] of [
    ['celo', 'truncate'],
    ['ethereum', 'empty'],
  ] as const) {
    it(`${kind}: HTTP 200 with ${kind === 'truncate' ? '20 % of the logs dropped' : '[]'} above 6 blocks: the census finds it, the repair from its differences restores it`, async () => {
      await through({ kind, above: 6 }, async (p) => {
        const { chain: c, log } = await pass([{ ...target(chain, { network }), rpcUrl: p.url }]);
        expect(p.droppedLogs).toBeGreaterThan(0);
        expect(c.status).toBe('ok');
        expect(c.census?.state).toBe('ok');
        expect(c.census!.repairs).toBeGreaterThan(0);
        expect(c.census!.repaired).toBeGreaterThan(0);
        expect(log.warnings.some((w) => w.includes('census mismatch'))).toBe(true);
        expect(await dumpNetwork(t.db, network)).toEqual(reference);
        expect((await chainRow(network)).census_state).toBe('ok');
      });
    });
  }

  it('the census reads the index in three queries per chunk of agents (not two per agent)', async () => {
    const cfg = configFor([target(chain)]).chains.find((c) => c.network === 'base')!;
    const scanner = createEvmScanner(cfg, FAST, quietLogger());
    for (const scope of ['full', 'sample'] as const) {
      const counted = countingDb(t.db);
      const out = await runCensus(scanner.reads, counted, cfg, head, { scope, sample: 16, seed: 3 });
      expect(out).toMatchObject({ state: 'ok', scope, agentsChecked: 4, method: 'multicall3' });
      expect(out.pairsChecked).toBeGreaterThan(0);
      // Registered rows counted, the chunk's agent rows, their (agent, rater) pairs.
      expect(counted.calls()).toBe(3);
    }
  });

  it('without the census (CENSUS=0) the same node leaves rows out: the census is what repairs them', async () => {
    await through({ kind: 'truncate', above: 6 }, async (p) => {
      const { chain: c } = await pass([{ ...target(chain, { network: 'arbitrum' }), rpcUrl: p.url }], {
        census: { enabled: false, sample: 16, seed: null },
      });
      expect(c.status).toBe('ok');
      expect(c.census).toBeUndefined();
      expect(await dumpNetwork(t.db, 'arbitrum')).not.toEqual(reference);
      expect((await chainRow('arbitrum')).census_state).toBeNull();
    });
  });

  it('a loss no repair restores stays a mismatch (/health degraded, every difference stored, /metrics); the next pass through an honest node heals it', async () => {
    await through({ kind: 'empty', above: 0 }, async (p) => {
      const { chain: c } = await pass([{ ...target(chain, { network: 'monad' }), rpcUrl: p.url }], {
        census: { enabled: true, sample: 4, seed: 7 },
      });
      expect(c.status).toBe('ok');
      expect(c.census?.state).toBe('mismatch');
      expect(c.census!.repairs).toBe(3);
      expect(c.census!.repaired).toBe(0);
    });
    const app = createApp({
      config: configFor([target(chain, { network: 'monad' })]),
      db: t.db,
      now: () => new Date(),
    });
    const health = async () =>
      (await (await app.request('/health')).json()) as {
        status: string;
        status_reason: string;
        chains: {
          network: string;
          census: {
            state: string;
            scope: string;
            method: string;
            block: number;
            detail: Record<string, unknown>;
          };
        }[];
      };
    const before = await health();
    expect(before.status).toBe('degraded');
    expect(before.status_reason).toContain('census mismatch');
    const monad = before.chains.find((x) => x.network === 'monad')!;
    expect(monad.census).toMatchObject({ state: 'mismatch', scope: 'full', method: 'multicall3' });
    expect(monad.census.block).toBeGreaterThan(0);
    expect(monad.census.detail.minted).toBe(4);
    expect(monad.census.detail.registered).toBe(0);
    expect(monad.census.detail.differences).toContainEqual({ what: 'agents', chain: '4', index: '0' });
    // Every difference is stored: each agent (registered, owner, uri) and each (agent, client) pair.
    const stored = await t.db.query<{ what: string; agent_id: string | null; client: string | null }>(
      `SELECT what, agent_id, client FROM census_differences WHERE network = 'monad' ORDER BY seq`,
    );
    expect(stored).toHaveLength(monad.census.detail.difference_count as number);
    const pairsOnChain = new Set(
      reference.ratings!.map(
        (r) => `${(r as { agent_id: string }).agent_id}|${(r as { rater: string }).rater}`,
      ),
    );
    expect(
      stored
        .filter((d) => d.what === 'feedback')
        .map((d) => `${d.agent_id}|${d.client}`)
        .sort(),
    ).toEqual([...pairsOnChain].sort());
    expect(stored.filter((d) => d.what === 'registered').map((d) => d.agent_id)).toEqual([
      '0',
      '1',
      '2',
      '3',
    ]);
    setMetricsDatabase(t.db);
    const { body } = await renderMetrics();
    expect(body).toMatch(/repindex_census_total\{chain="monad",outcome="mismatch"\} 1/);
    expect(body).toMatch(/repindex_census_repairs_total\{chain="monad"\} 3/);
    expect(body).toMatch(/repindex_chain_census_ok\{chain="monad"\} 0/);

    // The operator fixes the RPC: the next pass (nothing new on the chain) heals the index.
    await through({ kind: 'well-behaved' }, async (p) => {
      const { chain: c } = await pass([{ ...target(chain, { network: 'monad' }), rpcUrl: p.url }], {
        census: { enabled: true, sample: 4, seed: 7 },
      });
      expect(c.census).toMatchObject({ state: 'ok', scope: 'full', repairs: 1 });
      expect(p.calls.eth_getLogs).toBeGreaterThan(0);
    });
    expect(await dumpNetwork(t.db, 'monad')).toEqual(reference);
    const after = await health();
    expect(after.chains.find((x) => x.network === 'monad')!.census.state).toBe('ok');
    expect(await t.db.query(`SELECT 1 FROM census_differences WHERE network = 'monad'`)).toHaveLength(0);
  });
});

describe('a census that cannot run', () => {
  it("keeps a standing mismatch on the chain's row (/health stays degraded); after an agreeing census it stores unchecked", async () => {
    const other = await openTestDatabase();
    try {
      const census = { enabled: true, sample: 4, seed: 7 };
      // Both chains in every pass (a pass's configuration marks the chains it leaves out disabled).
      const passOn = async (urls: { monad: string; bsc: string }) => {
        const r = await runIndexPass({
          db: other.db,
          config: configFor(
            [
              { ...target(chain, { network: 'monad' }), rpcUrl: urls.monad },
              { ...target(chain, { network: 'bsc' }), rpcUrl: urls.bsc },
            ],
            { census },
          ),
          log: quietLogger(),
          afterPass: null,
          scan: FAST,
        });
        if (r.status !== 'ok') throw new Error('pass locked');
        const of = (n: string) => r.chains.find((c) => c.network === n)!;
        return { monad: of('monad'), bsc: of('bsc') };
      };
      const app = createApp({
        config: configFor([target(chain, { network: 'monad' }), target(chain, { network: 'bsc' })]),
        db: other.db,
        now: () => new Date(),
      });
      const health = async () => {
        const h = (await (await app.request('/health')).json()) as {
          status: string;
          status_reason: string;
          chains: {
            network: string;
            census: { state: string; checked_at: string | null; detail: unknown };
          }[];
        };
        const of = (n: string) => h.chains.find((x) => x.network === n)!.census;
        return { status: h.status, reason: h.status_reason, monad: of('monad'), bsc: of('bsc') };
      };

      // monad: every getLogs answer emptied, a mismatch no rescan repairs; bsc: an agreeing census.
      await through({ kind: 'empty', above: 0 }, async (p) => {
        const r = await passOn({ monad: p.url, bsc: chain.node.rpcUrl });
        expect(r.monad.census?.state).toBe('mismatch');
        expect(r.bsc.census?.state).toBe('ok');
      });
      const before = await health();
      expect(before.monad.state).toBe('mismatch');
      expect(before.bsc.state).toBe('ok');
      expect(before.status).toBe('degraded');

      // A pass during which the census's reads (through Multicall3) fail: the scan succeeds, the census cannot run.
      await through({ kind: 'fail-call', to: MULTICALL3_ADDRESS }, async (p) => {
        const r = await passOn({ monad: p.url, bsc: p.url });
        for (const c of [r.monad, r.bsc]) {
          expect(c.status).toBe('ok');
          expect(c.census).toMatchObject({
            state: 'unchecked',
            error: expect.stringMatching(/503|eth_call/),
          });
        }
        expect(p.failed).toBeGreaterThan(0);
      });
      const after = await health();
      // The standing mismatch is left as it was (state, block, time, what differed): still degraded.
      expect(after.monad).toEqual(before.monad);
      expect(after.status).toBe('degraded');
      expect(after.reason).toContain('census mismatch');
      expect(after.reason).toContain('monad');
      // No mismatch before it: the census is stored unchecked, with the error.
      expect(after.bsc.state).toBe('unchecked');
      expect(after.bsc.checked_at).not.toBe(before.bsc.checked_at);
      expect(after.bsc.detail).toMatchObject({ error: expect.stringMatching(/503|eth_call/) });
    } finally {
      await other.close();
    }
  });
});

describe('configuration mistakes', () => {
  async function refused(tg: ChainTarget, pattern: RegExp): Promise<ChainPassResult> {
    const { r, chain: c } = await pass([tg]);
    expect(r.failed).toEqual([tg.network]);
    expect(c.error).toMatch(pattern);
    const row = await chainRow(tg.network);
    expect(row.last_error).toMatch(pattern);
    expect(row.backfill_complete).toBe(false);
    expect(row.last_scanned_block).toBeNull();
    return c;
  }

  it("the identity registry's implementation (its code, empty storage): refused, naming the address to use", async () => {
    const impl = '0x00000000000000000000000000000000000a11ce' as Hex;
    const code = await chain.node.request<Hex>('eth_getCode', [chain.reg.identityRegistry, 'latest']);
    await chain.node.request('hardhat_setCode', [impl, code]);
    await refused(
      { ...target(chain, { network: 'optimism' }), reg: { ...chain.reg, identityRegistry: impl } },
      new RegExp(`set identityRegistry to ${chain.reg.identityRegistry.toLowerCase()}`),
    );
  });

  /** Code of `from` at `impl`, its initializers disabled as an OpenZeppelin implementation's are. */
  async function implementationOf(from: Hex, impl: Hex): Promise<void> {
    const code = await chain.node.request<Hex>('eth_getCode', [from, 'latest']);
    await chain.node.request('hardhat_setCode', [impl, code]);
    await chain.node.request('hardhat_setStorageAt', [
      impl,
      INITIALIZABLE_SLOT,
      `0x${'0'.repeat(48)}${'f'.repeat(16)}`,
    ]);
  }

  it("the identity registry's implementation (initializers disabled): refused, naming the proxy the reputation registry's getIdentityRegistry() names on this chain", async () => {
    const impl = '0x00000000000000000000000000000000000a1d00' as Hex;
    await implementationOf(chain.reg.identityRegistry, impl);
    const c = await refused(
      { ...target(chain, { network: 'polygon' }), reg: { ...chain.reg, identityRegistry: impl } },
      new RegExp(
        `identityRegistry 0x0+a1d00 is an implementation contract .*set identityRegistry to ${chain.reg.identityRegistry.toLowerCase()} \\(the reputationRegistry's getIdentityRegistry\\(\\) names it\\)`,
      ),
    );
    // never the network's built-in mainnet proxy, which has no code on this chain
    expect(c.error).not.toMatch(/0x8004/i);
  });

  it("the reputation registry's implementation: refused, naming the built-in proxy only when it is a contract on this chain whose EIP-1967 slot holds the implementation", async () => {
    const impl = '0x00000000000000000000000000000000000b0b00' as Hex;
    await implementationOf(chain.reg.reputationRegistry, impl);
    const tg = { ...target(chain, { network: 'polygon' }), reg: { ...chain.reg, reputationRegistry: impl } };
    const bare = await refused(
      tg,
      /reputationRegistry 0x0+b0b00 is an implementation contract .*configure the proxy's address instead \(the contract whose EIP-1967 implementation slot/,
    );
    expect(bare.error).not.toMatch(/0x8004/i);
    // A proxy at the built-in address of polygon, on this chain, pointing at the implementation.
    const builtIn = '0x8004BAa17C55a88189AE136b182e5fdA19dE9b63';
    await chain.node.request('hardhat_setCode', [builtIn, '0x6000']);
    await chain.node.request('hardhat_setStorageAt', [
      builtIn,
      EIP1967_IMPLEMENTATION_SLOT,
      pad(impl, { size: 32 }),
    ]);
    try {
      await refused(
        tg,
        new RegExp(
          `set reputationRegistry to ${builtIn.toLowerCase()} \\(the built-in reputationRegistry of polygon, whose EIP-1967 implementation slot holds this address\\)`,
        ),
      );
    } finally {
      await chain.node.request('hardhat_setCode', [builtIn, '0x']);
    }
  });

  it('a reputation registry whose getIdentityRegistry() answers zero (empty storage): refused', async () => {
    const impl = '0x0000000000000000000000000000000000c0ffee' as Hex;
    await chain.node.request('hardhat_setCode', [impl, '0x60206000f3']); // returns 32 zero bytes
    await refused(
      { ...target(chain, { network: 'robinhood' }), reg: { ...chain.reg, reputationRegistry: impl } },
      /getIdentityRegistry\(\) = the zero address: an implementation/,
    );
  });

  it('no code at a configured address: refused', async () => {
    await refused(
      {
        ...target(chain, { network: 'avalanche' }),
        reg: { ...chain.reg, identityRegistry: '0x000000000000000000000000000000000000dEaD' },
        startBlock: 0,
      },
      /no contract code at the identityRegistry 0x0+dead/,
    );
  });

  it('a startBlock above the chain head: an error in /health, never backfill_complete', async () => {
    await refused(
      target(chain, { network: 'solana', startBlock: head + 1_000 }),
      new RegExp(`startBlock ${head + 1_000} is above the chain head ${head}`),
    );
    const app = createApp({
      config: configFor([target(chain, { network: 'solana' })]),
      db: t.db,
      now: () => new Date(),
    });
    const health = (await (await app.request('/health')).json()) as {
      status: string;
      chains: { network: string; backfill_complete: boolean; last_error: string | null }[];
    };
    expect(health.status).toBe('degraded');
    const row = health.chains.find((x) => x.network === 'solana')!;
    expect(row.backfill_complete).toBe(false);
    expect(row.last_error).toContain('above the chain head');
  });

  it('registries that never emitted an event: indexed, with a warning in /health', async () => {
    const fresh = await deployRegistries(chain.node.rpcUrl, chain.node.privateKeys[2]!);
    const { chain: c, log } = await pass([target(chain, { network: 'robinhood', reg: fresh })]);
    expect(c.status).toBe('ok');
    expect(log.warnings.some((w) => w.includes('no agent and no feedback'))).toBe(true);
    const app = createApp({
      config: configFor([target(chain, { network: 'robinhood' })]),
      db: t.db,
      now: () => new Date(),
    });
    const health = (await (await app.request('/health')).json()) as {
      chains: { network: string; warnings: string[] }[];
    };
    expect(health.chains.find((x) => x.network === 'robinhood')!.warnings[0]).toMatch(
      /implementation behind a proxy/,
    );
  });
});

describe('startBlock moved earlier', () => {
  it('the next pass scans the range it had never scanned, and the index equals a full one', async () => {
    const other = await openTestDatabase();
    try {
      const mid = Math.floor(head / 2);
      const run = (startBlock: number) =>
        runIndexPass({
          db: other.db,
          config: configFor([target(chain, { startBlock })]),
          log: quietLogger(),
          afterPass: null,
          scan: FAST,
        });
      const late = await run(mid);
      expect(late.status === 'ok' && late.chains[0]!.status).toBe('ok');
      const partial = await dumpNetwork(other.db, 'base');
      expect(partial.ratings!.length).toBeLessThan(12);
      const [row] = await other.db.query<{ scanned_from_block: string }>(
        'SELECT scanned_from_block FROM chains WHERE network = $1',
        ['base'],
      );
      expect(Number(row!.scanned_from_block)).toBe(mid);

      const early = await run(0);
      expect(early.status === 'ok' && early.chains[0]!.missedRange).toEqual({ from: 0, to: mid - 1 });
      expect(await dumpNetwork(other.db, 'base')).toEqual(reference);
      const [after] = await other.db.query<{ scanned_from_block: string }>(
        'SELECT scanned_from_block FROM chains WHERE network = $1',
        ['base'],
      );
      expect(Number(after!.scanned_from_block)).toBe(0);
    } finally {
      await other.close();
    }
  });
});
