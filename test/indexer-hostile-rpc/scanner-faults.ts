/**
 * The EVM indexer against hostile RPC endpoints, the scanner's own faults, without a database:
 * "range too large" in every provider's words, a silent cap on the number of logs, batch caps and
 * 429s with and without Retry-After. Registered by test/indexer-hostile-rpc.test.ts on its one
 * local chain (the fixture: test/helpers/hostile-rpc-fixture.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { PROVIDER_STYLES } from '../helpers/rpc-proxy.js';
import { hostileRpcTools, type HostileRpcFixture } from '../helpers/hostile-rpc-fixture.js';

/** The suite over the file's fixture. */
export function scannerFaultsSuite(fixture: () => HostileRpcFixture): void {
  let bareEvents: HostileRpcFixture['bareEvents'];
  let head: HostileRpcFixture['head'];
  const { scanAll, through } = hostileRpcTools(fixture);
  beforeAll(() => {
    ({ bareEvents, head } = fixture());
  });

  describe('"range too large" in every provider\'s words', () => {
    for (const style of PROVIDER_STYLES) {
      it(`${style}: the same events, never a served range above the cap${style === 'ankr-like' ? '' : ', the suggested range taken'}`, async () => {
        await through({ kind: 'range-error', above: 10, style }, async (p) => {
          const { events, stats } = await scanAll(p.url);
          expect(events).toEqual(bareEvents);
          expect(p.spoiled).toBeGreaterThan(0);
          if (style === 'ankr-like') {
            // no range named: halving is all the scanner can do
            expect(stats.halvings).toBeGreaterThan(0);
          } else {
            // one refusal is enough: the next range is the one the error named
            expect(stats.suggested).toBeGreaterThan(0);
            expect(stats.halvings).toBe(0);
            expect(stats.minRange).toBe(10);
          }
          if (['quicknode', 'reth', 'tenderly', 'infura-range'].includes(style)) {
            // a named limit is a ceiling: the range never grows back into refusals
            expect(stats.ceiling).toBe(10);
            expect(p.spoiled).toBe(1);
          }
        });
      });
    }
  });

  describe('a silent cap on the number of logs, at any number', () => {
    for (const max of [7, 13, 10]) {
      it(`every answer above ${max} logs cut to exactly ${max} (HTTP 200), default settings: the same events`, async () => {
        await through({ kind: 'cap-results', max }, async (p) => {
          const { events, stats } = await scanAll(p.url);
          expect(p.spoiled).toBeGreaterThan(0);
          expect(stats.truncations).toBeGreaterThan(0);
          expect(stats.cap).toBe(max);
          expect(events).toEqual(bareEvents);
        });
      });
    }

    it('an honest node: answers checked only when they reach the largest count seen, never proven cut', async () => {
      await through({ kind: 'well-behaved' }, async (p) => {
        const { events, stats } = await scanAll(p.url, { initialRange: 8, maxRange: 8 });
        expect(events).toEqual(bareEvents);
        expect(stats.truncations).toBe(0);
        expect(stats.cap).toBeNull();
        // each check costs two getLogs: far fewer checks than windows
        const windows = Math.ceil((head + 1) / 8);
        expect(stats.capChecks).toBeGreaterThan(0);
        expect(stats.capChecks).toBeLessThan(windows / 2);
        expect(p.calls.eth_getLogs).toBeLessThanOrEqual(
          windows + 2 * (stats.capChecks + stats.denseBlocks) + 2,
        );
      });
    });
  });

  describe('batches, rate limits', () => {
    it('a node that caps JSON-RPC batches at 10: the same events, no batch refused', async () => {
      await through({ kind: 'batch-cap', max: 10 }, async (p) => {
        const { events } = await scanAll(p.url);
        expect(events).toEqual(bareEvents);
        expect(p.refusedBatches).toBe(0);
      });
    });

    it('429 without Retry-After: retried with backoff, the same events', async () => {
      await through({ kind: 'rate-limit', every: 3, times: 4 }, async (p) => {
        const { events, stats } = await scanAll(p.url, { initialRange: 8, maxRange: 8 });
        expect(events).toEqual(bareEvents);
        expect(p.rateLimited).toBe(4);
        expect(stats.retries).toBe(4);
      });
    });

    it('429 with Retry-After: no request comes back before it ran out', async () => {
      await through({ kind: 'rate-limit', every: 2, times: 2, retryAfterSeconds: 1 }, async (p) => {
        const t0 = Date.now();
        const { events } = await scanAll(p.url, { initialRange: 16, maxRange: 16 });
        expect(events).toEqual(bareEvents);
        expect(p.rateLimited).toBe(2);
        expect(p.early).toBe(0);
        expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
      });
    }, 30_000);
  });
}
