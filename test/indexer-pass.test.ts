/**
 * The indexer against a REAL local chain (Hardhat EDR in process): the project's registries
 * deployed, real transactions, real logs, indexed by the real pass into the test database
 * (PGlite, or PostgreSQL with TEST_DATABASE_URL).
 */
import {
  concat,
  encodeAbiParameters,
  parseAbiParameters,
  stringToHex,
  toFunctionSelector,
  type Address,
  type Hex,
} from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  giveFeedback,
  registerAgent,
  revokeFeedback,
  sendCall,
  setMetadata,
  transferAgent,
} from '../src/demo/registries.js';
import { createEvmScanner } from '../src/indexer/evm-scanner.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import { runIndexPass } from '../src/indexer/pass.js';
import type { IndexEvent } from '../src/index-events.js';
import { startIndexScheduler } from '../src/indexer/scheduler.js';
import { registerChains } from '../src/store/chain-state.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  configFor,
  dumpIndex,
  quietLogger,
  startLocalChain,
  target,
  type LocalChain,
} from './helpers/indexer-fixtures.js';
import { createReplay } from './helpers/solana-fixtures.js';

const HOSTILE_TAG1 = `<script>alert("x")</script> 'single' "double" & <b>`.repeat(20).slice(0, 500);
const NUL_TAG2 = 'before\u0000after';

interface Played {
  agent0: bigint;
  agent1: bigint;
  relayer: Address;
  owner0: Address;
  owner1: Address;
  rater: Address;
  rater2: Address;
  revokeTx: Hex;
  revokeBlock: bigint;
  hostileTx: Hex;
  invalidUtf8Tx: Hex;
}

let chain: LocalChain;
let t: TestDatabase;
let played: Played;

async function play(c: LocalChain): Promise<Played> {
  const k = c.node.privateKeys;
  const a = c.node.accounts;
  const reg = c.reg;
  const dataUri = `data:application/json;base64,${Buffer.from(JSON.stringify({ name: 'x', agentType: 'oracle' })).toString('base64')}`;
  // agent 0: minted by a relayer (k1), handed to its owner (a3)
  const r0 = await registerAgent(reg, k[1]!, dataUri);
  await transferAgent(reg, k[1]!, r0.agentId, a[3]!);
  // agent 1: registered with a declared type in its metadata
  const r1 = await registerAgent(reg, k[5]!, 'https://agent1.example/card.json', {
    metadata: [{ key: 'type', value: 'trading' }],
  });
  await giveFeedback(reg, k[2]!, { agentId: r0.agentId, value: 8750, valueDecimals: 2, tag1: 'trust' });
  await giveFeedback(reg, k[2]!, { agentId: r0.agentId, value: 0, valueDecimals: 0, tag1: 'liveness' });
  await giveFeedback(reg, k[4]!, { agentId: r0.agentId, value: -3, valueDecimals: 0 });
  const rv = await revokeFeedback(reg, k[2]!, r0.agentId, 1);
  const hostile = await giveFeedback(reg, k[4]!, {
    agentId: r1.agentId,
    value: 42,
    tag1: HOSTILE_TAG1,
    tag2: NUL_TAG2,
    endpoint: 'https://e.example/\u0000',
    feedbackURI: 'https://issuer.example/f/1',
  });
  // invalid UTF-8 in tag1: the same calldata layout with `bytes` in place of `string`
  const selector = toFunctionSelector(
    'giveFeedback(uint256,int128,uint8,string,string,string,string,bytes32)',
  );
  const args = encodeAbiParameters(
    parseAbiParameters('uint256, int128, uint8, bytes, string, string, string, bytes32'),
    [r1.agentId, 77n, 0, '0xff41fe00c3', 'ok', '', '', `0x${'ab'.repeat(32)}`],
  );
  const bad = await sendCall(c.node.rpcUrl, k[6]!, {
    to: reg.reputationRegistry,
    data: concat([selector, args]),
  });
  // a later type for agent 0 wins over its registration file
  await setMetadata(reg, k[3]!, r0.agentId, 'category', 'validator');
  return {
    agent0: r0.agentId,
    agent1: r1.agentId,
    relayer: a[1]!,
    owner0: a[3]!,
    owner1: a[5]!,
    rater: a[2]!,
    rater2: a[4]!,
    revokeTx: rv.txHash,
    revokeBlock: rv.blockNumber,
    hostileTx: hostile.txHash,
    invalidUtf8Tx: bad.transactionHash,
  };
}

beforeAll(async () => {
  [chain, t] = await Promise.all([startLocalChain('base', 8453), openTestDatabase()]);
  played = await play(chain);
});

afterAll(async () => {
  await t?.close();
  await chain?.close();
});

const lc = (s: string) => s.toLowerCase();

describe('indexer pass on a local chain', () => {
  it('indexes every log of the chain and records the scan state', async () => {
    const config = configFor([target(chain, { confirmations: 2 })]);
    const log = quietLogger();
    const head = Number(await chain.node.request<string>('eth_blockNumber'));
    const report = await runIndexPass({ db: t.db, config, log, afterPass: null });
    expect(report.status).toBe('ok');
    if (report.status !== 'ok') return;
    expect(report.failed).toEqual([]);
    const base = report.chains.find((c) => c.network === 'base')!;
    expect(base.status).toBe('ok');
    // start block found by binary search on eth_getCode (the identity registry's deploy block), persisted
    expect(base.from).toBe(Number(chain.reg.deployBlock));
    expect(base.to).toBe(head - 2);
    // only enabled chains are scanned (the 10 others are disabled here)
    expect(report.chains.map((c) => c.network)).toEqual(['base']);
    const [state] = await t.db.query<Record<string, unknown>>('SELECT * FROM chains WHERE network = $1', [
      'base',
    ]);
    expect(state).toMatchObject({
      last_scanned_block: head - 2,
      head_at_last_sync: head,
      backfill_complete: true,
      start_block: Number(chain.reg.deployBlock),
      last_error: null,
    });
    expect(state!.last_success_at).toBeInstanceOf(Date);
    expect(log.lines.some((l) => /\[index\] base \d+\/\d+ blocks \(100%\)/.test(l))).toBe(true);

    // the last 2 blocks were inside the margin: index them too for the assertions below
    const all = await runIndexPass({ db: t.db, config: configFor([target(chain)]), log, afterPass: null });
    expect(all.status === 'ok' && all.failed).toEqual([]);
    const [s2] = await t.db.query<{ last_scanned_block: number }>(
      'SELECT last_scanned_block FROM chains WHERE network = $1',
      ['base'],
    );
    expect(s2!.last_scanned_block).toBe(head);
  });

  it('joins ownership from Transfer: the minter is not the owner', async () => {
    const rows = await t.db.query<Record<string, unknown>>(
      'SELECT agent_id, minter, owner, agent_uri, declared_type, registered_block FROM agents WHERE network = $1 ORDER BY agent_id',
      ['base'],
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({ agent_id: '0', minter: lc(played.relayer), owner: lc(played.owner0) });
    expect(rows[0]!.minter).not.toBe(rows[0]!.owner);
    expect(rows[1]).toMatchObject({
      agent_id: '1',
      minter: lc(played.owner1),
      owner: lc(played.owner1),
      declared_type: 'trading',
    });
    const transfers = await t.db.query(
      'SELECT * FROM ownership_transfers WHERE network = $1 AND agent_id = $2',
      ['base', '0'],
    );
    expect(transfers).toHaveLength(2); // the mint and the hand-over
  });

  it('reads declared types from metadata first, then from an inline data: registration file', async () => {
    const [a0] = await t.db.query<{ declared_type: string; uri_declared_type: string }>(
      'SELECT declared_type, uri_declared_type FROM agents WHERE network = $1 AND agent_id = $2',
      ['base', '0'],
    );
    expect(a0).toEqual({ declared_type: 'validator', uri_declared_type: 'oracle' });
  });

  it('stores exact decimal values (87.5, a real 0, a negative)', async () => {
    const rows = await t.db.query<{ value_raw: string; value_decimals: number; value: string }>(
      'SELECT value_raw, value_decimals, value FROM ratings WHERE network = $1 AND agent_id = $2 ORDER BY block_number',
      ['base', '0'],
    );
    expect(rows.map((r) => [r.value_raw, r.value_decimals, Number(r.value)])).toEqual([
      ['8750', 2, 87.5],
      ['0', 0, 0],
      ['-3', 0, -3],
    ]);
  });

  it('marks a revoked rating with the revoking transaction and keeps it', async () => {
    const rows = await t.db.query<Record<string, unknown>>(
      `SELECT feedback_index, revoked, revoked_tx, revoked_block, revoked_at FROM ratings
        WHERE network = $1 AND agent_id = $2 AND rater = $3 ORDER BY feedback_index`,
      ['base', '0', lc(played.rater)],
    );
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatchObject({
      feedback_index: '1',
      revoked: true,
      revoked_tx: played.revokeTx,
      revoked_block: Number(played.revokeBlock),
    });
    const block = await chain.node.request<{ timestamp: string }>('eth_getBlockByNumber', [
      `0x${played.revokeBlock.toString(16)}`,
      false,
    ]);
    expect((rows[0]!.revoked_at as Date).getTime()).toBe(Number(block.timestamp) * 1000);
    expect(rows[1]).toMatchObject({ feedback_index: '2', revoked: false, revoked_tx: null });
    const rev = await t.db.query('SELECT * FROM revocations WHERE network = $1', ['base']);
    expect(rev).toHaveLength(1);
  });

  it("stamps every row with its block's own timestamp, never the indexing time", async () => {
    const rows = await t.db.query<{ block_number: number; block_time: Date }>(
      `SELECT block_number, block_time FROM ratings WHERE network = $1
       UNION ALL SELECT block_number, block_time FROM ownership_transfers WHERE network = $1`,
      ['base'],
    );
    expect(rows.length).toBeGreaterThan(5);
    for (const r of rows) {
      const b = await chain.node.request<{ timestamp: string }>('eth_getBlockByNumber', [
        `0x${r.block_number.toString(16)}`,
        false,
      ]);
      expect(r.block_time.getTime()).toBe(Number(b.timestamp) * 1000);
    }
    // the local chain's clock starts in 2026-06; the indexing clock is "now"
    expect(rows.every((r) => r.block_time.getTime() < Date.UTC(2026, 6, 1))).toBe(true);
  });

  it('stores hostile strings intact (500-char tag1 with <script> and quotes), NUL and invalid UTF-8 made storable', async () => {
    const [h] = await t.db.query<Record<string, string>>(
      'SELECT * FROM ratings WHERE network = $1 AND tx_hash = $2',
      ['base', played.hostileTx],
    );
    expect(h!.tag1).toBe(HOSTILE_TAG1);
    expect(h!.tag1).toHaveLength(500);
    expect(h!.tag2).toBe('before\uFFFDafter');
    expect(h!.endpoint).toBe('https://e.example/\uFFFD');
    const [bad] = await t.db.query<Record<string, string>>(
      'SELECT * FROM ratings WHERE network = $1 AND tx_hash = $2',
      ['base', played.invalidUtf8Tx],
    );
    expect(bad!.tag1).toBe('\uFFFDA\uFFFD\uFFFD\uFFFD');
    expect(bad!.tag2).toBe('ok');
    expect(bad!.feedback_hash).toBe(`0x${'ab'.repeat(32)}`);
  });

  it('is idempotent: a second pass adds no row, and a full rescan from scratch adds none either', async () => {
    const before = await dumpIndex(t.db, ['base']);
    const config = configFor([target(chain)]);
    const again = await runIndexPass({ db: t.db, config, log: quietLogger(), afterPass: null });
    expect(again.status === 'ok' && again.chains[0]!.events).toBe(0);
    // forget the checkpoint: every log is read and written again, and nothing changes
    await t.db.query('UPDATE chains SET last_scanned_block = NULL WHERE network = $1', ['base']);
    const rescan = await runIndexPass({ db: t.db, config, log: quietLogger(), afterPass: null });
    expect(rescan.status).toBe('ok');
    if (rescan.status !== 'ok') return;
    expect(rescan.chains[0]!.events).toBeGreaterThan(10);
    expect(rescan.chains[0]!.inserted).toEqual({
      ratings: 0,
      revocations: 0,
      transfers: 0,
      metadata: 0,
      revokedApplied: 0,
      responses: 0,
      documentsQueued: 0,
    });
    expect(await dumpIndex(t.db, ['base'])).toEqual(before);
    // the live counters behind /health moved by real inserts only: they equal the table counts
    const [c] = await t.db.query<Record<string, number>>(
      `SELECT agents_count AS a, ratings_count AS r,
              (SELECT count(*) FROM agents WHERE network = 'base') AS ta,
              (SELECT count(*) FROM ratings WHERE network = 'base') AS tr
         FROM chains WHERE network = 'base'`,
    );
    expect(c!.r).toBeGreaterThan(0);
    expect([c!.a, c!.r]).toEqual([c!.ta, c!.tr]);
  });

  it('keeps feedback for an agent not seen yet, and revocations that arrive before their rating', async () => {
    // Real logs from the chain, written in the worst order a partial backfill can produce:
    // revocations, then ratings, then the identity events.
    const other = await openTestDatabase();
    try {
      const config = configFor([target(chain)]);
      await registerChains(other.db, config.chains);
      const scanner = createEvmScanner(
        config.chains.find((c) => c.network === 'base')!,
        {},
        quietLogger(),
      );
      const head = await scanner.head();
      const events: IndexEvent[] = [];
      for await (const b of scanner.scan(0, head)) events.push(...b.events);
      const cp = { network: 'base', lastScannedBlock: null, headAtLastSync: head, caughtUp: false };
      await ingestBatch(
        other.db,
        events.filter((e) => e.kind === 'revocation'),
        cp,
      );
      await ingestBatch(
        other.db,
        events.filter((e) => e.kind === 'feedback'),
        cp,
      );
      const orphan = await other.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ratings r WHERE NOT EXISTS (SELECT 1 FROM agents a WHERE a.network = r.network AND a.agent_id = r.agent_id)`,
      );
      expect(orphan[0]!.n).toBe(5); // every rating kept although no agent is known yet
      const [revoked] = await other.db.query<{ revoked_tx: string }>(
        'SELECT revoked_tx FROM ratings WHERE revoked',
      );
      expect(revoked!.revoked_tx).toBe(played.revokeTx);
      await ingestBatch(
        other.db,
        events.filter((e) => e.kind !== 'feedback' && e.kind !== 'revocation'),
        cp,
      );
      const joined = await other.db.query<{ owner: string }>(
        `SELECT a.owner FROM ratings r JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id WHERE r.agent_id = '0'`,
      );
      expect(joined.map((r) => r.owner)).toEqual([lc(played.owner0), lc(played.owner0), lc(played.owner0)]);
      // the same rows as the in-order pass
      expect(await dumpIndex(other.db, ['base'])).toEqual(await dumpIndex(t.db, ['base']));
    } finally {
      await other.close();
    }
  });

  it('runs one pass at a time: a concurrent pass gets "locked"', async () => {
    const config = configFor([target(chain)]);
    await t.db.query('UPDATE chains SET last_scanned_block = NULL WHERE network = $1', ['base']);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let entered!: () => void;
    const inside = new Promise<void>((r) => (entered = r));
    const first = runIndexPass({
      db: t.db,
      config,
      log: quietLogger(),
      afterPass: null,
      hooks: {
        afterBatch: async () => {
          entered();
          await gate;
        },
      },
    });
    await inside;
    const second = await runIndexPass({ db: t.db, config, log: quietLogger(), afterPass: null });
    expect(second.status).toBe('locked');
    release();
    const r1 = await first;
    expect(r1.status).toBe('ok');
    // the lock is free again
    expect((await runIndexPass({ db: t.db, config, log: quietLogger(), afterPass: null })).status).toBe('ok');
  });

  it('calls the after-pass hook with the database', async () => {
    const config = configFor([target(chain)]);
    let called = 0;
    const r = await runIndexPass({
      db: t.db,
      config,
      log: quietLogger(),
      afterPass: async (db) => {
        expect(db).toBe(t.db);
        called++;
      },
    });
    expect(r.status).toBe('ok');
    expect(called).toBe(1);
  });

  it('indexes a Solana chain next to the EVM ones with its own scanner (not skipped)', async () => {
    const config = configFor([target(chain)]);
    const sol = config.chains.find((c) => c.network === 'solana')!;
    sol.enabled = true;
    sol.startBlock = 500;
    // offline: an empty program history served by a replay transport (test/helpers/solana-fixtures.ts)
    const replay = createReplay([], 2_000);
    const r = await runIndexPass({
      db: t.db,
      config,
      log: quietLogger(),
      afterPass: null,
      solana: { transport: replay.transport },
    });
    expect(r.status).toBe('ok');
    if (r.status !== 'ok') return;
    expect(r.failed).toEqual([]);
    const s = r.chains.find((c) => c.network === 'solana')!;
    expect(s).toMatchObject({
      status: 'ok',
      kind: 'solana',
      from: 500,
      to: 2_000 - sol.confirmations,
      head: 2_000,
    });
    const [row] = await t.db.query<{ last_error: string | null; last_scanned_block: string | number }>(
      'SELECT last_error, last_scanned_block FROM chains WHERE network = $1',
      ['solana'],
    );
    expect(row!.last_error).toBeNull();
    expect(Number(row!.last_scanned_block)).toBe(2_000 - sol.confirmations);
  });

  it('scheduler: a pass at start, never overlapping, stop() waits for the running pass', async () => {
    const config = configFor([target(chain)], { indexerPeriodSeconds: 3600 });
    let passes = 0;
    const s = startIndexScheduler({
      db: t.db,
      config,
      log: quietLogger(),
      pass: {
        afterPass: async () => {
          passes++;
          await new Promise((r) => setTimeout(r, 50));
        },
      },
    });
    expect(s.running).toBe(true);
    const [a, b] = await Promise.all([s.runNow(), s.runNow()]);
    expect(a).toBe(b); // joined the running pass instead of starting a second one
    expect(passes).toBe(1);
    const third = s.runNow();
    await s.stop();
    expect(s.running).toBe(false);
    // stop() stops the running pass at its next batch boundary: here before its chain started,
    // so nothing ran and the after-pass refresh is left to the next pass (test/index-stop.test.ts).
    const r3 = await third;
    expect(r3?.status === 'ok' && r3.stopped).toBe(true);
    expect(passes).toBe(1);
    expect(await s.runNow()).toBeNull(); // stopped

    const off = startIndexScheduler({
      db: t.db,
      config: { ...config, indexerPeriodSeconds: 0 },
      log: quietLogger(),
    });
    expect(off.running).toBe(false);
    await off.stop();
  });
});

describe('defensive decoding', () => {
  it('skips a log that does not decode, with a warning, and indexes the rest', async () => {
    // A contract whose every call logs topic0 = NewFeedback with 32 zero bytes and no other topic,
    // and answers the identity registry's address (so getIdentityRegistry() passes the
    // configuration check).
    const topic = '6a4a61743519c9d648a14e6493f47dbe3ff1aa29e7785c96c8326a205e58febc';
    const identity = chain.reg.identityRegistry.slice(2).toLowerCase();
    const runtime = `7f${topic}60206000a173${identity}60005260206000f3`;
    const len = (runtime.length / 2).toString(16).padStart(2, '0');
    const init = `0x60${len}80600b6000396000f3${runtime}` as Hex;
    const k = chain.node.privateKeys;
    const deployed = await sendCall(chain.node.rpcUrl, k[7]!, { data: init });
    const emitter = deployed.contractAddress!;
    await sendCall(chain.node.rpcUrl, k[7]!, { to: emitter, data: stringToHex('x'), gas: 100_000n });
    const other = await openTestDatabase();
    try {
      const config = configFor([
        target(chain, {
          network: 'optimism',
          reg: { identityRegistry: chain.reg.identityRegistry, reputationRegistry: emitter },
        }),
      ]);
      const log = quietLogger();
      const r = await runIndexPass({ db: other.db, config, log, afterPass: null, networks: ['optimism'] });
      expect(r.status === 'ok' && r.failed).toEqual([]);
      expect(log.warnings.some((w) => w.includes('skipped an undecodable log'))).toBe(true);
      const agents = await other.db.query('SELECT * FROM agents WHERE network = $1', ['optimism']);
      expect(agents).toHaveLength(2);
      expect(await other.db.query('SELECT * FROM ratings')).toHaveLength(0);
    } finally {
      await other.close();
    }
  });
});
