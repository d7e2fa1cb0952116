/**
 * A deep backfill's writes coalesced (src/indexer/pipeline.ts `coalesce`): consecutive advancing
 * batches merged up to a number of events, in order and contiguous, never a batch with its own
 * state or a non-advancing one; a batch waits a bounded time for the next; a scan error comes out
 * after every batch scanned before it; and a real pass over more than COALESCE_MIN_BLOCKS blocks
 * writes fewer, larger batches and ends identical to the same pass with one write per window.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { giveFeedback, registerAgent } from '../src/demo/registries.js';
import type { IndexEvent } from '../src/index-events.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { coalesce, COALESCE_MIN_BLOCKS } from '../src/indexer/pipeline.js';
import type { ScanBatch } from '../src/indexer/scanner.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  configFor,
  dumpNetwork,
  quietLogger,
  startLocalChain,
  target,
  type LocalChain,
} from './helpers/indexer-fixtures.js';

/** A stand-in event: only its identity matters here. */
const ev = (n: number) => ({ n }) as unknown as IndexEvent;
const numbers = (bs: ScanBatch[]) =>
  bs.flatMap((b) => b.events.map((e) => (e as unknown as { n: number }).n));

async function collect(src: AsyncIterable<ScanBatch>): Promise<ScanBatch[]> {
  const out: ScanBatch[] = [];
  for await (const b of src) out.push(b);
  return out;
}

/** Batches covering consecutive block ranges from block 100, with `sizes[i]` events each. */
function batchesOf(sizes: number[], special: (i: number) => Partial<ScanBatch> = () => ({})): ScanBatch[] {
  let block = 100;
  let n = 0;
  return sizes.map((k, i) => {
    const b: ScanBatch = {
      from: block,
      to: block + 9,
      events: Array.from({ length: k }, () => ev(n++)),
      ...special(i),
    };
    block += 10;
    return b;
  });
}

async function* fromList(bs: ScanBatch[]): AsyncGenerator<ScanBatch> {
  for (const b of bs) yield b;
}

describe('coalesce', () => {
  it('merges contiguous advancing batches up to maxEvents, in order, covering the same blocks', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.nat({ max: 40 }), { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 60 }),
        async (sizes, max) => {
          const input = batchesOf(sizes);
          const out = await collect(coalesce(fromList(input), max, 1_000));
          expect(numbers(out)).toEqual(numbers(input));
          // contiguous, from the first block to the last, none past the cap unless alone
          expect(out[0]!.from).toBe(100);
          expect(out.at(-1)!.to).toBe(input.at(-1)!.to);
          for (let i = 1; i < out.length; i++) expect(out[i]!.from).toBe(out[i - 1]!.to + 1);
          for (const b of out)
            if (b.events.length > max)
              expect(input.some((x) => x.from === b.from && x.to === b.to)).toBe(true);
          // greedy: two neighbours are apart only when together they would pass the cap
          for (let i = 1; i < out.length; i++)
            if (out[i - 1]!.events.length < max)
              expect(out[i - 1]!.events.length + out[i]!.events.length).toBeGreaterThan(max);
        },
      ),
      { seed: 20261128, numRuns: 200 },
    );
  });

  it('never merges a non-advancing batch, one with state to persist, or one that is not contiguous', async () => {
    const persist = async () => {};
    const input = batchesOf([3, 3, 3, 3, 3, 3], (i) =>
      i === 1 ? { advance: false } : i === 3 ? { persist } : i === 5 ? { from: 200, to: 209 } : {},
    );
    const out = await collect(coalesce(fromList(input), 100, 1_000));
    expect(out.map((b) => [b.from, b.to, b.events.length])).toEqual([
      [100, 109, 3],
      [110, 119, 3],
      [120, 129, 3],
      [130, 139, 3],
      [140, 149, 3],
      [200, 209, 3],
    ]);
    expect(out[1]!.advance).toBe(false);
    expect(out[3]!.persist).toBe(persist);
  });

  it('a batch waits for the next one a bounded time only', async () => {
    const [a, b] = batchesOf([2, 2]);
    let secondAt = 0;
    async function* slow() {
      yield a!;
      await new Promise((r) => setTimeout(r, 400));
      secondAt = Date.now();
      yield b!;
    }
    const seen: { events: number; at: number }[] = [];
    for await (const x of coalesce(slow(), 100, 30)) seen.push({ events: x.events.length, at: Date.now() });
    expect(seen.map((s) => s.events)).toEqual([2, 2]);
    // the first came out before the second existed
    expect(seen[0]!.at).toBeLessThan(secondAt);
  });

  it('a scan error comes out after every batch scanned before it', async () => {
    const input = batchesOf([2, 2, 2]);
    async function* failing() {
      yield* input;
      throw new Error('node down');
    }
    const out: ScanBatch[] = [];
    await expect(
      (async () => {
        for await (const b of coalesce(failing(), 100, 1_000)) out.push(b);
      })(),
    ).rejects.toThrow('node down');
    expect(numbers(out)).toEqual(numbers(input));
  });

  it('a consumer that stops closes the source', async () => {
    let closed = false;
    async function* source() {
      try {
        for (let i = 0; ; i++) yield { from: 10 * i, to: 10 * i + 9, events: [ev(i)] };
      } finally {
        closed = true;
      }
    }
    for await (const b of coalesce(source(), 3, 1_000)) {
      expect(b.events).toHaveLength(3);
      break;
    }
    expect(closed).toBe(true);
  });
});

describe('a pass over a deep backfill', () => {
  let chain: LocalChain;
  let t: TestDatabase;

  beforeAll(async () => {
    [chain, t] = await Promise.all([startLocalChain('base', 8453), openTestDatabase()]);
    const k = chain.node.privateKeys;
    const ids: bigint[] = [];
    for (let i = 0; i < 2; i++)
      ids.push((await registerAgent(chain.reg, k[1]!, `https://c${i}.example`)).agentId);
    // twelve ratings spread over more than COALESCE_MIN_BLOCKS blocks
    for (let i = 0; i < 12; i++) {
      await giveFeedback(chain.reg, k[3 + (i % 3)]!, { agentId: ids[i % 2]!, value: 40 + i, tag1: 'c' });
      await chain.node.mine(Math.ceil(COALESCE_MIN_BLOCKS / 10));
    }
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await chain?.close();
  });

  async function pass(network: string, coalesced: boolean) {
    let writes = 0;
    const r = await runIndexPass({
      db: t.db,
      config: configFor([target(chain, { network, startBlock: 0 })]),
      log: quietLogger(),
      afterPass: null,
      scan: { initialRange: 1_000, maxRange: 1_000, baseDelayMs: 5, maxDelayMs: 20 },
      coalesce: coalesced,
      hooks: { afterBatch: async () => void writes++ },
    });
    expect(r.status === 'ok' && r.failed).toEqual([]);
    return { writes, dump: await dumpNetwork(t.db, network) };
  }

  it('writes fewer batches and ends identical to one write per window', async () => {
    const one = await pass('optimism', false);
    const merged = await pass('polygon', true);
    expect(one.dump.ratings).toHaveLength(12);
    expect(merged.dump).toEqual(one.dump);
    expect(one.writes).toBeGreaterThan(10);
    expect(merged.writes).toBeLessThan(one.writes / 2);
  }, 120_000);
});
