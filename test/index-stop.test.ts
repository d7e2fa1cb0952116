/**
 * Ctrl-C / SIGTERM during a pass (issue 12): the pass stops at the next batch boundary instead of
 * running to the end. Every batch written so far stays committed with its checkpoint, no chain is
 * started after the signal, the after-pass hook is skipped, and the next pass resumes from the
 * checkpoint to exactly the index a pass without interruption builds. Against a real local chain.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { giveFeedback, registerAgent } from '../src/demo/registries.js';
import type { Config } from '../src/config.js';
import { runIndexPass, type PassReport } from '../src/indexer/pass.js';
import { startIndexScheduler } from '../src/indexer/scheduler.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  configFor,
  dumpNetwork,
  quietLogger,
  startLocalChain,
  target,
  type LocalChain,
} from './helpers/indexer-fixtures.js';

let chain: LocalChain;
let config: Config;
let reference: Record<string, unknown[]>;
/** Two blocks per batch: the scenario spans many batches. */
const scan = { initialRange: 2, maxRange: 2 };

beforeAll(async () => {
  chain = await startLocalChain('base', 8453);
  const k = chain.node.privateKeys;
  const { agentId } = await registerAgent(chain.reg, k[1]!, 'https://agent.example/card.json');
  // One transaction per block (automine): ratings spread over a dozen blocks.
  for (let i = 0; i < 10; i++) {
    await giveFeedback(chain.reg, k[2 + (i % 4)]!, {
      agentId,
      value: 10 * i,
      valueDecimals: 0,
      tag1: `t${i}`,
    });
  }
  config = configFor([target(chain, { startBlock: Number(chain.reg.deployBlock) })]);
  // The index an uninterrupted pass builds.
  const ref = await openTestDatabase();
  try {
    const r = await runIndexPass({
      db: ref.db,
      config,
      log: quietLogger(),
      afterPass: null,
      progress: 'off',
      scan,
    });
    expect(r.status === 'ok' && r.failed).toEqual([]);
    reference = await dumpNetwork(ref.db, 'base');
    expect(reference.ratings).toHaveLength(10);
  } finally {
    await ref.close();
  }
}, 300_000);
afterAll(async () => {
  await chain?.close();
});

async function checkpoint(t: TestDatabase): Promise<number> {
  const [row] = await t.db.query<{ n: number | string }>(
    `SELECT last_scanned_block AS n FROM chains WHERE network = 'base'`,
  );
  return Number(row!.n);
}

describe('stopping a pass at the next batch boundary', () => {
  it('an aborted signal stops after the batch being written; the next pass resumes to the same index', async () => {
    const t = await openTestDatabase();
    try {
      const abort = new AbortController();
      let afterPassRan = false;
      const batchesSeen: { batch: number; to: number }[] = [];
      const report = await runIndexPass({
        db: t.db,
        config,
        log: quietLogger(),
        progress: 'off',
        scan,
        signal: abort.signal,
        afterPass: async () => {
          afterPassRan = true;
        },
        hooks: {
          afterBatch: (info) => {
            batchesSeen.push({ batch: info.batch, to: info.to });
            if (info.batch === 2) abort.abort(); // Ctrl-C while batch 2 is being written
          },
        },
      });
      expect(report.status).toBe('ok');
      if (report.status !== 'ok') return;
      expect(report.stopped).toBe(true);
      expect(report.failed).toEqual([]);
      const base = report.chains.find((c) => c.network === 'base')!;
      expect(base).toMatchObject({ status: 'stopped', batches: 2 });
      expect(batchesSeen).toHaveLength(2);
      expect(afterPassRan).toBe(false);
      // Batch 2 committed with its checkpoint; nothing beyond it.
      expect(await checkpoint(t)).toBe(batchesSeen[1]!.to);
      const [partial] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ratings WHERE network = 'base'`,
      );
      expect(partial!.n).toBeLessThan(10);

      const resumed = await runIndexPass({
        db: t.db,
        config,
        log: quietLogger(),
        afterPass: null,
        progress: 'off',
        scan,
      });
      expect(resumed.status === 'ok' && resumed.chains[0]).toMatchObject({
        status: 'ok',
        from: batchesSeen[1]!.to + 1,
      });
      expect(await dumpNetwork(t.db, 'base')).toEqual(reference);
    } finally {
      await t.close();
    }
  });

  it('a signal before a chain starts leaves it untouched (stopped, no checkpoint moved)', async () => {
    const t = await openTestDatabase();
    try {
      const abort = new AbortController();
      abort.abort();
      const report = await runIndexPass({
        db: t.db,
        config,
        log: quietLogger(),
        afterPass: null,
        progress: 'off',
        scan,
        signal: abort.signal,
      });
      expect(report.status === 'ok' && report.chains.map((c) => [c.network, c.status, c.batches])).toEqual([
        ['base', 'stopped', 0],
      ]);
      const [row] = await t.db.query<{ n: number | null }>(
        `SELECT last_scanned_block AS n FROM chains WHERE network = 'base'`,
      );
      expect(row!.n).toBeNull();
    } finally {
      await t.close();
    }
  });

  it('scheduler.stop() (what serve does on SIGINT/SIGTERM) stops a running pass at its next batch', async () => {
    const t = await openTestDatabase();
    try {
      let stopping: Promise<void> | null = null;
      let lastTo = -1;
      const scheduler = startIndexScheduler({
        db: t.db,
        config,
        periodSeconds: 3600,
        runAtStart: false,
        log: quietLogger(),
        pass: {
          progress: 'off',
          scan,
          afterPass: null,
          hooks: {
            afterBatch: (info) => {
              lastTo = info.to;
              if (info.batch === 1) stopping = scheduler.stop();
            },
          },
        },
      });
      const report = (await scheduler.runNow()) as PassReport;
      await stopping;
      expect(report.status === 'ok' && report.stopped).toBe(true);
      expect(report.status === 'ok' && report.chains[0]).toMatchObject({ status: 'stopped', batches: 1 });
      expect(await checkpoint(t)).toBe(lastTo);
      expect(scheduler.running).toBe(false);
    } finally {
      await t.close();
    }
  });
});
