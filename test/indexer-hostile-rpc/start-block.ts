/**
 * The EVM indexer against hostile RPC endpoints, a startBlock moved earlier: the next pass scans
 * the range it had never scanned. Registered by test/indexer-hostile-rpc.test.ts on its one local
 * chain (the fixture: test/helpers/hostile-rpc-fixture.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { runIndexPass } from '../../src/indexer/pass.js';
import { openTestDatabase } from '../helpers/db.js';
import { configFor, dumpNetwork, quietLogger, target } from '../helpers/indexer-fixtures.js';
import { FAST, type HostileRpcFixture } from '../helpers/hostile-rpc-fixture.js';

/** The suite over the file's fixture. */
export function startBlockSuite(fixture: () => HostileRpcFixture): void {
  let chain: HostileRpcFixture['chain'];
  let reference: HostileRpcFixture['reference'];
  let head: HostileRpcFixture['head'];
  beforeAll(() => {
    ({ chain, reference, head } = fixture());
  });

  describe('startBlock moved earlier', () => {
    it('the next pass scans the range it had never scanned, and the index equals a full one', async () => {
      const other = await openTestDatabase();
      try {
        const mid = Math.floor(head / 2);
        const run = (startBlock: number) =>
          runIndexPass({
            db: other.db,
            config: configFor([target(chain, { startBlock })]),
            log: quietLogger(),
            afterPass: null,
            scan: FAST,
          });
        const late = await run(mid);
        expect(late.status === 'ok' && late.chains[0]!.status).toBe('ok');
        const partial = await dumpNetwork(other.db, 'base');
        expect(partial.ratings!.length).toBeLessThan(12);
        const [row] = await other.db.query<{ scanned_from_block: string }>(
          'SELECT scanned_from_block FROM chains WHERE network = $1',
          ['base'],
        );
        expect(Number(row!.scanned_from_block)).toBe(mid);

        const early = await run(0);
        expect(early.status === 'ok' && early.chains[0]!.missedRange).toEqual({ from: 0, to: mid - 1 });
        expect(await dumpNetwork(other.db, 'base')).toEqual(reference);
        const [after] = await other.db.query<{ scanned_from_block: string }>(
          'SELECT scanned_from_block FROM chains WHERE network = $1',
          ['base'],
        );
        expect(Number(after!.scanned_from_block)).toBe(0);
      } finally {
        await other.close();
      }
    });
  });
}
