/**
 * The EVM indexer against hostile RPC endpoints, a census that cannot run (its Multicall3 reads
 * fail): a standing mismatch is kept, else the census is stored unchecked. Registered by
 * test/indexer-hostile-rpc.test.ts on its one local chain (the fixture:
 * test/helpers/hostile-rpc-fixture.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { MULTICALL3_ADDRESS } from '../../src/chains.js';
import { createApp } from '../../src/doors/http/app.js';
import { runIndexPass } from '../../src/indexer/pass.js';
import { openTestDatabase } from '../helpers/db.js';
import { configFor, quietLogger, target } from '../helpers/indexer-fixtures.js';
import { FAST, hostileRpcTools, type HostileRpcFixture } from '../helpers/hostile-rpc-fixture.js';

/** The suite over the file's fixture. */
export function censusUnavailableSuite(fixture: () => HostileRpcFixture): void {
  let chain: HostileRpcFixture['chain'];
  const { through } = hostileRpcTools(fixture);
  beforeAll(() => {
    ({ chain } = fixture());
  });

  describe('a census that cannot run', () => {
    it("keeps a standing mismatch on the chain's row (/health stays degraded); after an agreeing census it stores unchecked", async () => {
      const other = await openTestDatabase();
      try {
        const census = { enabled: true, sample: 4, seed: 7 };
        // Both chains in every pass (a pass's configuration marks the chains it leaves out disabled).
        const passOn = async (urls: { monad: string; bsc: string }) => {
          const r = await runIndexPass({
            db: other.db,
            config: configFor(
              [
                { ...target(chain, { network: 'monad' }), rpcUrl: urls.monad },
                { ...target(chain, { network: 'bsc' }), rpcUrl: urls.bsc },
              ],
              { census },
            ),
            log: quietLogger(),
            afterPass: null,
            scan: FAST,
          });
          if (r.status !== 'ok') throw new Error('pass locked');
          const of = (n: string) => r.chains.find((c) => c.network === n)!;
          return { monad: of('monad'), bsc: of('bsc') };
        };
        const app = createApp({
          config: configFor([target(chain, { network: 'monad' }), target(chain, { network: 'bsc' })]),
          db: other.db,
          now: () => new Date(),
        });
        const health = async () => {
          const h = (await (await app.request('/health')).json()) as {
            status: string;
            status_reason: string;
            chains: {
              network: string;
              census: { state: string; checked_at: string | null; detail: unknown };
            }[];
          };
          const of = (n: string) => h.chains.find((x) => x.network === n)!.census;
          return { status: h.status, reason: h.status_reason, monad: of('monad'), bsc: of('bsc') };
        };

        // monad: every getLogs answer emptied, a mismatch no rescan repairs; bsc: an agreeing census.
        await through({ kind: 'empty', above: 0 }, async (p) => {
          const r = await passOn({ monad: p.url, bsc: chain.node.rpcUrl });
          expect(r.monad.census?.state).toBe('mismatch');
          expect(r.bsc.census?.state).toBe('ok');
        });
        const before = await health();
        expect(before.monad.state).toBe('mismatch');
        expect(before.bsc.state).toBe('ok');
        expect(before.status).toBe('degraded');

        // A pass during which the census's reads (through Multicall3) fail: the scan succeeds, the census cannot run.
        await through({ kind: 'fail-call', to: MULTICALL3_ADDRESS }, async (p) => {
          const r = await passOn({ monad: p.url, bsc: p.url });
          for (const c of [r.monad, r.bsc]) {
            expect(c.status).toBe('ok');
            expect(c.census).toMatchObject({
              state: 'unchecked',
              error: expect.stringMatching(/503|eth_call/),
            });
          }
          expect(p.failed).toBeGreaterThan(0);
        });
        const after = await health();
        // The standing mismatch is left as it was (state, block, time, what differed): still degraded.
        expect(after.monad).toEqual(before.monad);
        expect(after.status).toBe('degraded');
        expect(after.reason).toContain('census mismatch');
        expect(after.reason).toContain('monad');
        // No mismatch before it: the census is stored unchecked, with the error.
        expect(after.bsc.state).toBe('unchecked');
        expect(after.bsc.checked_at).not.toBe(before.bsc.checked_at);
        expect(after.bsc.detail).toMatchObject({ error: expect.stringMatching(/503|eth_call/) });
      } finally {
        await other.close();
      }
    });
  });
}
