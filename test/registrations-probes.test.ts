/**
 * The probe schedule of the registration files' services in the database
 * (src/store/registrations.ts, src/liveness/prober.ts, src/registrations/worker.ts), on PGlite and
 * (with DATABASE_URL) PostgreSQL: an unchanged endpoint keeps its probe results; probes are
 * rate-limited per host across probers; a drain waits for each host's turn; the serve worker
 * probes at the per-host rate and stops at once, as does a drain asked to stop. The queue of the
 * files themselves is in test/registrations-queue.test.ts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainConfig } from '../src/chains.js';
import { loadConfig } from '../src/config.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import { drainProbes, proberOptions, runProbeRound, type ProberContext } from '../src/liveness/prober.js';
import { drainRegistrations } from '../src/registrations/fetcher.js';
import { readAgentRegistration } from '../src/read/registrations.js';
import { registerChains } from '../src/store/chain-state.js';
import { finishProbe, leaseProbes, nextProbeAllowedAt } from '../src/store/registrations.js';
import { startRegistrationWorker } from '../src/registrations/worker.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { openRegistrationDatabase, registrationQueueFixtures } from './helpers/registration-queue.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

let t: TestDatabase;
let chains: ChainConfig[];
let now = new Date();
let block = 100;
const { later, soon, answers, file, ctx, registered, ingest } = registrationQueueFixtures({
  db: () => t.db,
  chains: () => chains,
  now: () => now,
  block: () => block,
  takeBlock: () => block++,
});

beforeAll(async () => {
  ({ t, chains } = await openRegistrationDatabase());
});

afterAll(async () => {
  await t?.close();
});

describe('services and probes', () => {
  const probeCtx = (over: Partial<ProberContext> = {}): ProberContext => ({
    db: t.db,
    options: { ...proberOptions(loadConfig({})), hostIntervalSeconds: 60 },
    clock: () => now,
    scope: { network: 'base', agentIds: ['30'] },
    ...over,
  });
  const endpoints = async () =>
    (await readAgentRegistration(t.db, 'base', '30'))!.endpoints.map((e) => [
      e.url,
      e.liveness,
      e.tool_count,
      e.last_alive_at === null ? null : 'set',
    ]);

  it('one probe per host per interval, whichever prober; results kept while the endpoint stays; a new URL probed afresh', async () => {
    await ingest([registered('30', 'https://p.example/30.json')]);
    let services = [
      { name: 'MCP', endpoint: 'https://h1.example/mcp' },
      { name: 'web', endpoint: 'https://h1.example/' },
      { name: 'A2A', endpoint: 'https://h2.example/card.json' },
      { name: 'ENS', endpoint: 'thirty.eth' },
    ];
    answers.set('https://p.example/30.json', () => file({ services }));
    const scope = { network: 'base', agentIds: ['30'] };
    now = soon();
    await drainRegistrations(ctx({ scope }));
    // two probers at the same moment: each host once, to one of them
    const [p1, p2] = await Promise.all([
      leaseProbes(t.db, now, 10, 60, 120, scope),
      leaseProbes(t.db, now, 10, 60, 120, scope),
    ]);
    const hosts = [...p1, ...p2].map((j) => j.host).sort();
    expect(hosts).toEqual(['h1.example', 'h2.example']);
    for (const j of [...p1, ...p2])
      await finishProbe(
        t.db,
        j,
        now,
        { alive: true, reason: null, toolCount: 3, skillCount: null, latencyMs: 5 },
        3600,
      );
    // h1's second endpoint waits for the host's interval
    expect(await leaseProbes(t.db, later(30), 10, 60, 120, scope)).toEqual([]);
    expect((await nextProbeAllowedAt(t.db, later(30), scope))?.getTime()).toBe(later(60).getTime());
    const second = await leaseProbes(t.db, later(61), 10, 60, 120, scope);
    expect(second.map((j) => j.url)).toEqual([
      p1.concat(p2).some((j) => j.url === 'https://h1.example/mcp')
        ? 'https://h1.example/'
        : 'https://h1.example/mcp',
    ]);
    await finishProbe(
      t.db,
      second[0]!,
      later(61),
      { alive: false, reason: 'http_404', toolCount: null, skillCount: null, latencyMs: 5 },
      3600,
    );
    // nothing due until the re-probe; the ENS name is never probed
    expect(await leaseProbes(t.db, later(120), 10, 60, 120, scope)).toEqual([]);
    const before = await endpoints();
    expect(before.filter((e) => e[1] === 'alive')).toHaveLength(2);
    expect(before.find((e) => e[0] === 'thirty.eth')).toEqual(['thirty.eth', null, null, null]);
    // the file read again, unchanged: the results stay
    now = later(3700);
    await drainRegistrations(ctx({ scope }));
    expect(await endpoints()).toEqual(before);
    // a new URL at a position: its results are gone, and it is due now
    services = [{ ...services[0]!, endpoint: 'https://h3.example/mcp' }, ...services.slice(1)];
    now = later(3700);
    await drainRegistrations(ctx({ scope }));
    const after = await endpoints();
    expect(after[0]).toEqual(['https://h3.example/mcp', null, null, null]);
    expect(after.slice(1)).toEqual(before.slice(1));
    // a probe finishing for an endpoint the file no longer names writes nothing
    expect(
      await finishProbe(
        t.db,
        { network: 'base', agent_id: '30', position: 0, url: 'https://h1.example/mcp' },
        now,
        {
          alive: true,
          reason: null,
          toolCount: 1,
          skillCount: null,
          latencyMs: 1,
        },
        3600,
      ),
    ).toBe(false);
  });

  it("a drain waits for each host's turn: two endpoints of one host are probed an interval apart", async () => {
    const seen: { url: string; at: number }[] = [];
    await ingest([registered('31', 'https://p.example/31.json')]);
    answers.set('https://p.example/31.json', () =>
      file({
        services: [
          { name: 'web', endpoint: 'https://one.example/a' },
          { name: 'web', endpoint: 'https://one.example/b' },
        ],
      }),
    );
    const scope = { network: 'base', agentIds: ['31'] };
    await drainRegistrations(ctx({ scope, clock: () => new Date() }));
    const probe = async (_k: string, url: string) => {
      seen.push({ url, at: Date.now() });
      return { alive: true, reason: null, toolCount: null, skillCount: null, latencyMs: 1 };
    };
    const r = await drainProbes(
      probeCtx({
        scope,
        clock: () => new Date(),
        options: { ...probeCtx().options, hostIntervalSeconds: 1 },
        probe,
      }),
      10_000,
    );
    expect(r).toEqual({ probed: 2, alive: 2, dead: 0 });
    expect(seen.map((s) => s.url).sort()).toEqual(['https://one.example/a', 'https://one.example/b']);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(900);
    // everything probed: nothing due until the re-probe
    expect(await runProbeRound(probeCtx({ scope, clock: () => new Date(), probe }))).toEqual({
      probed: 0,
      alive: 0,
      dead: 0,
    });
  });
});

describe('the worker of serve', () => {
  it('probes at the per-host rate and stops at once when asked, mid-wait', async () => {
    const own = await openTestDatabase();
    try {
      await registerChains(own.db, chains);
      // a port where nothing listens: each probe is refused at once (127.0.0.1 allowed by configuration)
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((r) => closed.close(() => r()));
      await ingestBatch(own.db, [registered('60', 'https://w.example/60.json')], {
        network: 'base',
        lastScannedBlock: null,
        headAtLastSync: block,
        caughtUp: false,
      });
      await drainRegistrations({
        ...ctx({ clock: () => new Date() }),
        db: own.db,
        fetch: async () =>
          file({
            services: [
              { name: 'web', endpoint: `http://127.0.0.1:${port}/a` },
              { name: 'web', endpoint: `http://127.0.0.1:${port}/b` },
            ],
          }),
      });
      const config = {
        ...loadConfig({
          FEEDBACK_ALLOW_PRIVATE: '1',
          REGISTRATION_FETCH: '0',
          LIVENESS_HOST_INTERVAL_SECONDS: '30',
          REGISTRATION_FETCH_PERIOD_SECONDS: '60',
        }),
        chains,
      };
      const worker = startRegistrationWorker(own.db, config)!;
      const probed = async () =>
        (
          await own.db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM agent_endpoints WHERE agent_id = '60' AND liveness IS NOT NULL`,
          )
        )[0]!.n;
      for (let i = 0; i < 400 && (await probed()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(await probed()).toBe(1); // the second waits for the host's turn (30 s)
      const t0 = Date.now();
      await worker.stop();
      expect(Date.now() - t0).toBeLessThan(3_000);
      expect(await probed()).toBe(1);
      const [dead] = await own.db.query<any>(
        `SELECT liveness, liveness_reason FROM agent_endpoints WHERE agent_id = '60' AND liveness IS NOT NULL`,
      );
      expect(dead).toEqual({ liveness: 'dead', liveness_reason: 'connect_failed' });
    } finally {
      await own.close();
    }
  });
});

describe('a probe drain asked to stop', () => {
  it("does not wait for a host's turn when the stop comes between two rounds", async () => {
    await ingest([registered('61', 'https://s.example/61.json')]);
    answers.set('https://s.example/61.json', () =>
      file({
        services: [
          { name: 'web', endpoint: 'https://s61.example/a' },
          { name: 'web', endpoint: 'https://s61.example/b' },
        ],
      }),
    );
    const scope = { network: 'base', agentIds: ['61'] };
    await drainRegistrations(ctx({ scope, clock: () => new Date() }));
    const stop = new AbortController();
    // the stop arrives while the drain asks when the resting host's turn comes (after its check)
    const db = {
      ...t.db,
      query: (sql: string, params?: readonly unknown[], o?: any) => {
        if (sql.includes('min(lh.next_allowed_at)')) stop.abort();
        return t.db.query(sql, params as unknown[], o);
      },
    } as typeof t.db;
    const probe = async () => ({
      alive: true,
      reason: null,
      toolCount: null,
      skillCount: null,
      latencyMs: 1,
    });
    const t0 = Date.now();
    const r = await drainProbes(
      {
        db,
        options: { ...proberOptions(loadConfig({})), hostIntervalSeconds: 30 },
        clock: () => new Date(),
        scope,
        probe,
      },
      60_000,
      stop.signal,
    );
    expect(r.probed).toBe(1);
    expect(Date.now() - t0).toBeLessThan(3_000);
  });
});
