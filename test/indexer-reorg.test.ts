/**
 * The 12-block reorg margin against a REAL reorg (anvil `anvil_reorg`): the
 * indexer only scans to head − confirmations, so logs of blocks a shallow reorg can still replace
 * never reach the index, and the canonical logs that replace them are indexed once they are old
 * enough.
 *
 * anvil (@foundry-rs/anvil-linux-amd64, the binary from npm) runs on 127.0.0.1 with chain id 8453 as `base`; the
 * project's registries are deployed on it with the default dev mnemonic's keys (the same as
 * Hardhat's). `anvil_reorg` takes POSITIONAL params `[depth, [[tx, blockOffset], …]]`: it replaces
 * the last `depth` blocks by `depth` new ones (the head height is unchanged), putting each given
 * transaction (a JSON request from an unlocked dev account, here) into the new block at `blockOffset`
 * (0 = the first replaced height).
 *
 * A reorg DEEPER than the margin is healed from the stored checkpoint hashes: see
 * test/indexer-deep-reorg.test.ts.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { mnemonicToAccount } from 'viem/accounts';
import { numberToHex, toHex, type Address, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  deployRegistries,
  giveFeedback,
  giveFeedbackCall,
  registerAgent,
  type Registries,
} from '../src/demo/registries.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { configFor, quietLogger } from './helpers/indexer-fixtures.js';

const MARGIN = 12;
const MNEMONIC = 'test test test test test test test test test test test junk';
const dev = (i: number) => mnemonicToAccount(MNEMONIC, { addressIndex: i });

/** The anvil binary of the platform package (an optional dependency; only linux-x64 is published). */
function anvilBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = `@foundry-rs/anvil-${process.platform}-${process.arch === 'x64' ? 'amd64' : process.arch}`;
  return join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', 'anvil');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

let anvil: ChildProcess | undefined;
let rpcUrl: string;
let reg: Registries;
let t: TestDatabase;
let agentId: bigint;

let rpcId = 0;
async function rpc<T>(method: string, params: unknown[] = []): Promise<T> {
  const res = await fetch(rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++rpcId, method, params }),
  });
  const body = (await res.json()) as { result?: T; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

const head = async () => Number(await rpc<Hex>('eth_blockNumber'));
const mine = (n: number) => rpc('anvil_mine', [numberToHex(n)]);

async function startAnvil(): Promise<void> {
  const port = await freePort();
  rpcUrl = `http://127.0.0.1:${port}`;
  anvil = spawn(
    anvilBinary(),
    ['--host', '127.0.0.1', '--port', String(port), '--chain-id', '8453', '--silent'],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  anvil.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (anvil.exitCode !== null) throw new Error(`anvil exited ${anvil.exitCode}: ${stderr}`);
    try {
      if ((await rpc<Hex>('eth_chainId')) === numberToHex(8453)) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`anvil did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A feedback transaction as anvil_reorg takes it: a JSON request from an unlocked dev account. */
function reorgTx(from: Address, value: number, tag1: string): Record<string, string> {
  const call = giveFeedbackCall(reg, { agentId, value, tag1 });
  return { from, to: call.to, input: call.data, gas: numberToHex(call.gas) };
}

interface Row {
  tx_hash: string;
  log_index: number;
  block_number: number | string;
  rater: string;
  feedback_index: string;
  value: string;
  tag1: string;
  [k: string]: unknown;
}

const indexed = () =>
  t.db.query<Row>(
    `SELECT tx_hash, log_index, block_number, rater, feedback_index::text AS feedback_index, value::text AS value, tag1
       FROM ratings WHERE network = 'base' ORDER BY block_number, log_index`,
  );

/** Canonical feedback logs of the registry up to `to`, as the chain now has them. */
async function canonicalFeedback(to: number): Promise<{ txHash: string; blockNumber: number }[]> {
  const logs = await rpc<{ transactionHash: Hex; blockNumber: Hex; topics: Hex[] }[]>('eth_getLogs', [
    { address: reg.reputationRegistry, fromBlock: '0x0', toBlock: numberToHex(to) },
  ]);
  // This test only calls giveFeedback on the reputation registry: every log of it is a NewFeedback.
  return logs.map((l) => ({ txHash: l.transactionHash, blockNumber: Number(l.blockNumber) }));
}

async function pass(): Promise<number> {
  const config = configFor([
    {
      network: 'base',
      chainId: 8453,
      rpcUrl,
      reg,
      startBlock: Number(reg.deployBlock),
      confirmations: MARGIN,
    },
  ]);
  const report = await runIndexPass({
    db: t.db,
    config,
    log: quietLogger(),
    afterPass: null,
    progress: 'off',
  });
  expect(report.status).toBe('ok');
  if (report.status !== 'ok') throw new Error('pass');
  expect(report.failed).toEqual([]);
  const base = report.chains.find((c) => c.network === 'base')!;
  return base.to ?? -1;
}

beforeAll(async () => {
  [, t] = await Promise.all([startAnvil(), openTestDatabase()]);
  reg = await deployRegistries(rpcUrl, toHex(dev(0).getHdKey().privateKey!));
  ({ agentId } = (await registerAgent(reg, dev(1), 'https://agent.example/card.json')) as {
    agentId: bigint;
  });
}, 60_000);

afterAll(async () => {
  await t?.close();
  if (anvil && anvil.exitCode === null) {
    const exited = new Promise((r) => anvil!.once('exit', r));
    anvil.kill('SIGTERM');
    await exited;
  }
});

describe('reorg within the 12-block margin (anvil_reorg)', () => {
  const orphaned: string[] = [];
  let survivor = '';

  it('scans to head − 12 only: recent logs are left for a later pass', async () => {
    // two old feedbacks, buried under 20 blocks
    await giveFeedback(reg, dev(2), { agentId, value: 80, tag1: 'old-a' });
    await giveFeedback(reg, dev(3), { agentId, value: 81, tag1: 'old-b' });
    await mine(20);
    // three recent ones (one block each, automine), then 2 empty blocks: all inside the margin
    const b1 = await giveFeedback(reg, dev(2), { agentId, value: 10, tag1: 'recent-survives' });
    await mine(3);
    const b2 = await giveFeedback(reg, dev(3), { agentId, value: 11, tag1: 'recent-orphaned' });
    const b3 = await giveFeedback(reg, dev(4), { agentId, value: 12, tag1: 'recent-orphaned' });
    await mine(2);
    survivor = b1.txHash;
    orphaned.push(b2.txHash, b3.txHash);
    const h = await head();
    expect(h - Number(b1.blockNumber)).toBeLessThan(MARGIN);

    const to = await pass();
    expect(to).toBe(h - MARGIN);
    const rows = await indexed();
    expect(rows.map((r) => r.tag1)).toEqual(['old-a', 'old-b']);
    expect(rows.every((r) => Number(r.block_number) <= to)).toBe(true);
  });

  it('after a reorg of the last 4 blocks, indexes exactly the canonical logs older than the margin', async () => {
    const before = await head();
    const replacedFrom = before - 3; // the 4 replaced heights: before-3 .. before
    const orphanBlocks = await Promise.all(
      orphaned.map(async (h) =>
        Number((await rpc<{ blockNumber: Hex }>('eth_getTransactionReceipt', [h])).blockNumber),
      ),
    );
    // the orphaned feedbacks are inside the reorged range, the survivor is not
    expect(orphanBlocks.every((b) => b >= replacedFrom)).toBe(true);
    const oldHash = (await rpc<{ hash: Hex }>('eth_getBlockByNumber', [numberToHex(replacedFrom), false]))
      .hash;

    await rpc('anvil_reorg', [
      4,
      [
        [reorgTx(dev(3).address, 55, 'replacement'), 0],
        [reorgTx(dev(5).address, 56, 'replacement'), 2],
      ],
    ]);
    expect(await head()).toBe(before); // a reorg, not a rewind: same height, new blocks
    const newHash = (await rpc<{ hash: Hex }>('eth_getBlockByNumber', [numberToHex(replacedFrom), false]))
      .hash;
    expect(newHash).not.toBe(oldHash);
    for (const h of orphaned) expect(await rpc('eth_getTransactionReceipt', [h])).toBeNull();

    await mine(MARGIN + 2); // every log is now older than the margin
    const to = await pass();
    const canonical = await canonicalFeedback(to);
    expect(canonical.length).toBe(5); // old-a, old-b, survivor, 2 replacements

    const rows = await indexed();
    // exactly the canonical logs, in chain order
    expect(rows.map((r) => r.tx_hash)).toEqual(canonical.map((c) => c.txHash.toLowerCase()));
    expect(rows.map((r) => r.tag1)).toEqual([
      'old-a',
      'old-b',
      'recent-survives',
      'replacement',
      'replacement',
    ]);
    expect(rows.map((r) => r.value)).toEqual(['80', '81', '10', '55', '56']);
    expect(rows.some((r) => r.tx_hash === survivor.toLowerCase())).toBe(true);
    // nothing from the orphaned blocks ever got in
    for (const h of orphaned) expect(rows.some((r) => r.tx_hash === h.toLowerCase())).toBe(false);
    expect(rows.some((r) => r.tag1 === 'recent-orphaned')).toBe(false);
    // no duplicate: dev(3)'s replacement reuses the feedback index of its orphaned feedback (the
    // registry's counter was rolled back with the block), and it is in the index once
    const keys = rows.map((r) => `${r.rater}|${r.feedback_index}`);
    expect(new Set(keys).size).toBe(keys.length);
    const [dup] = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT tx_hash, log_index FROM ratings GROUP BY 1, 2 HAVING count(*) > 1) d`,
    );
    expect(dup?.n).toBe(0);

    // a further pass over an unchanged chain adds nothing
    await mine(1);
    await pass();
    expect(await indexed()).toEqual(rows);
  });
});
