/**
 * The full completeness census and its repair (src/completeness/), against a real local chain
 * behind test/helpers/rpc-proxy.ts: a silent cap at any number (10, 7, 13) with default settings,
 * one block holding more logs than the cap (read from its receipts, with and without
 * eth_getBlockReceipts), the exact list of differences per agent and per (agent, client) pair,
 * their repair through narrow topic filters, a census function that reverts (unchecked, named),
 * a chain without Multicall3 (plain eth_calls, said in /health) and the CENSUS_FULL_EVERY schedule.
 * Every network slug points at the same local chain: each index must equal the bare node's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pad, toFunctionSelector, type Address, type Hex } from 'viem';
import { createApp } from '../src/doors/http/app.js';
import { startLocalNode } from '../src/demo/local-node.js';
import {
  deployRegistries,
  giveFeedback,
  giveFeedbackCall,
  registerAgent,
  revokeFeedback,
  sendCallsInBlock,
  transferAgent,
  type Registries,
} from '../src/demo/registries.js';
import { PLAIN_FULL_MAX_READS } from '../src/completeness/after-scan.js';
import { runCensus } from '../src/completeness/census.js';
import { createEvmScanner, type EvmScanOptions } from '../src/indexer/evm-scanner.js';
import { TOPIC } from '../src/indexer/evm-abi.js';
import { runIndexPass } from '../src/indexer/pass.js';
import type { Config } from '../src/config.js';
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
import {
  startHostileRpc,
  withHostileRpc,
  type HostileRpc,
  type ProxyMode,
  type ProxyOptions,
} from './helpers/rpc-proxy.js';

let chain: LocalChain;
let t: TestDatabase;
let reference: Record<string, unknown[]>;
/** Transactions of the scenario the drop test leaves out of wide answers. */
const tx: { feedback?: Hex; revocation?: Hex; transfer?: Hex; register?: Hex } = {};

const FAST: Partial<EvmScanOptions> = { baseDelayMs: 5, maxDelayMs: 20 };

/**
 * Six agents (one transferred), 15 ratings in ONE block (more logs than any cap tried here),
 * 36 more over single blocks, three revocations: 51 ratings from six clients.
 */
async function play(c: LocalChain): Promise<void> {
  const k = c.node.privateKeys;
  const a = c.node.accounts;
  for (let i = 0; i < 6; i++) {
    const r = await registerAgent(c.reg, k[1]!, `https://agent${i}.example/card.json`);
    if (i === 5) tx.register = r.txHash;
  }
  tx.transfer = (await transferAgent(c.reg, k[1]!, 0, a[3] as Address)).txHash;
  await sendCallsInBlock(
    c.node.rpcUrl,
    Array.from({ length: 15 }, (_, i) => ({
      signer: k[4 + (i % 6)]!,
      call: giveFeedbackCall(c.reg, { agentId: 1 + (i % 5), value: 40 + i, tag1: 'dense' }),
    })),
  );
  for (let i = 0; i < 36; i++) {
    const r = await giveFeedback(c.reg, k[4 + (i % 6)]!, {
      agentId: i % 6,
      value: 50 + i,
      tag1: `t${i % 3}`,
    });
    if (i === 13) tx.feedback = r.txHash;
    if (i % 5 === 0) await c.node.mine(2);
  }
  await revokeFeedback(c.reg, k[4]!, 0, 1);
  tx.revocation = (await revokeFeedback(c.reg, k[6]!, 2, 1)).txHash;
  await revokeFeedback(c.reg, k[7]!, 3, 1);
}

const through = <T>(mode: ProxyMode, fn: (p: HostileRpc) => Promise<T>, o: ProxyOptions = {}): Promise<T> =>
  withHostileRpc(chain.node.rpcUrl, mode, fn, o);

async function pass(
  targets: ChainTarget[],
  over: Partial<Config> = {},
  scan: Partial<EvmScanOptions> = FAST,
) {
  const log = quietLogger();
  const r = await runIndexPass({ db: t.db, config: configFor(targets, over), log, afterPass: null, scan });
  if (r.status !== 'ok') throw new Error('pass locked');
  return { r, chain: r.chains[0]!, log };
}

function healthOf(network: string, targets: ChainTarget[]) {
  const app = createApp({ config: configFor(targets), db: t.db, now: () => new Date() });
  return async () => {
    const h = (await (await app.request('/health')).json()) as {
      status: string;
      chains: {
        network: string;
        census: {
          state: string;
          scope: string | null;
          method: string | null;
          full_block: number | null;
          detail: Record<string, unknown> | null;
        };
      }[];
    };
    return { status: h.status, census: h.chains.find((c) => c.network === network)!.census };
  };
}

beforeAll(async () => {
  [chain, t] = await Promise.all([startLocalChain('base', 8453), openTestDatabase()]);
  await play(chain);
  const { chain: c } = await pass([target(chain)]);
  expect(c.status).toBe('ok');
  expect(c.census).toMatchObject({ state: 'ok', scope: 'full', method: 'multicall3' });
  reference = await dumpNetwork(t.db, 'base');
  expect(reference.ratings).toHaveLength(51);
}, 180_000);

afterAll(async () => {
  await t?.close();
  await chain?.close();
});

describe('a silent cap at any number, default settings', () => {
  it('every answer above 10 logs cut to exactly 10: the pass ends exact and ok; a pass through the honest node then stays exact and ok', async () => {
    const celo = (url: string) => ({ ...target(chain, { network: 'celo' }), rpcUrl: url });
    await through({ kind: 'cap-results', max: 10 }, async (p) => {
      const { chain: c } = await pass([celo(p.url)], {}, {});
      expect(p.spoiled).toBeGreaterThan(0);
      expect(c.status).toBe('ok');
      expect(c.scan).toMatchObject({ cap: 10 });
      expect(c.scan!.truncations).toBeGreaterThan(0);
      // the block with 15 ratings was read from its receipts
      expect(c.scan!.denseBlocks).toBeGreaterThan(0);
      expect(c.census).toMatchObject({ state: 'ok', scope: 'full', repairs: 0, differences: 0 });
    });
    expect(await dumpNetwork(t.db, 'celo')).toEqual(reference);
    await through({ kind: 'well-behaved' }, async (p) => {
      const { chain: c } = await pass([celo(p.url)]);
      expect(c.census).toMatchObject({ state: 'ok', scope: 'full', repairs: 0 });
    });
    expect(await dumpNetwork(t.db, 'celo')).toEqual(reference);
    expect((await healthOf('celo', [celo(chain.node.rpcUrl)])()).census.state).toBe('ok');
  });

  for (const [max, network, blockReceipts] of [
    [7, 'ethereum', true],
    [13, 'arbitrum', false],
  ] as const) {
    it(`a cap at ${max} (not a round number), the dense block read ${blockReceipts ? 'with eth_getBlockReceipts' : 'receipt by receipt (no eth_getBlockReceipts)'}: exact`, async () => {
      await through(
        { kind: 'cap-results', max },
        async (p) => {
          const { chain: c } = await pass([{ ...target(chain, { network }), rpcUrl: p.url }], {}, {});
          expect(c.scan).toMatchObject({ cap: max });
          expect(c.census).toMatchObject({ state: 'ok', repairs: 0 });
          expect(p.calls.eth_getBlockReceipts).toBeGreaterThan(0);
          if (blockReceipts) expect(p.calls.eth_getTransactionReceipt ?? 0).toBe(0);
          // the node refuses the method once; the block's receipts are then read one by one
          else {
            expect(p.calls.eth_getBlockReceipts).toBe(1);
            expect(p.calls.eth_getTransactionReceipt).toBeGreaterThanOrEqual(15);
          }
        },
        { blockReceipts },
      );
      expect(await dumpNetwork(t.db, network)).toEqual(reference);
    });
  }
});

describe('the exact differences, and their repair with narrow filters', () => {
  const lost = () => [tx.feedback!, tx.revocation!, tx.transfer!, tx.register!];

  it('lists every agent and every (agent, client) pair that differs, nothing else', async () => {
    await through({ kind: 'drop-wide', txHashes: lost() }, async (p) => {
      const { chain: c } = await pass([{ ...target(chain, { network: 'optimism' }), rpcUrl: p.url }], {
        census: { enabled: false, sample: 16, seed: null },
      });
      expect(c.census).toBeUndefined();
      expect(p.droppedLogs).toBeGreaterThan(0);
    });
    const cfg = configFor([target(chain, { network: 'optimism' })]).chains.find(
      (x) => x.network === 'optimism',
    )!;
    const scanner = createEvmScanner(cfg, FAST, quietLogger());
    const block = Number(await chain.node.request<string>('eth_blockNumber'));
    const out = await runCensus(scanner.reads, t.db, cfg, block, { scope: 'full' });
    const a = chain.node.accounts.map((x) => x.toLowerCase());
    expect(out).toMatchObject({
      state: 'mismatch',
      scope: 'full',
      method: 'multicall3',
      minted: 6,
      registered: 5,
    });
    expect(out.agentsChecked).toBe(6);
    const sorted = [...out.differences].sort((x, y) =>
      `${x.what}${x.agent_id}${x.client}`.localeCompare(`${y.what}${y.agent_id}${y.client}`),
    );
    expect(sorted).toEqual([
      { what: 'agents', chain: '6', index: '5' },
      // agent 1's 2nd rating from client 5 lost (i = 13 of the loop: agent 1, client k[5])
      {
        what: 'feedback',
        agent_id: '1',
        client: a[5],
        chain: String(countPair('1', a[5]!)),
        index: String(countPair('1', a[5]!) - 1),
      },
      { what: 'owner', agent_id: '0', chain: a[3], index: a[1] },
      { what: 'owner', agent_id: '5', chain: a[1], index: 'none' },
      { what: 'registered', agent_id: '5', chain: 'minted', index: 'no Registered event' },
      { what: 'revoked', agent_id: '2', client: a[6], chain: '1', index: '0' },
      { what: 'uri', agent_id: '5', chain: 'https://agent5.example/card.json', index: 'none' },
    ]);
  });

  it('a pass repairs exactly those with narrow topic filters, then censuses them again: ok, equal to the bare index', async () => {
    await through({ kind: 'drop-wide', txHashes: lost() }, async (p) => {
      const { chain: c, log } = await pass([{ ...target(chain, { network: 'optimism' }), rpcUrl: p.url }]);
      expect(c.census).toMatchObject({ state: 'ok', scope: 'full', repairs: 1, differences: 0 });
      expect(c.census!.repaired).toBeGreaterThan(0);
      expect(log.warnings.some((w) => /census mismatch .*repair 1: the logs of 4 agents/.test(w))).toBe(true);
      // Only narrow filters were asked (no scan: nothing new on the chain).
      const narrow = p.logQueries as { topics?: unknown[] }[];
      expect(narrow.length).toBeGreaterThan(0);
      for (const q of narrow) expect((q.topics ?? []).slice(1).some((x) => x !== null)).toBe(true);
      const topics = JSON.stringify(narrow);
      expect(topics).toContain(pad('0x5', { size: 32 })); // agent 5's identity events
      expect(topics).toContain(TOPIC.Transfer);
      expect(topics).toContain(pad(chain.node.accounts[5]!.toLowerCase() as Hex, { size: 32 })); // the pair's client
    });
    expect(await dumpNetwork(t.db, 'optimism')).toEqual(reference);
  });
});

/** Ratings of a pair in the scenario (from the reference index). */
function countPair(agent: string, client: string): number {
  return (reference.ratings as { agent_id: string; rater: string }[]).filter(
    (r) => r.agent_id === agent && r.rater === client.toLowerCase(),
  ).length;
}

describe('a census function that reverts', () => {
  it('a reputation registry without getClients: unchecked, naming the function, never a mismatch or a repair', async () => {
    // A stand-in that answers getIdentityRegistry() (the configuration check) and reverts anything else.
    const selector = toFunctionSelector('getIdentityRegistry()').slice(2);
    const identity = chain.reg.identityRegistry.toLowerCase().slice(2);
    const code = `0x60003560e01c63${selector}14601357600080fd5b73${identity}60005260206000f3` as Hex;
    const standIn = '0x0000000000000000000000000000000000c1a55e' as Hex;
    await chain.node.request('hardhat_setCode', [standIn, code]);
    const tg = {
      ...target(chain, { network: 'robinhood' }),
      reg: { ...chain.reg, reputationRegistry: standIn },
    };
    const { chain: c } = await pass([tg]);
    expect(c.status).toBe('ok');
    expect(c.census).toMatchObject({ state: 'unchecked', repairs: 0, differences: 0 });
    expect(c.census!.error).toMatch(/getClients/);
    const h = await healthOf('robinhood', [tg])();
    expect(h.census.state).toBe('unchecked');
    expect(String(h.census.detail!.error)).toMatch(/getClients \(agent 0\)/);
    expect(h.census.detail!.difference_count).toBe(0);
  });
});

describe('without Multicall3, and the full census schedule', () => {
  let node: Awaited<ReturnType<typeof startLocalNode>>;
  let reg: Registries;
  let bare: Record<string, unknown[]>;
  const tgt = (network: string, url?: string): ChainTarget => ({
    network,
    chainId: 8453,
    rpcUrl: url ?? node.rpcUrl,
    reg,
  });

  beforeAll(async () => {
    node = await startLocalNode({ chainId: 8453, multicall3: false });
    reg = await deployRegistries(node.rpcUrl, node.privateKeys[0]!);
    for (let i = 0; i < 3; i++) await registerAgent(reg, node.privateKeys[1]!, `https://plain${i}.example`);
    for (let i = 0; i < 9; i++)
      await giveFeedback(reg, node.privateKeys[4 + (i % 3)]!, { agentId: i % 3, value: 70 + i });
    await revokeFeedback(reg, node.privateKeys[4]!, 0, 1);
    const { chain: c } = await pass([tgt('bsc')]);
    expect(c.census).toMatchObject({ state: 'ok' });
    bare = await dumpNetwork(t.db, 'bsc');
  }, 120_000);

  afterAll(async () => {
    await node?.close();
  });

  it('plain eth_calls in JSON-RPC batches of at most 10, said in /health', async () => {
    const p = await startHostileRpc(node.rpcUrl, { kind: 'batch-cap', max: 10 });
    try {
      const { chain: c } = await pass([tgt('monad', p.url)]);
      expect(c.census).toMatchObject({ state: 'ok', scope: 'full', method: 'eth_call' });
      expect(p.refusedBatches).toBe(0);
    } finally {
      await p.close();
    }
    expect(await dumpNetwork(t.db, 'monad')).toEqual(bare);
    const h = await healthOf('monad', [tgt('monad')])();
    expect(h.census).toMatchObject({ state: 'ok', scope: 'full', method: 'eth_call' });
    // A full census of a big chain without Multicall3 would cost about 5·agents + ratings eth_calls:
    // above PLAIN_FULL_MAX_READS (here a bound of 10, for three agents) the sample stands in, and says so.
    expect(PLAIN_FULL_MAX_READS).toBe(5_000);
    const cfg = configFor([tgt('monad')]).chains.find((x) => x.network === 'monad')!;
    const scanner = createEvmScanner(cfg, FAST, quietLogger());
    const block = Number(await node.request<string>('eth_blockNumber'));
    const out = await runCensus(scanner.reads, t.db, cfg, block, {
      scope: 'full',
      sample: 2,
      seed: 1,
      plainFullMax: { reads: 10, ratings: 9 },
    });
    expect(out).toMatchObject({ state: 'ok', scope: 'sample', method: 'eth_call', agentsChecked: 2 });
    expect(out.note).toMatch(/no Multicall3 at block \d+ and about 24 plain eth_calls/);
  });

  it('CENSUS_FULL_EVERY=3: a full census every third pass, a sample between; a sample that disagrees is followed by a full census and its repair', async () => {
    const census = { enabled: true, sample: 2, seed: 5, fullEvery: 3 };
    const scopes: (string | undefined)[] = [];
    for (let i = 0; i < 4; i++) {
      const { chain: c } = await pass([tgt('polygon')], { census });
      expect(c.census?.state).toBe('ok');
      scopes.push(c.census?.scope);
    }
    expect(scopes).toEqual(['full', 'sample', 'sample', 'full']);
    const h = await healthOf('polygon', [tgt('polygon')])();
    expect(h.census.scope).toBe('full');
    expect(h.census.full_block).toBeGreaterThan(0);

    // New ratings the endpoint then leaves out of its scan, one for each agent (a sample of 2 of
    // the 3 agents meets one whichever it draws).
    const added: Hex[] = [];
    for (let a = 0; a < 3; a++)
      added.push((await giveFeedback(reg, node.privateKeys[7]!, { agentId: a, value: 11 + a })).txHash);
    const p = await startHostileRpc(node.rpcUrl, { kind: 'drop-wide', txHashes: added });
    try {
      const { chain: c, log } = await pass([tgt('polygon', p.url)], { census });
      expect(log.warnings.some((w) => w.includes('the census sample disagrees'))).toBe(true);
      expect(c.census).toMatchObject({ state: 'ok', scope: 'full', repairs: 1 });
    } finally {
      await p.close();
    }
    const { chain: again } = await pass([tgt('bsc')]);
    expect(again.census?.state).toBe('ok');
    expect(await dumpNetwork(t.db, 'polygon')).toEqual(await dumpNetwork(t.db, 'bsc'));
  });
});
