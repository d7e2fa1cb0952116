/**
 * The registration-file queue in the database (src/store/registrations.ts,
 * src/registrations/fetcher.ts), on PGlite and (with DATABASE_URL) PostgreSQL: the ingest keeps
 * one job per agent with an agentURI (a replayed batch changes nothing; a URIUpdated queues the
 * file afresh; an empty URI drops it; a rollback deletes what was set above the ancestor); leases
 * never give one job to two owners; retries back off, then the file is unreachable, and a failed
 * re-check keeps what was read; other bytes are `changed` and stay so; an ipfs file waits for a
 * gateway; hostile files over the network (a redirect to a refused address, too large, too deep,
 * HTML, markup in the name). The probe schedule of the files' services is in
 * test/registrations-probes.test.ts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainConfig } from '../src/chains.js';
import type { FetchLimits } from '../src/documents/safe-fetch.js';
import { drainRegistrations, runRegistrationRound } from '../src/registrations/fetcher.js';
import { REGISTRATION_TYPE } from '../src/registrations/parse.js';
import { readAgentRegistration } from '../src/read/registrations.js';
import { finishRegistration, leaseRegistrations } from '../src/store/registrations.js';
import { rollbackAbove } from '../src/store/rollback.js';
import type { TestDatabase } from './helpers/db.js';
import { openRegistrationDatabase, registrationQueueFixtures } from './helpers/registration-queue.js';

let t: TestDatabase;
let chains: ChainConfig[];
let server: Server;
let base: string;
let now = new Date();
let block = 100;
const { later, soon, answers, file, ctx, registered, uriUpdated, ingest, row } = registrationQueueFixtures({
  db: () => t.db,
  chains: () => chains,
  now: () => now,
  block: () => block,
  takeBlock: () => block++,
});

beforeAll(async () => {
  ({ t, chains } = await openRegistrationDatabase());
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
