/**
 * A reorg DEEPER than the 12-block margin, against a real `anvil_reorg` (issue 11, point 2): the
 * indexer keeps the hash of each checkpoint block, sees on the next pass that the chain no longer
 * has it, walks back to the common ancestor, deletes what was written above it (ratings,
 * revocations and the revoked flags they set, transfers and the owners they set, metadata, agents
 * minted there, counters) in one transaction and rescans. The index then equals, row for row, a
 * fresh index of the canonical chain. Runs on PGlite and (with DATABASE_URL) PostgreSQL.
 */
import { mnemonicToAccount } from 'viem/accounts';
import { numberToHex, toHex, type Address } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  appendResponse,
  deployRegistries,
  giveFeedback,
  giveFeedbackCall,
  registerAgent,
  revokeFeedback,
  setMetadata,
  transferAgent,
  type Registries,
} from '../src/demo/registries.js';
import type { Queryable } from '../src/db/database.js';
import { runIndexPass, type ChainPassResult } from '../src/indexer/pass.js';
import { rollbackAbove } from '../src/store/rollback.js';
import { startAnvil, type Anvil } from './helpers/anvil.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { configFor, dumpIndex, quietLogger } from './helpers/indexer-fixtures.js';

const MARGIN = 12;
const MNEMONIC = 'test test test test test test test test test test test junk';
const dev = (i: number) => mnemonicToAccount(MNEMONIC, { addressIndex: i });

let anvil: Anvil;
let reg: Registries;
let t: TestDatabase;
let agentA: bigint;

async function pass(db: Queryable & TestDatabase['db']): Promise<ChainPassResult> {
  const config = configFor([
    {
      network: 'base',
      chainId: 8453,
      rpcUrl: anvil.rpcUrl,
      reg,
      startBlock: Number(reg.deployBlock),
      confirmations: MARGIN,
    },
  ]);
  const report = await runIndexPass({ db, config, log: quietLogger(), afterPass: null, progress: 'off' });
  if (report.status !== 'ok') throw new Error('pass was locked out');
  const base = report.chains.find((c) => c.network === 'base')!;
  expect(base.error).toBeUndefined();
  expect(report.failed).toEqual([]);
  return base;
}

/** The index a fresh database builds from the chain as it is now (the canonical answer). */
async function freshDump(): Promise<Record<string, unknown[]>> {
  const fresh = await openTestDatabase();
  try {
    await pass(fresh.db);
    return await dumpIndex(fresh.db, ['base']);
  } finally {
    await fresh.close();
  }
}

async function counters(db: Queryable) {
  const [c] = await db.query<{ agents_count: number; ratings_count: number; last_scanned_block: number }>(
    `SELECT agents_count::int AS agents_count, ratings_count::int AS ratings_count, last_scanned_block::int AS last_scanned_block
       FROM chains WHERE network = 'base'`,
  );
  const [a] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM agents WHERE network = 'base'`);
  const [r] = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ratings WHERE network = 'base'`);
  return { ...c!, agents: a!.n, ratings: r!.n };
}

function reorgFeedbackTx(from: Address, agentId: bigint, value: number, tag1: string) {
  const call = giveFeedbackCall(reg, { agentId, value, tag1 });
  return { from, to: call.to, input: call.data, gas: numberToHex(call.gas) };
}

beforeAll(async () => {
  [anvil, t] = await Promise.all([startAnvil(8453), openTestDatabase()]);
  reg = await deployRegistries(anvil.rpcUrl, toHex(dev(0).getHdKey().privateKey!));
  ({ agentId: agentA } = await registerAgent(reg, dev(1), 'https://agent-a.example/card.json'));
  await giveFeedback(reg, dev(2), {
    agentId: agentA,
    value: 80,
    tag1: 'old',
    feedbackURI: 'https://docs.example/old.json',
  });
  // A response the owner appends below the fork: it survives the reorg.
  await appendResponse(reg, dev(1), agentA, dev(2).address, 1, 'https://agent-a.example/reply-1.json');
  await anvil.mine(20);
  await pass(t.db);
}, 120_000);

afterAll(async () => {
  await t?.close();
  await anvil?.stop();
});

describe('reorg deeper than the 12-block margin (anvil_reorg)', () => {
  it('rolls back to the common ancestor and ends equal to a fresh index of the canonical chain', async () => {
    const [old] = await t.db.query<{ feedback_index: string }>(
      `SELECT feedback_index::text AS feedback_index FROM ratings WHERE network = 'base' AND tag1 = 'old'`,
    );
    expect(old).toBeDefined();
    const forkFrom = (await anvil.head()) + 1;
    // Everything in this stretch will be orphaned: a new agent (with metadata), ratings, a
    // revocation of an OLD rating. (A transfer of an old agent also rewrites its latest-only
    // `agentWallet` metadata: that case is the full-rescan test below.)
    const { agentId: agentB } = await registerAgent(reg, dev(3), 'https://agent-b.example/card.json');
    await setMetadata(reg, dev(3), agentB, 'type', 'orphaned-type');
    await giveFeedback(reg, dev(4), { agentId: agentA, value: 10, tag1: 'orphaned' });
    await giveFeedback(reg, dev(4), { agentId: agentB, value: 11, tag1: 'orphaned' });
    await revokeFeedback(reg, dev(2), agentA, BigInt(old!.feedback_index));
    // Orphaned too: a third party's response to the old rating and a rating with a document.
    await appendResponse(reg, dev(5), agentA, dev(2).address, 1, 'https://elsewhere.example/r.json');
    await giveFeedback(reg, dev(4), {
      agentId: agentA,
      value: 12,
      tag1: 'orphaned',
      feedbackURI: 'https://docs.example/orphaned.json',
    });
    await anvil.mine(MARGIN + 8);
    // Two passes: two stored checkpoint hashes inside the stretch that will be replaced.
    await pass(t.db);
    await anvil.mine(3);
    await pass(t.db);

    const before = await t.db.query<{ tag1: string; revoked: boolean }>(
      `SELECT tag1, revoked FROM ratings WHERE network = 'base' ORDER BY block_number, log_index`,
    );
    expect(before.map((r) => r.tag1)).toEqual(['old', 'orphaned', 'orphaned', 'orphaned']);
    expect(before[0]!.revoked).toBe(true);
    const responsesBefore = await t.db.query<{ responder_class: string; response_uri: string }>(
      `SELECT responder_class, response_uri FROM rating_responses WHERE network = 'base' ORDER BY block_number`,
    );
    expect(responsesBefore).toEqual([
      { responder_class: 'owner', response_uri: 'https://agent-a.example/reply-1.json' },
      { responder_class: 'third_party', response_uri: 'https://elsewhere.example/r.json' },
    ]);
    const docsBefore = await t.db.query<{ uri: string }>(
      `SELECT uri FROM feedback_documents WHERE network = 'base' ORDER BY block_number`,
    );
    expect(docsBefore.map((d) => d.uri)).toEqual([
      'https://docs.example/old.json',
      'https://docs.example/orphaned.json',
    ]);

    // Replace every block from forkFrom on: deeper than the margin and than the checkpoint.
    const headBefore = await anvil.head();
    const depth = headBefore - forkFrom + 1;
    expect(depth).toBeGreaterThan(MARGIN);
    const [cp] = await t.db.query<{ b: number }>(
      `SELECT last_scanned_block::int AS b FROM chains WHERE network = 'base'`,
    );
    expect(cp!.b).toBeGreaterThanOrEqual(forkFrom + 5);
    await anvil.rpc('anvil_reorg', [
      depth,
      [
        [reorgFeedbackTx(dev(6).address, agentA, 66, 'canonical'), 1],
        [reorgFeedbackTx(dev(7).address, agentA, 77, 'canonical'), 3],
      ],
    ]);
    expect(await anvil.head()).toBe(headBefore);
    await anvil.mine(MARGIN + 2);

    const healed = await pass(t.db);
    expect(healed.reorg).toBeDefined();
    expect(healed.reorg, JSON.stringify({ reorg: healed.reorg, forkFrom })).toMatchObject({
      fullRescan: false,
    });
    expect(healed.reorg!.ancestor).toBeLessThan(forkFrom);

    // Row for row the same index as a fresh indexing of the canonical chain.
    const canonical = await freshDump();
    expect(await dumpIndex(t.db, ['base'])).toEqual(canonical);
    const after = await t.db.query<{ tag1: string; revoked: boolean }>(
      `SELECT tag1, revoked FROM ratings WHERE network = 'base' ORDER BY block_number, log_index`,
    );
    expect(after.map((r) => r.tag1)).toEqual(['old', 'canonical', 'canonical']);
    expect(after[0]!.revoked).toBe(false); // its revocation was orphaned
    // The orphaned response and document job went with their blocks; the older ones stayed.
    const responsesAfter = await t.db.query<{ response_uri: string }>(
      `SELECT response_uri FROM rating_responses WHERE network = 'base'`,
    );
    expect(responsesAfter.map((r) => r.response_uri)).toEqual(['https://agent-a.example/reply-1.json']);
    const docsAfter = await t.db.query<{ uri: string }>(
      `SELECT uri FROM feedback_documents WHERE network = 'base'`,
    );
    expect(docsAfter.map((d) => d.uri)).toEqual(['https://docs.example/old.json']);
    const c = await counters(t.db);
    expect(c.agents_count).toBe(c.agents);
    expect(c.ratings_count).toBe(c.ratings);
    expect(c.agents).toBe(1); // agent B was minted in the orphaned stretch

    // A further pass over the unchanged chain finds no reorg and changes nothing.
    await anvil.mine(1);
    const again = await pass(t.db);
    expect(again.reorg).toBeUndefined();
    expect(await dumpIndex(t.db, ['base'])).toEqual(canonical);
  }, 300_000);

  it('a deep reorg carrying a metadata update and a transfer of an OLDER agent rescans from the start and still ends canonical', async () => {
    const forkFrom = (await anvil.head()) + 1;
    await setMetadata(reg, dev(1), agentA, 'type', 'orphaned-type');
    await transferAgent(reg, dev(1), agentA, dev(5).address);
    await giveFeedback(reg, dev(8), { agentId: agentA, value: 12, tag1: 'orphaned-2' });
    await anvil.mine(MARGIN + 5);
    await pass(t.db);
    const [meta] = await t.db.query<{ value_text: string }>(
      `SELECT value_text FROM agent_metadata WHERE network = 'base' AND meta_key = 'type'`,
    );
    expect(meta!.value_text).toBe('orphaned-type');
    const owner = () =>
      t.db.query<{ owner: string }>(`SELECT owner FROM agents WHERE network = 'base' AND agent_id = $1`, [
        agentA.toString(),
      ]);
    expect((await owner())[0]!.owner).toBe(dev(5).address.toLowerCase());

    const depth = (await anvil.head()) - forkFrom + 1;
    expect(depth).toBeGreaterThan(MARGIN);
    await anvil.rpc('anvil_reorg', [
      depth,
      [[reorgFeedbackTx(dev(9).address, agentA, 99, 'canonical-2'), 0]],
    ]);
    await anvil.mine(MARGIN + 2);
    const healed = await pass(t.db);
    expect(healed.reorg?.fullRescan).toBe(true);
    expect(await dumpIndex(t.db, ['base'])).toEqual(await freshDump());
    const metaAfter = await t.db.query(
      `SELECT 1 FROM agent_metadata WHERE network = 'base' AND meta_key = 'type'`,
    );
    expect(metaAfter).toHaveLength(0);
    expect((await owner())[0]!.owner).toBe(dev(1).address.toLowerCase()); // the orphaned transfer is undone
    const c = await counters(t.db);
    expect(c.agents_count).toBe(c.agents);
    expect(c.ratings_count).toBe(c.ratings);
  }, 300_000);

  it('rollbackAbove deletes exactly the rows above the block, in the caller’s transaction', async () => {
    const rows = await t.db.query<{ block_number: number }>(
      `SELECT block_number::int AS block_number FROM ratings WHERE network = 'base' ORDER BY block_number`,
    );
    const cut = rows[0]!.block_number; // keep the first rating only
    const canonical = await dumpIndex(t.db, ['base']);
    // Rolled back inside a transaction that then fails: nothing changes.
    await expect(
      t.db.transaction(async (tx) => {
        await rollbackAbove(tx, 'base', cut);
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await dumpIndex(t.db, ['base'])).toEqual(canonical);
    const r = await t.db.transaction((tx) => rollbackAbove(tx, 'base', cut));
    expect(r.ratings).toBe(rows.filter((x) => x.block_number > cut).length);
    expect(r.touched.map((x) => x.agent_id)).toContain(agentA.toString());
    const left = await t.db.query(`SELECT 1 FROM ratings WHERE network = 'base' AND block_number > $1`, [
      cut,
    ]);
    expect(left).toHaveLength(0);
    const c = await counters(t.db);
    expect(c.last_scanned_block).toBe(cut);
    expect(c.ratings_count).toBe(c.ratings);
    // The next pass rescans above the cut and restores the canonical index.
    await pass(t.db);
    expect(await dumpIndex(t.db, ['base'])).toEqual(canonical);
  }, 300_000);
});
