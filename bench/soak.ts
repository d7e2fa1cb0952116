/**
 * `npm run soak`: a longer fuzz plus a soak against a real `repindex serve` child process on
 * loopback (never the network: no chain is indexed, the facilitator is a dead loopback port).
 * Bounded in time and count. Asserts, and prints the figures of:
 *
 *  1. fuzz: SOAK_FUZZ_RUNS fetch requests over every route and door (and a third as many raw
 *     request lines), each from its own client address: 0 broken promises (no 5xx, Api-Version
 *     and RateLimit-Policy on every answer, JSON parses, documented statuses only);
 *  2. rate limit: 200 connections hammer /health as ONE client for SOAK_LIMIT_SECONDS, while the
 *     same client also sends MCP messages calling 8 routes each: the 200s stay within
 *     burst + rate × elapsed (the default budget, 50/s burst 40), and MCP work counts against it;
 *  3. soak: SOAK_SECONDS of mixed load from 50 clients: 0 5xx, RSS sampled every 2 s, the growth
 *     from the first sample after warm-up to the last within 64 MB.
 *
 *   npm run soak
 *   SOAK_SECONDS=180 SOAK_FUZZ_RUNS=20000 npm run soak
 *   FUZZ_SEED=123 npm run soak       (replays the fuzz of a printed seed)
 */
import autocannon from 'autocannon';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import {
  brokenPromise,
  fuzzRequest,
  rawRequestLine,
  sendFetch,
  sendRaw,
} from '../test/helpers/fuzz-requests.js';
import { startServeProcess } from '../test/helpers/serve-process.js';

const SOAK_SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const LIMIT_SECONDS = Number(process.env.SOAK_LIMIT_SECONDS ?? 15);
const FUZZ_RUNS = Number(process.env.SOAK_FUZZ_RUNS ?? 3000);
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Date.now() % 2 ** 31;
const RATE = 50;
const BURST = 40;
const RSS_BUDGET_MB = 64;

const failures: string[] = [];

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function startServer() {
  const deadFacilitator = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'repindex-soak-'));
  // A user's `serve` (V8's defaults, not the suite's short-lived flags), on a free port.
  const serve = await startServeProcess({
    name: 'soak',
    shortLived: false,
    env: {
      DATA_DIR: dataDir,
      HOST: '127.0.0.1',
      TRUST_PROXY: 'true',
      RATE_LIMIT_RPS: String(RATE),
      RATE_LIMIT_BURST: String(BURST),
      X402_FACILITATOR_URL: `http://127.0.0.1:${deadFacilitator}/`,
      TREASURY_ADDRESS: '0x00000000000000000000000000000000000f00d5',
    },
  }).catch((e: unknown) => {
    rmSync(dataDir, { recursive: true, force: true });
    throw e;
  });
  return {
    url: serve.url,
    pid: serve.child.pid!,
    stderr: () => serve.out(),
    async stop() {
      await serve.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

type Server = Awaited<ReturnType<typeof startServer>>;

async function fuzzPhase(s: Server) {
  const t0 = Date.now();
  const statuses = new Map<number, number>();
  let n = 0;
  const note = (st: number) => statuses.set(st, (statuses.get(st) ?? 0) + 1);
  const run = async <T>(name: string, arb: fc.Arbitrary<T>, runs: number, one: (v: T) => Promise<void>) => {
    try {
      await fc.assert(fc.asyncProperty(arb, one), { seed: SEED, numRuns: runs, endOnFailure: true });
    } catch (e) {
      failures.push(
        `fuzz ${name} (replay with FUZZ_SEED=${SEED}): ${(e as Error).message.split('\n').slice(0, 6).join(' | ')}`,
      );
    }
  };
  await run('fetch', fuzzRequest, FUZZ_RUNS, async (r) => {
    const a = await sendFetch(s.url, r, `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n++ & 255}`);
    note(a.status);
    const broken = brokenPromise(a, r.method);
    if (broken) throw new Error(`${r.method} ${r.path.slice(0, 200)}: ${broken}`);
  });
  await run('raw', rawRequestLine, Math.round(FUZZ_RUNS / 3), async (raw) => {
    const a = await sendRaw(s.url, raw);
    note(a.status);
    const broken = brokenPromise(a, 'GET');
    if (broken) throw new Error(`${JSON.stringify(raw.subarray(0, 80).toString('latin1'))}: ${broken}`);
  });
  const total = [...statuses.values()].reduce((a, b) => a + b, 0);
  const fivexx = [...statuses].filter(([st]) => st >= 500 && st !== 503).reduce((a, [, c]) => a + c, 0);
  console.log(
    `fuzz:       seed ${SEED}, ${total} requests in ${((Date.now() - t0) / 1000).toFixed(1)} s, 5xx: ${fivexx}, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort((a, b) => a[0] - b[0])))}`,
  );
}

async function limitPhase(s: Server) {
  const client = '203.0.113.77';
  await new Promise((r) => setTimeout(r, 1_500)); // a full bucket
  const t0 = Date.now();
  // The same client also sends MCP messages (8 in-process calls each) during the load.
  let rotate = 0;
  let mcpSent = 0;
  let mcpOk = 0;
  const stopAt = t0 + LIMIT_SECONDS * 1000;
  const mcpLoop = (async () => {
    while (Date.now() < stopAt) {
      const res = await fetch(`${s.url}/mcp`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'x-forwarded-for': client,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'rep_pricing', arguments: {} },
        }),
      });
      mcpSent++;
      if (res.status === 200) mcpOk++;
      if (res.status >= 500) failures.push(`limit: /mcp answered ${res.status}`);
      await res.body?.cancel();
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  const res = await autocannon({
    url: `${s.url}/health`,
    connections: 200,
    duration: LIMIT_SECONDS,
    // The leftmost (client-written) entry rotates on every request: it must not buy a new bucket.
    requests: [
      {
        setupRequest: (req) => ({
          ...req,
          headers: { 'x-forwarded-for': `198.51.100.${rotate++ % 250}, ${client}` },
        }),
      },
    ],
  });
  await mcpLoop;
  const elapsed = (Date.now() - t0) / 1000;
  const ok = res['2xx'];
  // Every 200 /health, every POST /mcp that got in and every route call behind it share one bucket.
  const ceiling = Math.ceil(BURST + RATE * elapsed);
  const spentByMcp = mcpOk; // each admitted POST cost at least one token
  console.log(
    `rate limit: ${res.requests.total} /health requests from one client over 200 connections in ${elapsed.toFixed(1)} s: ` +
      `${ok} × 200 (+ ${mcpOk}/${mcpSent} MCP POSTs admitted) against a ceiling of ${ceiling}; 5xx: ${res['5xx']}; p50 ${res.latency.p50} ms, p99 ${res.latency.p99} ms`,
  );
  if (ok + spentByMcp > ceiling)
    failures.push(`rate limit: ${ok} + ${spentByMcp} admitted > ceiling ${ceiling}`);
  if (res['5xx'] > 0) failures.push(`rate limit: ${res['5xx']} 5xx`);
}

async function soakPhase(s: Server) {
  const paths = [
    '/health',
    '/pricing',
    '/chains',
    '/feed',
    '/leaderboard',
    '/stats/facets',
    '/search/1',
    '/wallets/0x00000000000000000000000000000000000000b0/chains',
    '/badge/0x00000000000000000000000000000000000000b0.svg',
    '/reputation/wallet/0x00000000000000000000000000000000000000b0',
    '/manifesto',
    '/openapi.json',
  ];
  const samples: number[] = [];
  const sampler = setInterval(() => samples.push(rssMb(s.pid)), 2_000);
  const t0 = Date.now();
  let i = 0;
  const res = await autocannon({
    url: s.url,
    connections: 50,
    duration: SOAK_SECONDS,
    requests: [
      {
        setupRequest: (req) => {
          const n = i++;
          return {
            ...req,
            path: paths[n % paths.length]!,
            headers: { 'x-forwarded-for': `10.9.0.${n % 50}` },
          };
        },
      },
    ],
  });
  clearInterval(sampler);
  samples.push(rssMb(s.pid));
  const warm = samples[Math.min(2, samples.length - 1)]!;
  const last = samples[samples.length - 1]!;
  const peak = Math.max(...samples);
  console.log(
    `soak:       ${res.requests.total} requests in ${((Date.now() - t0) / 1000).toFixed(1)} s from 50 clients (${Math.round(res.requests.average)}/s): ` +
      `2xx ${res['2xx']}, 4xx ${res['4xx']}, 5xx ${res['5xx']}, errors ${res.errors}, timeouts ${res.timeouts}; p50 ${res.latency.p50} ms, p99 ${res.latency.p99} ms`,
  );
  console.log(
    `RSS:        after warm-up ${warm.toFixed(1)} MB, end ${last.toFixed(1)} MB, peak ${peak.toFixed(1)} MB (${samples.length} samples)`,
  );
  if (res['5xx'] > 0) failures.push(`soak: ${res['5xx']} 5xx`);
  if (last - warm > RSS_BUDGET_MB)
    failures.push(`soak: RSS grew ${(last - warm).toFixed(1)} MB (> ${RSS_BUDGET_MB} MB)`);
}

const server = await startServer();
try {
  console.log(`repindex soak on ${server.url} (pid ${server.pid}); budget ${RATE}/s burst ${BURST}`);
  await fuzzPhase(server);
  await limitPhase(server);
  await soakPhase(server);
  if (/\[http\].*failed/.test(server.stderr()))
    failures.push(`server logged handler failures:\n${server.stderr().slice(0, 2000)}`);
} finally {
  await server.stop();
}
if (failures.length) {
  console.error(`SOAK FAILED:\n- ${failures.join('\n- ')}`);
  process.exit(1);
}
console.log('soak ok: rate limit held, RSS flat, 0 5xx');
