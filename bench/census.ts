/**
 * The full completeness census at scale: a local node whose registries hold N agents and
 * N × K feedback (default 100,000 agents, 5 feedback each from 5 distinct clients: 500,000
 * feedback in 500,000 (agent, client) pairs, the most pairs that many feedback can make, one in
 * ten revoked), an index holding the same (written by the real ingest), and P feedback the chain
 * has and the index lacks (default 100, real transactions with their logs).
 *
 * The node is anvil (the @foundry-rs/anvil binary from npm; BENCH_CENSUS_NODE=edr: the in-process
 * EDR node of the demo and the tests). Measured on this machine, inside one Multicall3 eth_call a
 * read costs EDR about 200 µs and anvil about 27 µs: EDR's speed, not the census's, would set the
 * figure. Multicall3 is put at its canonical address (its runtime code set there, as on a public
 * chain; EDR's genesis already holds it).
 *
 * The chain's state is built the fastest way measured: not transactions (one giveFeedback per
 * rating), not `hardhat_setStorageAt` (about 140 µs a slot on EDR, 1.5 ms on anvil over HTTP, for
 * 1.8 M slots), but the registries' storage written in bulk: each registry's code is swapped for a
 * 26-byte contract that stores (slot, value) pairs from its calldata (8,000 slots a transaction
 * on anvil, 2,400 on EDR: about 28 µs a slot), then the registry's code is put back. The slots
 * are those of contracts/*.sol's storage layout (checked afterwards through the registries' own
 * view functions).
 *
 * Measured, behind test/helpers/rpc-proxy.ts (well-behaved: it counts the requests):
 *  1. the full census alone (src/completeness/census.ts through Multicall3): eth_call requests,
 *     reads inside them, wall time, the differences found (the P planted ones);
 *  2. one index pass (nothing new to scan): the full census, the repair of the P differences with
 *     narrow getLogs filters, the census of those agents again: requests by method, wall time.
 *
 *   npm run bench:census
 *   BENCH_CENSUS_AGENTS=10000 npm run bench:census       # smaller
 *   DATABASE_URL=postgres://… npm run bench:census        # the index on PostgreSQL (private schema)
 *
 * Env: BENCH_CENSUS_AGENTS (100000), BENCH_CENSUS_FEEDBACK_PER_AGENT (5), BENCH_CENSUS_PLANTED
 * (100), BENCH_CENSUS_BATCH (reads per Multicall3 eth_call, default: CENSUS_BATCH's default 1000),
 * BENCH_CENSUS_NODE (anvil | edr).
 *
 * Modules: bench/census/options.ts (knobs, the synthetic agents), node.ts (the node),
 * chain-state.ts (the bulk-written storage and its check), index-side.ts (the database and the
 * ingest of the same agents).
 */
import { runCensus } from '../src/completeness/census.js';
import { deployRegistries, giveFeedbackCall, sendCallsInBlock } from '../src/demo/registries.js';
import { createEvmScanner } from '../src/indexer/evm-scanner.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { lowerScannedFrom, registerChains, setStartBlock } from '../src/store/chain-state.js';
import { configFor, quietLogger, type ChainTarget } from '../test/helpers/indexer-fixtures.js';
import { startHostileRpc } from '../test/helpers/rpc-proxy.js';
import { bulkStore, checkLayout, identitySlots, reputationSlots } from './census/chain-state.js';
import { openBenchDatabase, writeIndex } from './census/index-side.js';
import { startBenchNode } from './census/node.js';
import { AGENTS, BATCH, NODE, PER_AGENT, PLANTED } from './census/options.js';

const secs = (ms: number) => Math.round(ms / 10) / 100;

async function main(): Promise<void> {
  const node = await startBenchNode();
  const { db, label, close } = await openBenchDatabase();
  try {
    const reg = await deployRegistries(node.rpcUrl, node.privateKeys[0]!);
    const deployBlock = Number(reg.deployBlock);
    console.log(
      `bench:census: ${AGENTS} agents × ${PER_AGENT} feedback (distinct clients), ${PLANTED} planted; node ${NODE}; index on ${label}`,
    );

    let t = Date.now();
    const idSlots = await bulkStore(node, reg.identityRegistry, identitySlots());
    const repSlots = await bulkStore(node, reg.reputationRegistry, reputationSlots());
    const seedMs = Date.now() - t;
    for (const i of [0, 1, Math.floor(AGENTS / 2), AGENTS - 1]) await checkLayout(node, reg, i);
    const stateBlock = Number(await node.request<string>('eth_blockNumber'));
    console.log(
      `  chain state: ${idSlots + repSlots} storage slots in ${stateBlock - deployBlock} bulk-store transactions, ${secs(seedMs)} s`,
    );

    // The planted feedback: real transactions (logs on the chain), from dev accounts the index never saw.
    t = Date.now();
    const planted = Array.from({ length: PLANTED }, (_, p) => ({
      signer: node.privateKeys[1 + (p % 9)]!,
      call: giveFeedbackCall(reg, { agentId: (p * 997) % AGENTS, value: 77, tag1: 'planted' }),
    }));
    for (let k = 0; k < planted.length; k += 50)
      await sendCallsInBlock(node.rpcUrl, planted.slice(k, k + 50));
    const head = Number(await node.request<string>('eth_blockNumber'));
    console.log(`  planted: ${PLANTED} feedback transactions in ${secs(Date.now() - t)} s (head ${head})`);

    // The index: everything but the planted feedback, its checkpoint at the head (nothing to scan).
    const tg: ChainTarget = {
      network: 'base',
      chainId: 8453,
      rpcUrl: node.rpcUrl,
      reg,
      startBlock: deployBlock,
    };
    const config = configFor(
      [tg],
      BATCH ? { census: { enabled: true, sample: 16, seed: null, batch: BATCH } } : {},
    );
    await registerChains(db, config.chains);
    t = Date.now();
    const events = await writeIndex(db, deployBlock, head);
    await setStartBlock(db, 'base', deployBlock);
    await lowerScannedFrom(db, 'base', deployBlock);
    console.log(`  index: ${events} events through ingestBatch in ${secs(Date.now() - t)} s`);

    // 1. The full census alone (straight to the node: the reader counts its requests).
    const chainCfg = config.chains.find((c) => c.network === 'base')!;
    const scanner = createEvmScanner(chainCfg, {}, quietLogger());
    const { Session } = await import('node:inspector/promises');
    const session = process.env.BENCH_PROFILE ? new Session() : null;
    if (session) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.start');
    }
    t = Date.now();
    const census = await runCensus(scanner.reads, db, chainCfg, head, {
      scope: 'full',
      ...(BATCH ? { batch: { maxCalls: BATCH } } : {}),
    });
    const censusMs = Date.now() - t;
    if (session) {
      const { profile } = await session.post('Profiler.stop');
      (await import('node:fs')).writeFileSync(process.env.BENCH_PROFILE!, JSON.stringify(profile));
    }
    const censusRequests = scanner.stats.requests;
    const byKind: Record<string, number> = {};
    for (const d of census.differences) byKind[d.what] = (byKind[d.what] ?? 0) + 1;
    console.log(
      `  1. full census: ${census.agentsChecked} agents, ${census.pairsChecked} pairs, ${census.reads} reads in ${census.requests} eth_calls ` +
        `(${censusRequests} requests in all, eth_getCode included), ${secs(censusMs)} s; ${census.state}, differences ${JSON.stringify(byKind)}`,
    );

    // The pass goes through the proxy, which counts its requests by method (its JSON handling
    // costs this process some time: the pass's wall time is an upper bound).
    const proxy = await startHostileRpc(node.rpcUrl, { kind: 'well-behaved' });
    // 2. The pass: census, repair of the planted ones with narrow filters, census of them again.
    t = Date.now();
    const r = await runIndexPass({
      db,
      config: {
        ...config,
        chains: config.chains.map((c) => (c.network === 'base' ? { ...c, rpcUrl: proxy.url } : c)),
      },
      log: quietLogger(),
      afterPass: null,
    });
    const passMs = Date.now() - t;
    if (r.status !== 'ok') throw new Error('pass locked');
    const c = r.chains[0]!;
    const passRequests: Record<string, number> = {};
    for (const [m, n] of Object.entries(proxy.calls)) passRequests[m] = n;
    const [ratings] = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ratings WHERE network = 'base'`,
    );
    console.log(
      `  2. pass: census ${c.census?.state} after ${c.census?.repairs} repair(s), ${c.census?.repaired} events written, ` +
        `${JSON.stringify(passRequests)} requests, ${secs(passMs)} s; ratings now ${ratings!.n}`,
    );
    await proxy.close();
    const load = (await import('node:os')).loadavg().map((x) => Math.round(x * 100) / 100);
    console.log(
      `RESULT ${JSON.stringify({
        agents: AGENTS,
        feedback: AGENTS * PER_AGENT,
        pairs: census.pairsChecked,
        planted: PLANTED,
        seed_seconds: secs(seedMs),
        census: {
          eth_calls: census.requests,
          reads: census.reads,
          requests: censusRequests,
          seconds: secs(censusMs),
          state: census.state,
          differences: census.differences.length,
        },
        pass: {
          state: c.census?.state ?? null,
          repairs: c.census?.repairs ?? null,
          repaired_events: c.census?.repaired ?? null,
          requests: passRequests,
          seconds: secs(passMs),
          ratings: ratings!.n,
        },
        node: NODE,
        db: label,
        load,
      })}`,
    );
  } finally {
    await close();
    await node.close();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
