/**
 * Per-request overhead of the HTTP shell (profiling aid, not part of `bench:scale`): serves the
 * app on an empty in-memory PGlite and a bare Hono route, drives `/pricing` and the bare route
 * with the autocannon CLI (PROFILE_SECONDS each, 50 connections) and prints both rates. Run it
 * under `node --cpu-prof` to see where a cached answer's time goes.
 *
 *   node --import tsx bench/pricing-profile.ts
 */
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import type { AppContext } from '../src/doors/http/context.js';
import { startHttpServer } from '../src/server.js';
import { autocannonRps, silenceLogs, startBareHono } from './http-load.js';

const SECONDS = Number(process.env.PROFILE_SECONDS ?? 5);
const db = await openDatabase({ databaseUrl: null, dataDir: 'memory://' });
await migrate(db);
const config = {
  ...loadConfig({ INDEXER_PERIOD_SECONDS: '0' }),
  rateLimit: { rate: 1_000_000, burst: 1_000_000 },
};
const ctx: AppContext = { config, db, now: () => new Date() };
silenceLogs();
const server = await startHttpServer(ctx, { host: '127.0.0.1', port: 0 });
const bare = await startBareHono();
const rps = (url: string) => autocannonRps(url, { connections: 50, seconds: SECONDS });
const b = await rps(bare.url);
const p = await rps(`${server.url}/pricing`);
const h = await rps(`${server.url}/health`);
console.log(
  `bare ${Math.round(b)} req/s, /pricing ${Math.round(p)} (${((100 * p) / b).toFixed(0)} %), /health ${Math.round(h)} (${((100 * h) / p).toFixed(0)} % of /pricing)`,
);
await server.close();
await bare.close();
await db.close();
