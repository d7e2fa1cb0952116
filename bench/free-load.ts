/**
 * `npm run bench:http-load`: a second process that loads the machine the way a public server is
 * loaded, for figures "under load" (issue 34): it serves the index of DATABASE_URL (its search_path
 * from the URL's `options`, or BENCH_LOAD_SCHEMA) on an ephemeral loopback port and drives its FREE
 * routes with autocannon (BENCH_LOAD_CONNECTIONS connections, default 10) until it is sent SIGTERM
 * or BENCH_LOAD_SECONDS pass (default: until SIGTERM). It prints `READY <url>` once serving and, at
 * the end, `LOAD {json}` (requests, req/s, non-2xx, seconds). `bench:scale` starts it with
 * BENCH_LOAD=1 around its paid rows.
 *
 *   BENCH_LOAD_SCHEMA=s5m DATABASE_URL=postgres://… npm run bench:http-load
 */
import autocannon from 'autocannon';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { startHttpServer } from '../src/server.js';
import { silenceLogs } from './http-load.js';

const CONNECTIONS = Number(process.env.BENCH_LOAD_CONNECTIONS ?? 10);
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 0);
const u = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
if (process.env.BENCH_LOAD_SCHEMA)
  u.searchParams.set('options', `-c search_path=${process.env.BENCH_LOAD_SCHEMA}`);
const owner = `0x${(10_001).toString(16).padStart(40, '0')}`;
/** The free routes a public server answers most (every one reads the index or its cache). */
const PATHS = [
  '/health',
  '/chains',
  '/leaderboard',
  '/feed?limit=50',
  '/stats/facets',
  `/wallets/${owner}/chains`,
  `/badge/${owner}.svg`,
  '/search/0',
];

silenceLogs();
const db = await openDatabase({ databaseUrl: u.toString(), dataDir: 'memory://' });
const config = { ...loadConfig({ INDEXER_PERIOD_SECONDS: '0' }), rateLimit: { rate: 1e9, burst: 1e9 } };
const server = await startHttpServer({ config, db, now: () => new Date() }, { host: '127.0.0.1', port: 0 });
const t0 = performance.now();
const instance = autocannon(
  {
    url: server.url,
    connections: CONNECTIONS,
    duration: SECONDS > 0 ? SECONDS : 24 * 3600,
    requests: PATHS.map((path) => ({ method: 'GET' as const, path })),
  },
  (err, r) => {
    if (err) throw err;
    void finish(r);
  },
);
console.log(`READY ${server.url} (${CONNECTIONS} connections over ${PATHS.length} free routes)`);

let done = false;
async function finish(r: autocannon.Result): Promise<void> {
  if (done) return;
  done = true;
  const seconds = (performance.now() - t0) / 1000;
  const requests = r.requests.total;
  console.log(
    `LOAD ${JSON.stringify({
      requests,
      rps: Math.round(requests / seconds),
      non2xx: r.non2xx,
      errors: r.errors,
      seconds: Math.round(seconds * 10) / 10,
    })}`,
  );
  await server.close();
  await db.close();
  process.exit(0);
}
process.on('SIGTERM', () => instance.stop());
