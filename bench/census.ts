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
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import {
  bytesToHex,
  decodeFunctionResult,
  encodeFunctionData,
  keccak256,
  type Address,
  type Hex,
} from 'viem';
import { runCensus } from '../src/completeness/census.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { MULTICALL3_ADDRESS } from '../src/chains.js';
import { startLocalNode } from '../src/demo/local-node.js';
import {
  deployRegistries,
  giveFeedbackCall,
  identityRegistryAbi,
  reputationRegistryAbi,
  sendCallsInBlock,
  type Registries,
} from '../src/demo/registries.js';
import { createEvmScanner } from '../src/indexer/evm-scanner.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import { runIndexPass } from '../src/indexer/pass.js';
import type { IndexEvent } from '../src/index-events.js';
import { lowerScannedFrom, registerChains, setStartBlock } from '../src/store/chain-state.js';
import { configFor, quietLogger, type ChainTarget } from '../test/helpers/indexer-fixtures.js';
import { startAnvil } from '../test/helpers/anvil.js';
import { startHostileRpc } from '../test/helpers/rpc-proxy.js';
import multicallArtifact from '../contracts/artifacts/Multicall3.json' with { type: 'json' };

const AGENTS = Number(process.env.BENCH_CENSUS_AGENTS ?? 100_000);
const PER_AGENT = Number(process.env.BENCH_CENSUS_FEEDBACK_PER_AGENT ?? 5);
const PLANTED = Number(process.env.BENCH_CENSUS_PLANTED ?? 100);
const BATCH = process.env.BENCH_CENSUS_BATCH ? Number(process.env.BENCH_CENSUS_BATCH) : undefined;
/** Distinct client addresses (agent i's clients are CLIENTS consecutive ones from i·K). */
const CLIENT_POOL = 10_007;
const OWNER_POOL = 1_009;
const NODE = process.env.BENCH_CENSUS_NODE === 'edr' ? 'edr' : 'anvil';
/** Slots per bulk-store transaction: under the block gas limit (EDR 60 M; anvil started with 200 M). */
const SLOTS_PER_TX = NODE === 'edr' ? 2_400 : 8_000;

/** A node with the public dev keys both nodes fund (mnemonic "test … junk"). */
interface BenchNode {
  rpcUrl: string;
  accounts: Address[];
  privateKeys: Hex[];
  request<T>(method: string, params?: unknown[]): Promise<T>;
  close(): Promise<void>;
}

async function startBenchNode(): Promise<BenchNode> {
  const edr = await startLocalNode({ chainId: 8453 });
  if (NODE === 'edr') return { ...edr, request: edr.request, close: () => edr.close() };
  // (the EDR node only lends its dev keys and accounts: the same ones anvil funds)
  const { accounts, privateKeys } = edr;
  await edr.close();
  // (--prune-history: anvil keeps 16 states in memory, not one per block: 1.8 M slots otherwise take 10 GB and more)
  const anvil = await startAnvil(8453, [
    '--gas-limit',
    '200000000',
    '--block-base-fee-per-gas',
    '0',
    '--prune-history',
    '16',
  ]);
  await anvil.rpc('hardhat_setCode', [MULTICALL3_ADDRESS, multicallArtifact.deployedBytecode]);
  return { rpcUrl: anvil.rpcUrl, accounts, privateKeys, request: anvil.rpc, close: () => anvil.stop() };
}

/**
 * Stores (slot, value) 32-byte pairs from its calldata, then stops:
 *   i = 0; while (i < calldatasize) { sstore(calldataload(i), calldataload(i + 32)); i += 64 }
 */
const BULK_STORE: Hex = '0x60005b3681101560185780602001358135556040016002565b00';

/** A 32-byte big-endian word of a non-negative integer below 2^53 (the hot path: no strings). */
function word(n: number): Uint8Array {
  const w = new Uint8Array(32);
  for (let k = 31; n > 0; k--) {
    w[k] = n % 256;
    n = Math.floor(n / 256);
  }
  return w;
}
function addrWord(a: string): Uint8Array {
  const w = new Uint8Array(32);
  w.set(Buffer.from(a.slice(2), 'hex'), 12);
  return w;
}
const slot = word;
const pair = new Uint8Array(64);
/** keccak256(key . base): a mapping's value slot. */
function mapSlot(key: Uint8Array, base: Uint8Array): Uint8Array {
  pair.set(key, 0);
  pair.set(base, 32);
  return keccak256(pair, 'bytes');
}
/** s + i (32-byte big-endian, with carry). */
function plus(s: Uint8Array, i: number): Uint8Array {
  const w = new Uint8Array(s);
  let carry = i;
  for (let k = 31; k >= 0 && carry > 0; k--) {
    const v = w[k]! + (carry % 256);
    w[k] = v % 256;
    carry = Math.floor(carry / 256) + (v >= 256 ? 1 : 0);
  }
  return w;
}

const ownerOf = (i: number): Address => `0x${(0x0a000000 + (i % OWNER_POOL)).toString(16).padStart(40, '0')}`;
const clientOf = (i: number, j: number): Address =>
  `0x${(0x0c000000 + ((i * PER_AGENT + j) % CLIENT_POOL)).toString(16).padStart(40, '0')}`;
const uriOf = (i: number) => `https://a.example/${i}`; // short: one slot
const valueOf = (i: number, j: number) => 40 + ((i * 7 + j * 13) % 61);
const revokedOf = (i: number, j: number) => (i * PER_AGENT + j) % 10 === 3;

/** A short string (≤ 31 bytes) as Solidity stores it in one slot: the bytes, then length · 2. */
function shortString(s: string): Uint8Array {
  const bytes = new TextEncoder().encode(s);
  if (bytes.length > 31) throw new Error('bench URIs are short strings');
  const w = new Uint8Array(32);
  w.set(bytes, 0);
  w[31] = bytes.length * 2;
  return w;
}

/** Feedback struct's first slot: int128 value (low 16 bytes), valueDecimals (byte 16), isRevoked (byte 17). */
function feedbackWord(value: number, revoked: boolean): Uint8Array {
  const w = word(value);
  if (revoked) w[31 - 17] = 1;
  return w;
}

/** The (slot, value) pairs of both registries for agents [from, to). */
function* identitySlots(): Generator<[Uint8Array, Uint8Array]> {
  yield [slot(0), word(AGENTS)]; // _nextAgentId
  for (let i = 0; i < AGENTS; i++) {
    const id = word(i);
    yield [mapSlot(id, slot(1)), addrWord(ownerOf(i))]; // _owners
    yield [mapSlot(id, slot(5)), shortString(uriOf(i))]; // _agentURIs
  }
}

function* reputationSlots(): Generator<[Uint8Array, Uint8Array]> {
  for (let i = 0; i < AGENTS; i++) {
    const id = word(i);
    const fbBase = mapSlot(id, slot(0));
    const lastBase = mapSlot(id, slot(1));
    const clientsSlot = mapSlot(id, slot(2));
    const elements = keccak256(clientsSlot, 'bytes');
    yield [clientsSlot, word(PER_AGENT)];
    for (let j = 0; j < PER_AGENT; j++) {
      const c = addrWord(clientOf(i, j));
      yield [plus(elements, j), c];
      yield [mapSlot(c, lastBase), word(1)];
      // (_isClient is left unset: only a later giveFeedback from the same client reads it, and the
      // planted feedback come from clients the agents never had)
      yield [mapSlot(word(1), mapSlot(c, fbBase)), feedbackWord(valueOf(i, j), revokedOf(i, j))];
    }
  }
}

/** Writes the pairs into `address`'s storage through the bulk-store code; returns the slots written. */
async function bulkStore(node: BenchNode, address: Address, pairs: Iterable<[Uint8Array, Uint8Array]>) {
  const code = await node.request<Hex>('eth_getCode', [address, 'latest']);
  await node.request('hardhat_setCode', [address, BULK_STORE]);
  let n = 0;
  let buf: Uint8Array[] = [];
  const flush = async () => {
    if (buf.length === 0) return;
    const data = new Uint8Array(buf.length * 32);
    buf.forEach((w, k) => data.set(w, k * 32));
    // Full blocks raise the base fee 12.5 % each: kept at zero, so the bulk costs nothing.
    await node.request('hardhat_setNextBlockBaseFeePerGas', ['0x0']);
    const hash = await node.request<Hex>('eth_sendTransaction', [
      {
        from: node.accounts[0],
        to: address,
        data: bytesToHex(data),
        gas: `0x${(SLOTS_PER_TX * 24_000 + 100_000).toString(16)}`,
        maxFeePerGas: '0x0',
        maxPriorityFeePerGas: '0x0',
      },
    ]);
    // (anvil answers eth_sendTransaction before a big block is mined: wait for the receipt)
    let receipt: { status: Hex } | null = null;
    for (let tries = 0; receipt === null && tries < 600; tries++) {
      receipt = await node.request<{ status: Hex } | null>('eth_getTransactionReceipt', [hash]);
      if (receipt === null) await new Promise((r) => setTimeout(r, 50));
    }
    if (receipt?.status !== '0x1')
      throw new Error(`bulk-store transaction ${hash} failed: ${JSON.stringify(receipt)?.slice(0, 300)}`);
    buf = [];
  };
  for (const [s, v] of pairs) {
    buf.push(s, v);
    n++;
    if (buf.length >= SLOTS_PER_TX * 2) await flush();
  }
  await flush();
  await node.request('hardhat_setCode', [address, code]);
  if (NODE === 'edr') await node.request('hardhat_setNextBlockBaseFeePerGas', ['0x3b9aca00']);
  return n;
}

/** The registries' own view of an agent: the layout above must read back as written. */
async function checkLayout(node: BenchNode, reg: Registries, i: number): Promise<void> {
  const call = async (
    to: Address,
    abi: typeof identityRegistryAbi | typeof reputationRegistryAbi,
    fn: string,
    args: unknown[],
  ) => {
    const data = encodeFunctionData({ abi, functionName: fn as never, args: args as never });
    const out = await node.request<Hex>('eth_call', [{ to, data }, 'latest']);
    return decodeFunctionResult({ abi, functionName: fn as never, data: out }) as unknown;
  };
  const owner = (await call(reg.identityRegistry, identityRegistryAbi, 'ownerOf', [BigInt(i)])) as string;
  const uri = await call(reg.identityRegistry, identityRegistryAbi, 'tokenURI', [BigInt(i)]);
  const clients = (await call(reg.reputationRegistry, reputationRegistryAbi, 'getClients', [
    BigInt(i),
  ])) as string[];
  const fb = (await call(reg.reputationRegistry, reputationRegistryAbi, 'readFeedback', [
    BigInt(i),
    clients[0],
    1n,
  ])) as readonly [bigint, number, string, string, boolean];
  const summary = (await call(reg.reputationRegistry, reputationRegistryAbi, 'getSummary', [
    BigInt(i),
    clients,
    '',
    '',
  ])) as readonly [bigint, bigint, number];
  const notRevoked = Array.from({ length: PER_AGENT }, (_, j) => j).filter((j) => !revokedOf(i, j)).length;
  const ok =
    owner.toLowerCase() === ownerOf(i) &&
    uri === uriOf(i) &&
    clients.length === PER_AGENT &&
    clients[0]!.toLowerCase() === clientOf(i, 0) &&
    fb[0] === BigInt(valueOf(i, 0)) &&
    fb[4] === revokedOf(i, 0) &&
    Number(summary[0]) === notRevoked;
  if (!ok)
    throw new Error(
      `storage layout check failed for agent ${i}: ${JSON.stringify({ owner, uri, clients, fb: fb.map(String), summary: summary.map(String) })}`,
    );
}

/** The index side: every agent and every feedback of the chain (planted ones excepted), by the real ingest. */
async function writeIndex(db: Database, block: number, head: number): Promise<number> {
  let tx = 0;
  const at = {
    network: 'base',
    logIndex: 0,
    blockNumber: block,
    blockTime: new Date('2026-06-01T00:00:00Z'),
  };
  const next = () => ({ ...at, txHash: `0x${(++tx).toString(16).padStart(64, '0')}` });
  let events: IndexEvent[] = [];
  let written = 0;
  const flush = async (last: boolean) => {
    await ingestBatch(db, events, {
      network: 'base',
      lastScannedBlock: last ? head : null,
      headAtLastSync: head,
      caughtUp: last,
      successAt: last ? new Date() : null,
    });
    written += events.length;
    events = [];
  };
  for (let i = 0; i < AGENTS; i++) {
    const agentId = String(i);
    events.push({
      ...next(),
      kind: 'transfer',
      agentId,
      from: '0x0000000000000000000000000000000000000000',
      to: ownerOf(i),
    });
    events.push({ ...next(), kind: 'registered', agentId, agentUri: uriOf(i), minter: ownerOf(i) });
    for (let j = 0; j < PER_AGENT; j++) {
      const rater = clientOf(i, j);
      const v = String(valueOf(i, j));
      events.push({
        ...next(),
        kind: 'feedback',
        agentId,
        rater,
        feedbackIndex: '1',
        valueRaw: v,
        valueDecimals: 0,
        value: v,
        tag1: '',
        tag2: '',
        endpoint: '',
        feedbackUri: '',
        feedbackHash: null,
      });
      if (revokedOf(i, j)) events.push({ ...next(), kind: 'revocation', agentId, rater, feedbackIndex: '1' });
    }
    if (events.length >= 20_000) await flush(false);
  }
  await flush(true);
  return written;
}

async function openBenchDatabase(): Promise<{ db: Database; label: string; close: () => Promise<void> }> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const db = await openDatabase({ databaseUrl: null, dataDir: 'memory://' });
    await migrate(db);
    return { db, label: 'PGlite (in memory)', close: () => db.close() };
  }
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const u = new URL(url);
  u.searchParams.set('options', `-c search_path=${schema}`);
  const db = await openDatabase({ databaseUrl: u.toString(), dataDir: 'memory://' });
  await migrate(db);
  return {
    db,
    label: 'PostgreSQL',
    close: async () => {
      await db.close();
      await admin.query(`DROP SCHEMA ${schema} CASCADE`);
      await admin.end();
    },
  };
}

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
