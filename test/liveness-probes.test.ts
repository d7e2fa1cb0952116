/**
 * Liveness at the protocol level (src/liveness/probes.ts) and the safe requests under it
 * (src/documents/safe-fetch.ts `fetchStatus`, `safeRequest`, extra trusted certificates), against
 * local servers on 127.0.0.1 only: the official MCP client's initialize + tools/list against the
 * SDK's server (over https with the demo's certificate, and slow but in time), an A2A card (given,
 * or found at the host's well-known path), web pages (2xx alive, a 404 dead, a huge page never
 * read); hostile targets: one that hangs (the deadline answers), redirects to a refused address,
 * the cloud metadata address (refused before any connection), a self-signed certificate nobody
 * trusts.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveDemoMcp, startRegistrationSites, type RegistrationSites } from '../src/demo/registrations.js';
import { DEMO_TLS_CERT } from '../src/demo/tls.js';
import { fetchDocument, fetchStatus, safeRequest, type FetchLimits } from '../src/documents/safe-fetch.js';
import { probeA2a, probeMcp, probeWeb } from '../src/liveness/probes.js';

let sites: RegistrationSites;
let server: Server;
let base: string;
const held: import('node:http').ServerResponse[] = [];

const limits = (over: Partial<FetchLimits> = {}): FetchLimits => ({
  maxBytes: 64 * 1024,
  timeoutMs: 1_500,
  maxRedirects: 2,
  allowPrivate: false,
  // the tests' own servers are the one private address allowed
  allowAddresses: ['127.0.0.1'],
  ipfsGateway: null,
  userAgent: 'test',
  ca: [DEMO_TLS_CERT],
  ...over,
});

beforeAll(async () => {
  sites = await startRegistrationSites();
  sites.set('home', '/', 'text/html', '<h1>home</h1>');
  sites.set(
    'home',
    '/.well-known/agent-card.json',
    'application/json',
    JSON.stringify({ name: 'Card', skills: [{ id: 'a' }, { id: 'b' }, { id: 'c' }] }),
  );
  server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    switch (u.pathname) {
      case '/slow-mcp':
        // in time: a third of the deadline per answer
        setTimeout(() => void serveDemoMcp(req, res), 300).unref();
        return;
      case '/hang':
        held.push(res); // answers nothing, ever
        return;
      case '/ok':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<p>ok</p>');
        return;
      case '/huge':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('x'.repeat(10 * 1024 * 1024));
        return;
      case '/redirect':
        res.writeHead(302, { location: u.searchParams.get('to') ?? '/ok' });
        res.end();
        return;
      case '/echo': {
        const parts: Buffer[] = [];
        req.on('data', (c: Buffer) => parts.push(c));
        req.on('end', () => {
          res.writeHead(418, { 'content-type': 'text/html', 'x-method': req.method ?? '' });
          res.end(`<${Buffer.concat(parts).toString()}>`);
        });
        return;
      }
      case '/not-a-card':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ hello: 'world' }));
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
  for (const r of held) r.destroy();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
  await sites.close();
});

describe('MCP: initialize and tools/list through the official client', () => {
  it('a live server over https (the demo certificate trusted) is alive with its tools counted', async () => {
    const r = await probeMcp(`${sites.url.home}/mcp`, limits());
    expect(r).toMatchObject({ alive: true, reason: null, toolCount: 2, skillCount: null });
    expect(r.latencyMs).toBeGreaterThanOrEqual(0);
  });

  it('a slow server that answers within the deadline is alive', async () => {
    expect(await probeMcp(`${base}/slow-mcp`, limits({ timeoutMs: 5_000 }))).toMatchObject({
      alive: true,
      toolCount: 2,
    });
  });

  it('a server that hangs is dead by the deadline (timeout), not later', async () => {
    const t0 = Date.now();
    const r = await probeMcp(`${base}/hang`, limits({ timeoutMs: 800 }));
    expect(r).toMatchObject({ alive: false, reason: 'timeout' });
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  it('a 404, an untrusted certificate and the cloud metadata address are dead', async () => {
    expect((await probeMcp(`${base}/missing`, limits())).alive).toBe(false);
    expect(await probeMcp(`${sites.url.home}/mcp`, limits({ ca: [] }))).toMatchObject({
      alive: false,
      reason: 'connect_failed',
    });
    // refused before any connection (a connection there would end in a timeout instead)
    expect(await probeMcp('http://169.254.169.254/mcp', limits())).toMatchObject({
      alive: false,
      reason: 'blocked_address',
    });
    expect(await probeMcp('not a url', limits())).toMatchObject({ alive: false, reason: 'bad_uri' });
  });
});

describe('A2A: the agent card parsed', () => {
  it('the card URL, or the host: its well-known card; skills counted', async () => {
    expect(await probeA2a(`${sites.url.home}/.well-known/agent-card.json`, limits())).toMatchObject({
      alive: true,
      skillCount: 3,
    });
    expect(await probeA2a(`${sites.url.home}/`, limits())).toMatchObject({ alive: true, skillCount: 3 });
  });

  it('JSON that is no card, an HTML page, a 404, a hang: dead, with the reason', async () => {
    expect(await probeA2a(`${base}/not-a-card`, limits())).toMatchObject({
      alive: false,
      reason: 'not_an_agent_card',
    });
    expect(await probeA2a(`${base}/ok`, limits())).toMatchObject({
      alive: false,
      reason: 'bad_content_type',
    });
    expect(await probeA2a(`${base}/.well-known/agent-card.json`, limits())).toMatchObject({
      alive: false,
      reason: 'http_404',
    });
    expect(await probeA2a(`${sites.url.bare}/.well-known/agent-card.json`, limits())).toMatchObject({
      alive: false,
      reason: 'http_404',
    });
    expect(await probeA2a(`${base}/hang`, limits({ timeoutMs: 500 }))).toMatchObject({
      alive: false,
      reason: 'timeout',
    });
  });
});

describe('web: a 2xx answer (a 404 is not alive)', () => {
  it('alive on 2xx (a huge page is never read), dead on 404, redirects followed and checked', async () => {
    expect(await probeWeb(`${base}/ok`, limits())).toMatchObject({ alive: true });
    // 10 MB against a 64 KiB cap: alive, because the body is never read
    expect(await probeWeb(`${base}/huge`, limits())).toMatchObject({ alive: true });
    expect(await probeWeb(`${base}/missing`, limits())).toMatchObject({ alive: false, reason: 'http_404' });
    expect(await probeWeb(`${base}/redirect?to=/ok`, limits())).toMatchObject({ alive: true });
    // a redirect to a refused address (only 127.0.0.1 is allowed here) is refused at the hop
    expect(await probeWeb(`${base}/redirect?to=http://127.0.0.2/`, limits())).toMatchObject({
      alive: false,
      reason: 'blocked_address',
    });
    expect(await probeWeb(`${base}/redirect?to=http://169.254.169.254/latest`, limits())).toMatchObject({
      alive: false,
      reason: 'blocked_address',
    });
    expect(await probeWeb(`${base}/hang`, limits({ timeoutMs: 500 }))).toMatchObject({
      alive: false,
      reason: 'timeout',
    });
  });
});

describe('the safe requests under the probes', () => {
  it('fetchStatus follows checked redirects and reads no body; safeRequest sends any method and caps any answer', async () => {
    expect(await fetchStatus(`${base}/redirect?to=/missing`, limits())).toMatchObject({
      ok: true,
      status: 404,
    });
    expect(await fetchStatus(`${base}/redirect?to=/redirect`, limits({ maxRedirects: 0 }))).toMatchObject({
      ok: false,
      code: 'too_many_redirects',
    });
    const r = await safeRequest(
      `${base}/echo`,
      { method: 'POST', headers: { 'content-type': 'text/plain' }, body: new TextEncoder().encode('hi') },
      limits(),
    );
    expect(r.ok && [r.status, r.headers['x-method'], new TextDecoder().decode(r.bytes)]).toEqual([
      418,
      'POST',
      '<hi>',
    ]);
    expect(
      await safeRequest(
        `${base}/echo`,
        { method: 'POST', headers: {}, body: new Uint8Array(70 * 1024) },
        limits(),
      ),
    ).toMatchObject({ ok: false, code: 'too_large' });
    // a redirect comes back as it is (the caller decides)
    const redirect = await safeRequest(
      `${base}/redirect?to=/ok`,
      { method: 'GET', headers: {}, body: null },
      limits(),
    );
    expect(redirect.ok && [redirect.status, redirect.headers.location]).toEqual([302, '/ok']);
    expect(
      await safeRequest('http://10.0.0.1/', { method: 'GET', headers: {}, body: null }, limits()),
    ).toMatchObject({ ok: false, code: 'blocked_address' });
  });

  it('trusts a certificate only when told to (FetchLimits.ca), on top of the system roots', async () => {
    sites.set('home', '/doc.json', 'application/json', '{"a":1}');
    expect(await fetchDocument(`${sites.url.home}/doc.json`, limits())).toMatchObject({ ok: true });
    expect(await fetchDocument(`${sites.url.home}/doc.json`, limits({ ca: undefined }))).toMatchObject({
      ok: false,
      code: 'connect_failed',
    });
  });
});
