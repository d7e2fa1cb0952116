/**
 * The backfill's bounded pipeline (src/indexer/pipeline.ts): the scanner reads ahead of the write,
 * bounded, in order; a failure in the middle of a write leaves the checkpoint at the last written
 * batch and a rerun ends identical to a pass without any failure; a scanner that fails after some
 * batches leaves every batch it read before written.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { giveFeedback, registerAgent } from '../src/demo/registries.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { readAhead } from '../src/indexer/pipeline.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  configFor,
  dumpNetwork,
  quietLogger,
  startLocalChain,
  target,
  type LocalChain,
} from './helpers/indexer-fixtures.js';
import { startHostileRpc } from './helpers/rpc-proxy.js';

const tick = () => new Promise((r) => setTimeout(r, 5));

describe('readAhead', () => {
  it('yields every item in order, never more than depth ahead of the consumer', async () => {
    let produced = 0;
    let consumed = 0;
    let widest = 0;
    async function* source() {
      for (let i = 0; i < 20; i++) {
        await tick();
        produced++;
        widest = Math.max(widest, produced - consumed);
        yield i;
      }
    }
    const seen: number[] = [];
    for await (const x of readAhead(source(), 3)) {
      await tick();
      await tick();
      seen.push(x);
      consumed++;
    }
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // the buffer (3) plus the item being consumed
    expect(widest).toBeLessThanOrEqual(4);
    expect(widest).toBeGreaterThan(1);
  });

  it("a producer's error comes out after every item it produced before it", async () => {
    async function* source() {
      yield 1;
      yield 2;
      await tick();
      throw new Error('node down');
    }
    const seen: number[] = [];
    await expect(
      (async () => {
        for await (const x of readAhead(source(), 2)) seen.push(x);
      })(),
    ).rejects.toThrow('node down');
    expect(seen).toEqual([1, 2]);
  });

  it('a consumer that stops closes the source: nothing more is read after the step in flight', async () => {
    let produced = 0;
    let closed = false;
    async function* source() {
      try {
        for (let i = 0; i < 100; i++) {
          await tick();
          produced++;
          yield i;
        }
      } finally {
        closed = true;
      }
    }
    await expect(
      (async () => {
        for await (const x of readAhead(source(), 2)) if (x === 3) throw new Error('write failed');
      })(),
    ).rejects.toThrow('write failed');
    expect(closed).toBe(true);
    const after = produced;
    await tick();
    await tick();
    expect(produced).toBe(after);
    expect(produced).toBeLessThanOrEqual(4 + 2 + 1);
  });

  it('depth 0 is the source itself', () => {
    const src = (async function* () {})();
    expect(readAhead(src, 0)).toBe(src);
  });
});

describe('the pass with the scanner reading ahead', () => {
  let chain: LocalChain;
  let t: TestDatabase;
  let reference: Record<string, unknown[]>;
  const SMALL = { initialRange: 2, maxRange: 2, baseDelayMs: 5, maxDelayMs: 20 };

  beforeAll(async () => {
    [chain, t] = await Promise.all([startLocalChain('base', 8453), openTestDatabase()]);
    const k = chain.node.privateKeys;
    const ids: bigint[] = [];
    for (let i = 0; i < 3; i++)
      ids.push((await registerAgent(chain.reg, k[1]!, `https://p${i}.example`)).agentId);
    for (let i = 0; i < 10; i++)
      await giveFeedback(chain.reg, k[5 + (i % 3)]!, { agentId: ids[i % 3]!, value: 50 + i, tag1: 'p' });
    // the reference: no read-ahead at all
    const r = await runIndexPass({
      db: t.db,
      config: configFor([target(chain)]),
      log: quietLogger(),
      afterPass: null,
      scan: SMALL,
      readAhead: 0,
    });
    expect(r.status === 'ok' && r.failed).toEqual([]);
    reference = await dumpNetwork(t.db, 'base');
    expect(reference.ratings).toHaveLength(10);
  });

  afterAll(async () => {
    await t?.close();
    await chain?.close();
  });

  /** The getLogs ranges above the first batch the scanner had asked for while that batch was being written. */
  async function readsDuringFirstWrite(network: string, depth: number): Promise<{ from: number }[]> {
    const proxy = await startHostileRpc(chain.node.rpcUrl, { kind: 'well-behaved' });
    try {
      let ahead: { from: number }[] = [];
      const r = await runIndexPass({
        db: t.db,
        config: configFor([{ ...target(chain, { network }), rpcUrl: proxy.url }]),
        log: quietLogger(),
        afterPass: null,
        scan: SMALL,
        readAhead: depth,
        hooks: {
          beforeCommit: async (info) => {
            if (info.batch !== 1) return;
            await new Promise((res) => setTimeout(res, 300)); // a slow write
            // (each as its distance from the block after the batch)
            ahead = proxy.logQueries
              .filter((q) => Number(q.fromBlock) > info.to)
              .map((q) => ({ from: Number(q.fromBlock) - (info.to + 1) }));
          },
        },
      });
      expect(r.status === 'ok' && r.failed).toEqual([]);
      expect(await dumpNetwork(t.db, network)).toEqual(reference);
      return ahead;
    } finally {
      await proxy.close();
    }
  }

  it('scans the next ranges while a batch is being written (without read-ahead: only the next window, which the scanner asks itself)', async () => {
    // read-ahead 2: the next batches are scanned (several windows, and their checks)
    const deep = await readsDuringFirstWrite('optimism', 2);
    expect(deep.length).toBeGreaterThan(1);
    expect(deep.some((q) => q.from > 0)).toBe(true);
    // none: the one window right after the batch, asked while the batch was handed on, no more
    expect(await readsDuringFirstWrite('polygon', 0)).toEqual([{ from: 0 }]);
  });

  it('a failure in the middle of a write leaves the checkpoint at the last written batch; a rerun ends identical', async () => {
    const config = configFor([target(chain, { network: 'arbitrum' })]);
    let failedAt: { from: number; to: number } | null = null;
    const crashed = await runIndexPass({
      db: t.db,
      config,
      log: quietLogger(),
      afterPass: null,
      scan: SMALL,
      readAhead: 3,
      hooks: {
        beforeCommit: async (info, tx) => {
          if (info.batch === 3) {
            await tx.query('SELECT 1');
            failedAt = { from: info.from, to: info.to };
            throw new Error('simulated failure in the middle of a write');
          }
        },
      },
    });
    expect(crashed.status === 'ok' && crashed.failed).toEqual(['arbitrum']);
    expect(failedAt).not.toBeNull();
    const [cp] = await t.db.query<{ last_scanned_block: number | null; last_error: string | null }>(
      'SELECT last_scanned_block, last_error FROM chains WHERE network = $1',
      ['arbitrum'],
    );
    // batches 1 and 2 written, nothing of batch 3 or of the batches read ahead of it
    expect(cp!.last_scanned_block).toBe(failedAt!.from - 1);
    expect(cp!.last_error).toContain('simulated failure');
    const late = await t.db.query('SELECT 1 FROM ratings WHERE network = $1 AND block_number >= $2', [
      'arbitrum',
      failedAt!.from,
    ]);
    expect(late).toHaveLength(0);

    const resumed = await runIndexPass({
      db: t.db,
      config,
      log: quietLogger(),
      afterPass: null,
      scan: SMALL,
    });
    expect(resumed.status === 'ok' && resumed.failed).toEqual([]);
    expect(resumed.status === 'ok' && resumed.chains[0]!.from).toBe(failedAt!.from);
    expect(await dumpNetwork(t.db, 'arbitrum')).toEqual(reference);
  });
});
