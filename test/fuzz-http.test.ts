/**
 * Property-based fuzzer over every route and door (issue 11, point 7), against a real listening
 * server: bounded (FUZZ_RUNS, default 150 fetch requests + 60 raw request lines), seeded
 * (FUZZ_SEED replays a run; the seed is printed on failure). Every answer: no 5xx (except the
 * documented 503 facilitator_unavailable), `Api-Version` and `RateLimit-Policy` present, JSON
 * bodies parse, only documented statuses. The longer run is `npm run soak` (bench/soak.ts).
 */
import { createServer } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { brokenPromise, fuzzRequest, rawRequestLine, sendFetch, sendRaw } from './helpers/fuzz-requests.js';

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const RUNS = Number(process.env.FUZZ_RUNS ?? 150);

let t: TestDatabase;
let server: RunningServer;

/** A loopback port nobody listens on: the facilitator is unreachable (never the network). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

beforeAll(async () => {
  t = await openTestDatabase();
  const config = loadConfig({
    RATE_LIMIT_RPS: '100000',
    RATE_LIMIT_BURST: '100000',
    X402_FACILITATOR_URL: `http://127.0.0.1:${await deadPort()}/`,
    TREASURY_ADDRESS: '0x00000000000000000000000000000000000f00d5',
  });
  server = await startHttpServer(
    { config, db: t.db, now: () => new Date('2026-11-20T08:00:00Z') },
    { host: '127.0.0.1', port: 0 },
  );
}, 60_000);

afterAll(async () => {
  await server?.close();
  await t?.close();
});

async function check<T>(name: string, arb: fc.Arbitrary<T>, runs: number, run: (v: T) => Promise<void>) {
  try {
    await fc.assert(fc.asyncProperty(arb, run), { seed: SEED, numRuns: runs, endOnFailure: true });
  } catch (e) {
    console.error(`[fuzz] ${name} failed; replay with FUZZ_SEED=${SEED}`);
    throw e;
  }
}

describe(`fuzz every route and door (seed ${SEED})`, () => {
  it('every fetch answer keeps the contract', async () => {
    await check('fetch', fuzzRequest, RUNS, async (r) => {
      const a = await sendFetch(server.url, r);
      const broken = brokenPromise(a, r.method);
      expect(broken, `${r.method} ${r.path.slice(0, 300)} -> ${a.status} ${a.body.slice(0, 300)}`).toBeNull();
    });
  }, 300_000);

  it('every raw request line (bytes fetch cannot send) gets an answer in contract', async () => {
    await check('raw', rawRequestLine, Math.max(20, Math.round(RUNS / 2.5)), async (raw) => {
      const a = await sendRaw(server.url, raw);
      const broken = brokenPromise(
        a,
        raw.subarray(0, 5).toString('latin1').startsWith('HEAD') ? 'HEAD' : 'GET',
      );
      expect(
        broken,
        `${JSON.stringify(raw.subarray(0, 120).toString('latin1'))} -> ${a.status} ${a.body.slice(0, 200)}`,
      ).toBeNull();
    });
  }, 300_000);
});
