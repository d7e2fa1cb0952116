/**
 * The EVM indexer against hostile RPC endpoints, silent loss (truncated and empty answers), caught
 * by the completeness census and repaired from its differences; without the census; a loss no
 * repair restores (/health, /metrics). Registered by test/indexer-hostile-rpc.test.ts on its one
 * local chain (the fixture: test/helpers/hostile-rpc-fixture.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runCensus } from '../../src/completeness/census.js';
import { createApp } from '../../src/doors/http/app.js';
import { createEvmScanner } from '../../src/indexer/evm-scanner.js';
import { renderMetrics, setMetricsDatabase } from '../../src/metrics.js';
import { countingDb } from '../helpers/counting-db.js';
import { configFor, dumpNetwork, quietLogger, target } from '../helpers/indexer-fixtures.js';
import { FAST, hostileRpcTools, type HostileRpcFixture } from '../helpers/hostile-rpc-fixture.js';

/** The suite over the file's fixture. */
export function censusLossSuite(fixture: () => HostileRpcFixture): void {
  let chain: HostileRpcFixture['chain'];
  let t: HostileRpcFixture['t'];
  let reference: HostileRpcFixture['reference'];
  let head: HostileRpcFixture['head'];
  const { through, pass, chainRow } = hostileRpcTools(fixture);
  beforeAll(() => {
    ({ chain, t, reference, head } = fixture());
  });

  describe('silent loss, caught by the census', () => {
    it('a well-behaved node: a full census through Multicall3 agrees, no repair', async () => {
      await through({ kind: 'well-behaved' }, async (p) => {
        const { chain: c } = await pass([{ ...target(chain, { network: 'bsc' }), rpcUrl: p.url }]);
        expect(c.status).toBe('ok');
        expect(c.census).toEqual({
          state: 'ok',
          scope: 'full',
          method: 'multicall3',
          repairs: 0,
          repaired: 0,
          differences: 0,
          calls: expect.any(Number),
        });
        // four agents, 12 ratings: the minted count and three rounds of reads, a handful of eth_calls
        expect(c.census!.calls).toBeLessThanOrEqual(8);
        expect(p.calls.eth_call).toBe(c.census!.calls + 1); // + the configuration check's getIdentityRegistry
        expect(await dumpNetwork(t.db, 'bsc')).toEqual(reference);
      });
    });

    for (const [network, kind] of [
      ['celo', 'truncate'],
      ['ethereum', 'empty'],
    ] as const) {
      it(`${kind}: HTTP 200 with ${kind === 'truncate' ? '20 % of the logs dropped' : '[]'} above 6 blocks: the census finds it, the repair from its differences restores it`, async () => {
        await through({ kind, above: 6 }, async (p) => {
          const { chain: c, log } = await pass([{ ...target(chain, { network }), rpcUrl: p.url }]);
          expect(p.droppedLogs).toBeGreaterThan(0);
          expect(c.status).toBe('ok');
          expect(c.census?.state).toBe('ok');
          expect(c.census!.repairs).toBeGreaterThan(0);
          expect(c.census!.repaired).toBeGreaterThan(0);
          expect(log.warnings.some((w) => w.includes('census mismatch'))).toBe(true);
          expect(await dumpNetwork(t.db, network)).toEqual(reference);
          expect((await chainRow(network)).census_state).toBe('ok');
        });
      });
    }

    it('the census reads the index in three queries per chunk of agents (not two per agent)', async () => {
      const cfg = configFor([target(chain)]).chains.find((c) => c.network === 'base')!;
      const scanner = createEvmScanner(cfg, FAST, quietLogger());
      for (const scope of ['full', 'sample'] as const) {
        const counted = countingDb(t.db);
        const out = await runCensus(scanner.reads, counted, cfg, head, { scope, sample: 16, seed: 3 });
        expect(out).toMatchObject({ state: 'ok', scope, agentsChecked: 4, method: 'multicall3' });
        expect(out.pairsChecked).toBeGreaterThan(0);
        // Registered rows counted, the chunk's agent rows, their (agent, rater) pairs.
        expect(counted.calls()).toBe(3);
      }
    });

    it('without the census (CENSUS=0) the same node leaves rows out: the census is what repairs them', async () => {
      await through({ kind: 'truncate', above: 6 }, async (p) => {
        const { chain: c } = await pass([{ ...target(chain, { network: 'arbitrum' }), rpcUrl: p.url }], {
          census: { enabled: false, sample: 16, seed: null },
        });
        expect(c.status).toBe('ok');
        expect(c.census).toBeUndefined();
        expect(await dumpNetwork(t.db, 'arbitrum')).not.toEqual(reference);
        expect((await chainRow('arbitrum')).census_state).toBeNull();
      });
    });

    it('a loss no repair restores stays a mismatch (/health degraded, every difference stored, /metrics); the next pass through an honest node heals it', async () => {
      await through({ kind: 'empty', above: 0 }, async (p) => {
        const { chain: c } = await pass([{ ...target(chain, { network: 'monad' }), rpcUrl: p.url }], {
          census: { enabled: true, sample: 4, seed: 7 },
        });
        expect(c.status).toBe('ok');
        expect(c.census?.state).toBe('mismatch');
        expect(c.census!.repairs).toBe(3);
        expect(c.census!.repaired).toBe(0);
      });
      const app = createApp({
        config: configFor([target(chain, { network: 'monad' })]),
        db: t.db,
        now: () => new Date(),
      });
      const health = async () =>
        (await (await app.request('/health')).json()) as {
          status: string;
          status_reason: string;
          chains: {
            network: string;
            census: {
              state: string;
              scope: string;
              method: string;
              block: number;
              detail: Record<string, unknown>;
            };
          }[];
        };
      const before = await health();
      expect(before.status).toBe('degraded');
      expect(before.status_reason).toContain('census mismatch');
      const monad = before.chains.find((x) => x.network === 'monad')!;
      expect(monad.census).toMatchObject({ state: 'mismatch', scope: 'full', method: 'multicall3' });
      expect(monad.census.block).toBeGreaterThan(0);
      expect(monad.census.detail.minted).toBe(4);
      expect(monad.census.detail.registered).toBe(0);
      expect(monad.census.detail.differences).toContainEqual({ what: 'agents', chain: '4', index: '0' });
      // Every difference is stored: each agent (registered, owner, uri) and each (agent, client) pair.
      const stored = await t.db.query<{ what: string; agent_id: string | null; client: string | null }>(
        `SELECT what, agent_id, client FROM census_differences WHERE network = 'monad' ORDER BY seq`,
      );
      expect(stored).toHaveLength(monad.census.detail.difference_count as number);
      const pairsOnChain = new Set(
        reference.ratings!.map(
          (r) => `${(r as { agent_id: string }).agent_id}|${(r as { rater: string }).rater}`,
        ),
      );
      expect(
        stored
          .filter((d) => d.what === 'feedback')
          .map((d) => `${d.agent_id}|${d.client}`)
          .sort(),
      ).toEqual([...pairsOnChain].sort());
      expect(stored.filter((d) => d.what === 'registered').map((d) => d.agent_id)).toEqual([
        '0',
        '1',
        '2',
        '3',
      ]);
      setMetricsDatabase(t.db);
      const { body } = await renderMetrics();
      expect(body).toMatch(/repindex_census_total\{chain="monad",outcome="mismatch"\} 1/);
      expect(body).toMatch(/repindex_census_repairs_total\{chain="monad"\} 3/);
      expect(body).toMatch(/repindex_chain_census_ok\{chain="monad"\} 0/);

      // The operator fixes the RPC: the next pass (nothing new on the chain) heals the index.
      await through({ kind: 'well-behaved' }, async (p) => {
        const { chain: c } = await pass([{ ...target(chain, { network: 'monad' }), rpcUrl: p.url }], {
          census: { enabled: true, sample: 4, seed: 7 },
        });
        expect(c.census).toMatchObject({ state: 'ok', scope: 'full', repairs: 1 });
        expect(p.calls.eth_getLogs).toBeGreaterThan(0);
      });
      expect(await dumpNetwork(t.db, 'monad')).toEqual(reference);
      const after = await health();
      expect(after.chains.find((x) => x.network === 'monad')!.census.state).toBe('ok');
      expect(await t.db.query(`SELECT 1 FROM census_differences WHERE network = 'monad'`)).toHaveLength(0);
    });
  });
}
