/**
 * Per-request overhead of the HTTP shell (profiling aid, not part of `bench:scale`): serves the
 * app on an empty in-memory PGlite and a bare Hono route, drives `/pricing` and the bare route
 * with the autocannon CLI (PROFILE_SECONDS each, 50 connections) and prints both rates. Run it
 * under `node --cpu-prof` to see where a cached answer's time goes.
 *
 *   node --import tsx bench/pricing-profile.ts
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import pino from 'pino';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import type { AppContext } from '../src/doors/http/context.js';
import { configureLogging } from '../src/log.js';
import { startHttpServer } from '../src/server.js';

const run$ = promisify(execFile);
const SECONDS = Number(process.env.PROFILE_SECONDS ?? 5);
const db = await openDatabase({ databaseUrl: null, dataDir: 'memory://' });
await migrate(db);
const config = {
  ...loadConfig({ INDEXER_PERIOD_SECONDS: '0' }),
  rateLimit: { rate: 1_000_000, burst: 1_000_000 },
};
const ctx: AppContext = { config, db, now: () => new Date() };
configureLogging({
  level: 'info',
  pretty: false,
  destination: pino.destination({ dest: '/dev/null', sync: false }),
});
const server = await startHttpServer(ctx, { host: '127.0.0.1', port: 0 });
const bare = new Hono();
bare.get('/', (c) => c.json({ ok: true }));
const bareServer = await new Promise<ReturnType<typeof serve>>((resolve) => {
  const s = serve({ fetch: bare.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
});
const rps = async (url: string) => {
  for (let k = 0; k < 300; k++) await (await fetch(url)).arrayBuffer();
  const { stdout } = await run$(join(process.cwd(), 'node_modules', '.bin', 'autocannon'), [
    '-j',
    '-c',
    '50',
    '-d',
    String(SECONDS),
    url,
  ]);
  return (JSON.parse(stdout) as { requests: { average: number } }).requests.average;
};
const b = await rps(`http://127.0.0.1:${(bareServer.address() as { port: number }).port}/`);
const p = await rps(`${server.url}/pricing`);
const h = await rps(`${server.url}/health`);
console.log(
  `bare ${Math.round(b)} req/s, /pricing ${Math.round(p)} (${((100 * p) / b).toFixed(0)} %), /health ${Math.round(h)} (${((100 * h) / p).toFixed(0)} % of /pricing)`,
);
await server.close();
bareServer.close();
await db.close();
