/**
 * The fixture of test/indexer-hostile-rpc.test.ts and its suites (test/indexer-hostile-rpc/*.ts):
 * what the file's one local chain gives them (the chain, the database, the reference index built
 * from the bare node, the events a scan of the bare node reads, the head), and the scans, proxies
 * and passes over it.
 */
import type { EvmScanOptions } from '../../src/indexer/evm-scanner.js';
import { createEvmScanner } from '../../src/indexer/evm-scanner.js';
import { runIndexPass } from '../../src/indexer/pass.js';
import type { IndexEvent } from '../../src/index-events.js';
import type { TestDatabase } from './db.js';
import { configFor, quietLogger, target, type ChainTarget, type LocalChain } from './indexer-fixtures.js';
import { withHostileRpc, type HostileRpc, type ProxyMode } from './rpc-proxy.js';

export interface HostileRpcFixture {
  chain: LocalChain;
  t: TestDatabase;
  reference: Record<string, unknown[]>;
  bareEvents: IndexEvent[];
  head: number;
}

export const FAST: Partial<EvmScanOptions> = { baseDelayMs: 5, maxDelayMs: 20 };

/** The scans, proxies and passes over the fixture (read when called: the file's beforeAll sets it). */
export function hostileRpcTools(fixture: () => HostileRpcFixture) {
  /** Every event a scanner reads from `url` over the whole chain (no database). */
  async function scanAll(url: string, opts: Partial<EvmScanOptions> = {}) {
    const { chain, head } = fixture();
    const scanner = createEvmScanner(
      { ...configFor([target(chain)]).chains.find((c) => c.network === 'base')!, rpcUrl: url },
      { ...FAST, ...opts },
      quietLogger(),
    );
    const events: IndexEvent[] = [];
    for await (const b of scanner.scan(0, head)) events.push(...b.events);
    return { events, stats: scanner.stats };
  }

  const through = <T>(mode: ProxyMode, fn: (p: HostileRpc) => Promise<T>): Promise<T> =>
    withHostileRpc(fixture().chain.node.rpcUrl, mode, fn);

  async function pass(targets: ChainTarget[], over: Parameters<typeof configFor>[1] = {}) {
    const log = quietLogger();
    const r = await runIndexPass({
      db: fixture().t.db,
      config: configFor(targets, over),
      log,
      afterPass: null,
      scan: FAST,
    });
    if (r.status !== 'ok') throw new Error('pass locked');
    return { r, chain: r.chains[0]!, log };
  }

  async function chainRow(network: string) {
    const [row] = await fixture().t.db.query<Record<string, unknown>>(
      'SELECT * FROM chains WHERE network = $1',
      [network],
    );
    return row!;
  }

  return { scanAll, through, pass, chainRow };
}
