/**
 * Free-route benchmark: builds a synthetic index (bench/synthetic-index.ts) through the real
 * ingest, times the aggregate refresh, then serves it on loopback and drives each free route with
 * autocannon. Prints the refresh time and requests/second with latency percentiles per route.
 *
 *   npx tsx bench/http-free-routes.ts
 *   BENCH_EVENTS=1000000 BENCH_SECONDS=5 DATABASE_URL=postgres://… npx tsx bench/http-free-routes.ts
 */
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import { registerChains } from '../src/store/chain-state.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import { startHttpServer } from '../src/server.js';
import { batches, EVENTS, onEachDatabase } from './synthetic-index.js';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10);
const campaignOwner = `0x${(10_001).toString(16).padStart(40, '0')}`;

const ROUTES = [
  '/health',
  '/pricing',
  '/chains',
  '/chains/base?days=90',
  '/leaderboard',
  '/feed?limit=50',
  '/feed?network=base&limit=200',
  '/stats/facets',
  '/stats/types',
  '/stats/issuers',
  `/wallets/${campaignOwner}/chains`,
  `/wallets/${campaignOwner}/exists`,
  '/search/0',
  `/search/${campaignOwner}`,
];

async function run(label: string, db: Database): Promise<void> {
  // A huge budget: this measures the service, not the rate limiter.
  const config = {
    ...loadConfig({ INDEXER_PERIOD_SECONDS: '0' }),
    rateLimit: { rate: 1_000_000, burst: 1_000_000 },
  };
  await registerChains(db, config.chains);
  const t0 = performance.now();
  let ratings = 0;
  for (const b of batches()) {
    const c = await ingestBatch(db, b.events, {
      network: 'base',
      lastScannedBlock: b.to,
      headAtLastSync: b.to,
      caughtUp: true,
    });
    ratings += c.ratings;
  }
  const ingestS = (performance.now() - t0) / 1000;
  const r = await refreshAggregates(db);
  console.log(
    `\n${label}: ${EVENTS} events (${ratings} ratings) ingested in ${ingestS.toFixed(1)} s; ` +
      `aggregate refresh ${r.millis} ms (${r.wallets} scored wallets)`,
  );
  const server = await startHttpServer({ config, db, now: () => new Date() }, { host: '127.0.0.1', port: 0 });
  try {
    console.log(`route${' '.repeat(45)} req/s   p50 ms  p99 ms  non-2xx`);
    for (const path of ROUTES) {
      const res = await autocannon({
        url: `${server.url}${path}`,
        connections: CONNECTIONS,
        duration: SECONDS,
      });
      console.log(
        `${path.padEnd(50)} ${String(Math.round(res.requests.average)).padStart(6)} ` +
          `${String(res.latency.p50).padStart(8)} ${String(res.latency.p99).padStart(7)} ${String(res.non2xx).padStart(8)}`,
      );
    }
    console.log('(/wallets/{wallet}/exists has its own budget, 10/s burst 20: its non-2xx are those 429s.)');
  } finally {
    await server.close();
  }
}

await onEachDatabase(run);
