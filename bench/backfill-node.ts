/**
 * `bench:backfill`'s RPC side, in a process of its own (as a production node is): the local EDR
 * node and, in front of it, the hostile-RPC proxy in its well-behaved mode. Started by
 * bench/backfill.ts with `fork` (an IPC channel); it sends `{ ready }` with both URLs and the
 * node's unlocked accounts, then answers `{ type: 'queries' }` with the eth_getLogs filters the
 * proxy has seen (`{ queries }`) and exits on `{ type: 'close' }` (or when its parent goes away).
 */
import { startLocalNode } from '../src/demo/local-node.js';
import { startHostileRpc } from '../test/helpers/rpc-proxy.js';

export interface BackfillNodeReady {
  ready: { rpcUrl: string; proxyUrl: string; accounts: string[]; privateKeys: string[] };
}

export interface BackfillNodeQueries {
  queries: Record<string, unknown>[];
}

async function main(): Promise<void> {
  const node = await startLocalNode({ chainId: 8453 });
  const proxy = await startHostileRpc(node.rpcUrl, { kind: 'well-behaved' });
  const close = async () => {
    await proxy.close();
    await node.close();
    process.exit(0);
  };
  process.on('message', (m: { type?: string }) => {
    if (m.type === 'queries') process.send!({ queries: proxy.logQueries } satisfies BackfillNodeQueries);
    else if (m.type === 'close') void close();
  });
  process.on('disconnect', () => void close());
  process.send!({
    ready: {
      rpcUrl: node.rpcUrl,
      proxyUrl: proxy.url,
      accounts: node.accounts,
      privateKeys: node.privateKeys,
    },
  } satisfies BackfillNodeReady);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
