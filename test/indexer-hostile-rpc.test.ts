/**
 * The EVM indexer against hostile RPC endpoints (test/helpers/rpc-proxy.ts in front of a real
 * local chain): every provider's "range too large" wording, silent truncation and empty answers
 * above a window (caught by the completeness census and repaired by rescans), batch caps, 429s with
 * and without Retry-After; and the configuration mistakes a new operator makes (an implementation
 * address, a reputation registry of another identity registry, no code, a startBlock above the
 * head or moved earlier later). Every network slug points at the same local chain, so the index
 * built through each endpoint must equal the one built from the bare node, row for row.
 * This file starts the chain and builds the reference index (the costly setup); the suites are
 * modules of test/indexer-hostile-rpc/, registered in order (the fixture:
 * test/helpers/hostile-rpc-fixture.ts).
 */
import { afterAll, beforeAll, expect } from 'vitest';
import type { Address } from 'viem';
import { giveFeedback, registerAgent, revokeFeedback, transferAgent } from '../src/demo/registries.js';
import type { IndexEvent } from '../src/index-events.js';
import { setMetricsDatabase } from '../src/metrics.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { hostileRpcTools } from './helpers/hostile-rpc-fixture.js';
import { dumpNetwork, startLocalChain, target, type LocalChain } from './helpers/indexer-fixtures.js';
import { censusLossSuite } from './indexer-hostile-rpc/census-loss.js';
import { censusUnavailableSuite } from './indexer-hostile-rpc/census-unavailable.js';
import { configMistakesSuite } from './indexer-hostile-rpc/config-mistakes.js';
import { scannerFaultsSuite } from './indexer-hostile-rpc/scanner-faults.js';
import { startBlockSuite } from './indexer-hostile-rpc/start-block.js';

let chain: LocalChain;
let t: TestDatabase;
let reference: Record<string, unknown[]>;
let bareEvents: IndexEvent[];
let head: number;
const fixture = () => ({ chain, t, reference, bareEvents, head });
const { scanAll, pass } = hostileRpcTools(fixture);

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

scannerFaultsSuite(fixture);
censusLossSuite(fixture);
censusUnavailableSuite(fixture);
configMistakesSuite(fixture);
startBlockSuite(fixture);
