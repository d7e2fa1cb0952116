/**
 * The registration-file queue and the probe schedule in the database (src/store/registrations.ts,
 * src/registrations/fetcher.ts, src/liveness/prober.ts), on PGlite and (with DATABASE_URL)
 * PostgreSQL: the ingest keeps one job per agent with an agentURI (a replayed batch changes
 * nothing; a URIUpdated queues the file afresh; an empty URI drops it; a rollback deletes what was
 * set above the ancestor); leases never give one job to two owners; retries back off, then the
 * file is unreachable, and a failed re-check keeps what was read; other bytes are `changed` and stay
 * so; an ipfs file waits for a gateway; an unchanged endpoint keeps its probe results; probes are
 * rate-limited per host across probers; hostile files over the network (a redirect to a refused
 * address, too large, too deep, HTML, markup in the name).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainConfig } from '../src/chains.js';
import { loadConfig } from '../src/config.js';
import type { FetchLimits, FetchResult } from '../src/documents/safe-fetch.js';
import type { IndexEvent } from '../src/index-events.js';
import { ingestBatch } from '../src/indexer/ingest.js';
import { drainProbes, proberOptions, runProbeRound, type ProberContext } from '../src/liveness/prober.js';
import {
  drainRegistrations,
  registrationOptions,
  runRegistrationRound,
  type RegistrationContext,
} from '../src/registrations/fetcher.js';
import { REGISTRATION_TYPE } from '../src/registrations/parse.js';
import { readAgentRegistration } from '../src/read/registrations.js';
import { registerChains } from '../src/store/chain-state.js';
import {
  finishProbe,
  finishRegistration,
  leaseProbes,
  leaseRegistrations,
  nextProbeAllowedAt,
} from '../src/store/registrations.js';
import { rollbackAbove } from '../src/store/rollback.js';
import { startRegistrationWorker } from '../src/registrations/worker.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const REGISTRY = '0x8004a169fb4a3325136eb29fa0ceb6d2e539a432';
let t: TestDatabase;
let chains: ChainConfig[];
let server: Server;
let base: string;
let now = new Date();
const later = (seconds: number) => new Date(now.getTime() + seconds * 1000);
/** A moment just after the database's now() (jobs the ingest queues are due from then). */
const soon = () => new Date(Date.now() + 5000);

/** uri → what the fake fetch answers (a function: it may change between calls). */
const answers = new Map<string, () => FetchResult>();
const fetched: string[] = [];
const fakeFetch = async (uri: string): Promise<FetchResult> => {
  fetched.push(uri);
  const a = answers.get(uri);
  return a ? a() : { ok: false, code: 'http_error', retryable: false, detail: 'HTTP 404' };
};
const file = (over: Record<string, unknown>): FetchResult => ({
  ok: true,
  bytes: new TextEncoder().encode(
    JSON.stringify({ type: REGISTRATION_TYPE, name: 'agent', registrations: [], ...over }),
  ),
  contentType: 'application/json',
  finalUrl: 'x',
});

function ctx(over: Partial<RegistrationContext> = {}): RegistrationContext {
  const options = registrationOptions(loadConfig({}));
  options.maxAttempts = 3;
  options.retryBaseSeconds = 60;
  options.recheckSeconds = 3600;
  return { db: t.db, options, chains, clock: () => now, fetch: fakeFetch, ...over };
}

let block = 100;
const at = () => ({
  network: 'base',
  txHash: `0x${(block++).toString(16)}`,
  logIndex: 0,
  blockNumber: block,
  blockTime: null,
});
const registered = (agentId: string, uri: string): IndexEvent => ({
  ...at(),
  kind: 'registered',
  agentId,
  agentUri: uri,
  minter: '0x00000000000000000000000000000000000000aa',
});
const uriUpdated = (agentId: string, uri: string, blockNumber?: number): IndexEvent => ({
  ...at(),
  ...(blockNumber === undefined ? {} : { blockNumber }),
  kind: 'uri',
  agentId,
  uri,
  updatedBy: '0x00000000000000000000000000000000000000aa',
});
const ingest = (events: IndexEvent[]) =>
  ingestBatch(t.db, events, {
    network: 'base',
    lastScannedBlock: null,
    headAtLastSync: block,
    caughtUp: false,
  });

async function row(agentId: string) {
  const [r] = await t.db.query<any>(
    `SELECT uri, state, attempts, reason, file_state, name, first_keccak256, changed_at, next_try_at
       FROM agent_registrations WHERE network = 'base' AND agent_id = $1`,
    [agentId],
  );
  return r ?? null;
}

beforeAll(async () => {
  t = await openTestDatabase();
  chains = loadConfig({}).chains.map((c) =>
    c.network === 'base' ? { ...c, chainId: 8453, identityRegistry: REGISTRY } : c,
  );
  await registerChains(t.db, chains);
  server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    const json = (body: string) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    };
    switch (u.pathname) {
      case '/redirect-private':
        res.writeHead(302, { location: 'http://127.0.0.2/agent.json' });
        res.end();
        return;
      case '/huge':
        json(JSON.stringify({ type: REGISTRATION_TYPE, name: 'x', description: 'd'.repeat(400 * 1024) }));
        return;
      case '/deep':
        json(`{"type":"${REGISTRATION_TYPE}","name":${'['.repeat(60_000)}${']'.repeat(60_000)}}`);
        return;
      case '/html':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<html><script>alert(1)</script></html>');
        return;
      case '/script-name':
        json(
          JSON.stringify({
            type: REGISTRATION_TYPE,
            name: '<script>alert(1)</script>',
            services: [{ name: 'MCP', endpoint: 'https://169.254.169.254/mcp' }],
          }),
        );
        return;
      default:
        res.writeHead(404);
        res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise<void>((r) => server?.close(() => r()));
  await t?.close();
});

describe('the ingest keeps one fetch job per agent with an agentURI', () => {
  it('queues, ignores a replay, re-queues on URIUpdated (same URI too), drops an empty URI, keeps order', async () => {
    const batch = [
      registered('1', 'https://a.example/1.json'),
      registered('2', ''),
      registered('3', 'data:,x'),
    ];
    await ingest(batch);
    expect(await row('1')).toMatchObject({
      uri: 'https://a.example/1.json',
      state: 'queued',
      file_state: null,
    });
    expect(await row('2')).toBeNull();
    answers.set('https://a.example/1.json', () => file({ name: 'one' }));
    now = soon();
    await drainRegistrations(ctx({ scope: { network: 'base', agentIds: ['1'] }, clock: soon }));
    const read = await row('1');
    expect(read).toMatchObject({ state: 'succeeded', file_state: 'valid', name: 'one', attempts: 0 });
    // the same batch again (a restart re-reads it): nothing moves
    await ingest(batch);
    expect(await row('1')).toEqual(read);
    // a new URI: queued afresh, what the old file said is forgotten
    await ingest([uriUpdated('1', 'https://a.example/1b.json')]);
    expect(await row('1')).toMatchObject({
      uri: 'https://a.example/1b.json',
      state: 'queued',
      file_state: null,
      name: null,
      first_keccak256: null,
    });
    answers.set('https://a.example/1b.json', () => file({ name: 'one b' }));
    await drainRegistrations(ctx({ scope: { network: 'base', agentIds: ['1'] }, clock: soon }));
    expect(await row('1')).toMatchObject({ file_state: 'valid', name: 'one b' });
    // the same URI set again by a later event: the owner says the file changed; fetched again now
    await ingest([uriUpdated('1', 'https://a.example/1b.json')]);
    expect(await row('1')).toMatchObject({ state: 'queued', file_state: null });
    // an event older than the URI in force changes nothing
    await drainRegistrations(ctx({ scope: { network: 'base', agentIds: ['1'] }, clock: soon }));
    await ingest([uriUpdated('1', 'https://a.example/old.json', 50)]);
    expect(await row('1')).toMatchObject({ uri: 'https://a.example/1b.json', file_state: 'valid' });
    // an empty URI: no file any more
    await ingest([uriUpdated('3', '')]);
    expect(await row('3')).toBeNull();
  });

  it('a rollback deletes the files of URIs set above the ancestor (their endpoints with them)', async () => {
    await ingest([registered('40', 'https://r.example/40.json')]);
    const ancestor = block;
    await ingest([
      registered('41', 'https://r.example/41.json'),
      uriUpdated('40', 'https://r.example/40b.json'),
    ]);
    answers.set('https://r.example/41.json', () =>
      file({ services: [{ name: 'web', endpoint: 'https://r.example/' }] }),
    );
    await drainRegistrations(ctx({ scope: { network: 'base', agentIds: ['41'] }, clock: soon }));
    const [{ n }] = (await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM agent_endpoints WHERE network = 'base' AND agent_id = '41'`,
    )) as [{ n: number }];
    expect(n).toBe(1);
    await t.db.transaction((tx) => rollbackAbove(tx, 'base', ancestor));
    expect(await row('41')).toBeNull();
    expect(await row('40')).toBeNull(); // its URI was set above the ancestor: gone until the rescan
    const [{ m }] = (await t.db.query<{ m: number }>(
      `SELECT count(*)::int AS m FROM agent_endpoints WHERE network = 'base' AND agent_id = '41'`,
    )) as [{ m: number }];
    expect(m).toBe(0);
  });
});

describe('fetch outcomes', () => {
  it('retries with backoff, then unreachable; a failed re-check keeps what was read', async () => {
    await ingest([registered('10', 'https://flaky.example/10.json')]);
    let up = false;
    answers.set('https://flaky.example/10.json', () =>
      up ? file({ name: 'ten' }) : { ok: false, code: 'timeout', retryable: true },
    );
    const scope = { network: 'base', agentIds: ['10'] };
    now = soon();
    const r1 = await runRegistrationRound(ctx({ scope }));
    expect(r1).toMatchObject({ leased: 1, retried: 1 });
    const first = await row('10');
    expect(first).toMatchObject({ state: 'retry', attempts: 1, reason: 'timeout', file_state: null });
    expect(new Date(first.next_try_at).getTime()).toBe(later(60).getTime());
    // not due before its backoff
    expect((await runRegistrationRound(ctx({ scope }))).leased).toBe(0);
    now = later(61);
    await runRegistrationRound(ctx({ scope }));
    expect(await row('10')).toMatchObject({ state: 'retry', attempts: 2 });
    now = later(121);
    await runRegistrationRound(ctx({ scope }));
    // the third attempt was the last: unreachable, fetched again at the re-check
    expect(await row('10')).toMatchObject({ state: 'failed', file_state: 'unreachable', attempts: 0 });
    up = true;
    now = later(3601);
    await runRegistrationRound(ctx({ scope }));
    expect(await row('10')).toMatchObject({ state: 'succeeded', file_state: 'valid', name: 'ten' });
    // the re-check cannot fetch any more: unreachable after the retries, the name it read is kept
    up = false;
    for (let i = 0; i < 3; i++) {
      now = later(3601 * 2);
      await runRegistrationRound(ctx({ scope }));
    }
    expect(await row('10')).toMatchObject({ file_state: 'unreachable', name: 'ten' });
    const served = await readAgentRegistration(t.db, 'base', '10');
    expect(served?.fetched_at).not.toBeNull();
  });

  it('other bytes than the first are changed, and stay changed; invalid wins over changed', async () => {
    await ingest([registered('11', 'https://c.example/11.json')]);
    let version = 1;
    answers.set('https://c.example/11.json', () =>
      version === 3 ? file({ name: '' }) : file({ name: `v${version}` }),
    );
    const scope = { network: 'base', agentIds: ['11'] };
    now = soon();
    await runRegistrationRound(ctx({ scope }));
    expect(await row('11')).toMatchObject({ file_state: 'valid', changed_at: null });
    version = 2;
    now = later(3601);
    await runRegistrationRound(ctx({ scope }));
    const changed = await row('11');
    expect(changed).toMatchObject({ file_state: 'changed', name: 'v2' });
    expect(changed.changed_at).not.toBeNull();
    now = later(3601 * 2);
    await runRegistrationRound(ctx({ scope }));
    expect(await row('11')).toMatchObject({ file_state: 'changed', name: 'v2' });
    version = 3;
    now = later(3601 * 3);
    await runRegistrationRound(ctx({ scope }));
    expect(await row('11')).toMatchObject({ file_state: 'invalid' });
  });

  it('an ipfs file waits for a gateway (pending, the wait is no attempt)', async () => {
    await ingest([registered('12', 'ipfs://bafyregistration/agent.json')]);
    const c = ctx({ scope: { network: 'base', agentIds: ['12'] }, fetch: undefined });
    now = soon();
    expect(await runRegistrationRound(c)).toMatchObject({ leased: 1, waiting: 1 });
    expect(await row('12')).toMatchObject({
      state: 'queued',
      reason: 'no_ipfs_gateway',
      attempts: 0,
      file_state: null,
    });
  });

  it('two owners never hold one job; an expired lease is taken again and the late owner cannot finish', async () => {
    await ingest([
      registered('20', 'https://l.example/20.json'),
      registered('21', 'https://l.example/21.json'),
    ]);
    const scope = { network: 'base', agentIds: ['20', '21'] };
    now = soon();
    const [a, b] = await Promise.all([
      leaseRegistrations(t.db, 'A', now, 1, 60, scope),
      leaseRegistrations(t.db, 'B', now, 1, 60, scope),
    ]);
    expect(a).toHaveLength(1);
    expect(b).toHaveLength(1);
    expect(a[0]!.agent_id).not.toBe(b[0]!.agent_id);
    expect(await leaseRegistrations(t.db, 'C', now, 5, 60, scope)).toEqual([]);
    const taken = await leaseRegistrations(t.db, 'C', later(61), 5, 60, scope);
    expect(taken.map((j) => j.agent_id).sort()).toEqual(['20', '21']);
    const outcome = {
      state: 'failed' as const,
      nextTryAt: later(61),
      reason: 'x',
      fileState: 'unreachable' as const,
    };
    expect(await finishRegistration(t.db, a[0]!, 'A', later(62), outcome)).toBe(false);
    expect(await finishRegistration(t.db, a[0]!, 'C', later(62), outcome)).toBe(true);
  });
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

describe('hostile files over the network (only 127.0.0.1 allowed)', () => {
  it('a redirect to a refused address, too large, too deep, HTML, markup in the name, a metadata-address service', async () => {
    const cases: [string, string][] = [
      ['50', '/redirect-private'],
      ['51', '/huge'],
      ['52', '/deep'],
      ['53', '/html'],
      ['54', '/script-name'],
    ];
    await ingest(cases.map(([id, path]) => registered(id, `${base}${path}`)));
    const c = ctx({ fetch: undefined, scope: { network: 'base', agentIds: cases.map(([id]) => id) } });
    c.options.limits = { ...c.options.limits, allowAddresses: ['127.0.0.1'], timeoutMs: 3000 } as FetchLimits;
    now = soon();
    await drainRegistrations(c);
    expect(await row('50')).toMatchObject({ file_state: 'unreachable', reason: 'blocked_address' });
    expect(await row('51')).toMatchObject({ file_state: 'unreachable', reason: 'too_large' });
    const deep = await readAgentRegistration(t.db, 'base', '52');
    expect(deep).toMatchObject({
      file_state: 'invalid',
      problems: [{ field: '(file)', problem: 'too_deep' }],
    });
    expect(await readAgentRegistration(t.db, 'base', '53')).toMatchObject({
      file_state: 'invalid',
      problems: [{ field: '(file)', problem: 'not_json' }],
    });
    const hostile = await readAgentRegistration(t.db, 'base', '54');
    expect(hostile).toMatchObject({ file_state: 'valid', name: '<script>alert(1)</script>' });
    // its https service on the metadata address: the domain proof is refused before any connection
    expect(hostile!.endpoints).toMatchObject([
      { url: 'https://169.254.169.254/mcp', domain_proof: 'unreachable', domain_reason: 'blocked_address' },
    ]);
  });
});
