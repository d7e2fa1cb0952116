/**
 * The `free` section of the scale benchmark: free routes vs /pricing vs a bare Hono route, served
 * on loopback by this process and driven by the autocannon CLI in a child process
 * (BENCH_CONNECTIONS, BENCH_SECONDS per route), with the access log on (written to /dev/null).
 */
import type { AppContext } from '../../src/doors/http/context.js';
import { configureLogging } from '../../src/log.js';
import { startHttpServer } from '../../src/server.js';
import { autocannonRps, silenceLogs, startBareHono } from '../http-load.js';
import { BIG, CONNECTIONS, SECONDS } from './options.js';

/** Requests per second of `url` at this benchmark's load (BENCH_CONNECTIONS, BENCH_SECONDS). */
const rpsAt = (url: string) => autocannonRps(url, { connections: CONNECTIONS, seconds: SECONDS });

/**
 * Prints one row per route; returns the slowest free route over /pricing and /pricing over the
 * bare Hono route (3 decimals each).
 */
export async function freeRoutes(ctx: AppContext): Promise<{ freeMin: number; pricingVsBare: number }> {
  console.log(
    `\nfree routes vs /pricing vs a bare Hono route (autocannon CLI, ${CONNECTIONS} conns, ${SECONDS} s each)`,
  );
  silenceLogs();
  const server = await startHttpServer(ctx, { host: '127.0.0.1', port: 0 });
  const bare = await startBareHono();
  const free: Record<string, number> = {};
  let pricing = 0;
  let bareRps = 0;
  try {
    bareRps = await rpsAt(bare.url);
    console.log(`  ${'bare Hono route'.padEnd(44)} ${Math.round(bareRps)} req/s`);
    pricing = await rpsAt(`${server.url}/pricing`);
    console.log(
      `  ${'/pricing'.padEnd(44)} ${Math.round(pricing)} req/s  (${((100 * pricing) / bareRps).toFixed(0)} % of bare Hono)`,
    );
    // The same comparison with the body held equal: a bare Hono route sending /pricing's own bytes.
    const pricingBody = await (await fetch(`${server.url}/pricing`)).text();
    const bareSame = await startBareHono(pricingBody);
    try {
      const sameRps = await rpsAt(bareSame.url);
      console.log(
        `  ${`bare Hono, /pricing's ${pricingBody.length}-byte body`.padEnd(44)} ${Math.round(sameRps)} req/s  ` +
          `(/pricing = ${((100 * pricing) / sameRps).toFixed(0)} % of it: the shell's own cost)`,
      );
    } finally {
      await bareSame.close();
    }
    for (const path of [
      '/leaderboard',
      '/chains',
      '/health',
      `/wallets/${BIG}/chains`,
      `/badge/${BIG}.svg`,
      '/search/0',
    ]) {
      free[path] = await rpsAt(`${server.url}${path}`);
      console.log(
        `  ${path.padEnd(44)} ${Math.round(free[path]!)} req/s  (${((100 * free[path]!) / pricing).toFixed(0)} % of /pricing)`,
      );
    }
  } finally {
    await server.close();
    await bare.close();
    configureLogging({ level: 'warn' });
  }
  return {
    freeMin: Math.round((Math.min(...Object.values(free)) / pricing) * 1000) / 1000,
    pricingVsBare: Math.round((pricing / bareRps) * 1000) / 1000,
  };
}
