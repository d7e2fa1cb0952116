/**
 * One client, one bucket, whatever the door (issue 11, points 1 and 4), over a real listening
 * server:
 *  - a JSON-RPC batch at /mcp is refused (400, -32600) and runs no tool;
 *  - every in-process call a door makes (MCP tools, A2A dispatch) spends one token from the bucket
 *    of the client that sent the POST, the same bucket its direct HTTP calls spend from (only the
 *    reads of an explorer page are marked already charged: the page view costs one token, see
 *    test/explorer-http.test.ts);
 *  - with TRUST_PROXY the client is the X-Forwarded-For entry TRUST_PROXY_HOPS places from the
 *    right: rotating the leftmost (client-written) entry does not get past the limit.
 * Clients are told apart by X-Forwarded-For (TRUST_PROXY=true, one hop), so one test process can
 * play several clients.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { alreadyCharged, clientKey } from '../src/doors/http/app.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

const NOW = new Date('2026-11-20T08:00:00Z');
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const NOBODY = '0x00000000000000000000000000000000000000b0';
// A slow refill, so a test's few hundred milliseconds add at most a token or two.
const BURST = 30;

let t: TestDatabase;
let server: RunningServer;

beforeAll(async () => {
  t = await openTestDatabase();
  const config = loadConfig({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: String(BURST), TRUST_PROXY: 'true' });
  server = await startHttpServer({ config, db: t.db, now: () => NOW }, { host: '127.0.0.1', port: 0 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await t?.close();
});

let clientSeq = 0;
/** A fresh client address (as the trusted proxy would append it). */
const newClient = () => `198.51.100.${++clientSeq}`;

const get = (path: string, client: string) =>
  fetch(`${server.url}${path}`, { headers: { 'x-forwarded-for': client } });

/** Direct GET /health until the first 429: how many tokens the client had left. */
async function tokensLeft(client: string): Promise<number> {
  let n = 0;
  for (;;) {
    const res = await get('/health', client);
    await res.body?.cancel();
    if (res.status === 429) return n;
    expect(res.status).toBe(200);
    if (++n > BURST + 10) throw new Error('the limit never held');
  }
}

function mcp(body: unknown, client: string) {
  return fetch(`${server.url}/mcp`, {
    method: 'POST',
    headers: { ...MCP_HEADERS, 'x-forwarded-for': client },
    body: JSON.stringify(body),
  });
}

const toolCall = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name, arguments: args },
});

describe('MCP door: batches refused', () => {
  it('answers a JSON-RPC batch with 400 and -32600, runs none of its calls, keeps the contract headers', async () => {
    const client = newClient();
    for (const body of [
      [toolCall(1, 'rep_pricing'), toolCall(2, 'rep_pricing')],
      [toolCall(1, 'rep_index_status')],
      [],
    ]) {
      const res = await mcp(body, client);
      expect(res.status).toBe(400);
      expect(res.headers.get('api-version')).toBe('2.0.0');
      expect(res.headers.get('ratelimit-policy')).toBe(`1;w=1;burst=${BURST}`);
      const json = (await res.json()) as {
        jsonrpc: string;
        id: null;
        error: { code: number; message: string };
      };
      expect(json.jsonrpc).toBe('2.0');
      expect(json.id).toBeNull();
      expect(json.error.code).toBe(-32600);
      expect(json.error.message).toMatch(/batch/i);
    }
    // Three refused POSTs cost three tokens and nothing else: no tool ran behind them.
    expect(await tokensLeft(client)).toBeGreaterThanOrEqual(BURST - 3);
    expect(await tokensLeft(newClient())).toBeGreaterThanOrEqual(BURST - 1);
  });

  it('still serves a single message (the refusal is about arrays only)', async () => {
    const res = await mcp(toolCall(7, 'rep_manifesto'), newClient());
    expect(res.status).toBe(200);
    const json = (await res.json()) as { id: number; result: { structuredContent: { status: string } } };
    expect(json.id).toBe(7);
    expect(json.result.structuredContent.status).toBe('ok');
  });
});

describe('one client, one bucket, whatever the door', () => {
  it('an MCP tool spends one token per route it calls from the POSTing client, and no one else', async () => {
    const caller = newClient();
    const bystander = newClient();
    // rep_pricing reads /pricing, /health and probes the six metered tiers: 8 in-process calls.
    const res = await mcp(toolCall(1, 'rep_pricing'), caller);
    expect(res.status).toBe(200);
    const json = (await res.json()) as { result: { structuredContent: { status: string } } };
    expect(json.result.structuredContent.status).toBe('ok');
    const left = await tokensLeft(caller);
    // 1 (the POST) + 8 (the calls behind it); a slow refill may give back a token or two.
    expect(left).toBeLessThanOrEqual(BURST - 9 + 2);
    expect(left).toBeGreaterThanOrEqual(BURST - 9 - 1);
    // Another client's bucket is untouched.
    expect(await tokensLeft(bystander)).toBeGreaterThanOrEqual(BURST - 1);
  });

  it('only an in-process read marked already charged (an explorer page read) skips its token; never a socket request', () => {
    expect(alreadyCharged({ inProcessClient: '203.0.113.9', inProcessCharged: true })).toBe(true);
    // the MCP and A2A doors' calls carry the client only: each spends its token
    expect(alreadyCharged({ inProcessClient: '203.0.113.9' })).toBe(false);
    expect(alreadyCharged(undefined)).toBe(false);
    // a request from a socket is charged whatever bindings sit beside it
    const socket = { socket: { remoteAddress: '127.0.0.1' } };
    expect(alreadyCharged({ incoming: socket, inProcessCharged: true })).toBe(false);
    expect(alreadyCharged({ incoming: {}, inProcessClient: 'x', inProcessCharged: true })).toBe(false);
  });

  it('an MCP message over the remaining budget gets the 429 of its calls, not extra work', async () => {
    const caller = newClient();
    await tokensLeft(caller); // empty the bucket with direct calls
    const res = await mcp(toolCall(1, 'rep_pricing'), caller);
    // The POST itself is over budget: refused before the door runs.
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('api-version')).toBe('2.0.0');
  });

  it('an A2A message spends the POST plus the in-process reads behind it', async () => {
    const caller = newClient();
    const res = await fetch(`${server.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': caller },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { parts: [{ kind: 'text', text: `vet ${NOBODY}` }] } },
      }),
    });
    expect(res.status).toBe(200);
    await res.json();
    // 1 (POST) + at least 1 (the per-chain preview read in process).
    expect(await tokensLeft(caller)).toBeLessThanOrEqual(BURST - 2 + 1);
  });

  it('an A2A message whose reads find the bucket empty is answered 429, not an internal error', async () => {
    const caller = newClient();
    const left = await tokensLeft(caller);
    expect(left).toBeGreaterThan(0);
    // Wait for exactly one token (rate 1/s): the POST passes, its in-process read does not.
    await new Promise((r) => setTimeout(r, 1_100));
    const res = await fetch(`${server.url}/a2a`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': caller },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { parts: [{ kind: 'text', text: `vet ${NOBODY}` }] } },
      }),
    });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(res.headers.get('api-version')).toBe('2.0.0');
    expect(((await res.json()) as { detail: string }).detail).toMatch(/Too many requests/);
  });
});

describe('TRUST_PROXY: the client is counted from the right of X-Forwarded-For', () => {
  it('rotating the leftmost (client-written) entry does not get past the limit', async () => {
    const real = newClient();
    let ok = 0;
    let limited = 0;
    for (let i = 0; i < BURST + 10; i++) {
      const res = await get('/health', `10.${i}.${i}.${i}, ${real}`);
      await res.body?.cancel();
      if (res.status === 200) ok++;
      else if (res.status === 429) limited++;
    }
    expect(ok).toBeLessThanOrEqual(BURST + 2);
    expect(limited).toBeGreaterThanOrEqual(8);
  });

  it('takes the entry TRUST_PROXY_HOPS places from the right; too few entries fall back to the socket', () => {
    const env = { incoming: { socket: { remoteAddress: '127.0.0.1' } } };
    const one = { trustProxy: true, trustProxyHops: 1 };
    const two = { trustProxy: true, trustProxyHops: 2 };
    expect(clientKey(env, 'spoof, 203.0.113.9', one)).toBe('203.0.113.9');
    expect(clientKey(env, 'spoof, 203.0.113.9, 10.0.0.2', two)).toBe('203.0.113.9');
    expect(clientKey(env, 'x1, y1, 203.0.113.9, 10.0.0.2', two)).toBe('203.0.113.9');
    expect(clientKey(env, '10.0.0.2', two)).toBe('127.0.0.1');
    expect(clientKey(env, ' , ', one)).toBe('127.0.0.1');
    expect(clientKey(env, 'spoof, 203.0.113.9', { trustProxy: false, trustProxyHops: 1 })).toBe('127.0.0.1');
    expect(clientKey(env, undefined, one)).toBe('127.0.0.1');
    // An in-process door call carries the POSTing client's key; a bare app.request carries none.
    expect(clientKey({ inProcessClient: '203.0.113.9' }, 'spoof', one)).toBe('203.0.113.9');
    expect(clientKey(undefined, 'spoof', one)).toBeUndefined();
  });

  it('reads TRUST_PROXY_HOPS (default 1) and refuses a value that is not a small positive integer', () => {
    expect(loadConfig({}).trustProxyHops).toBe(1);
    expect(loadConfig({ TRUST_PROXY_HOPS: '3' }).trustProxyHops).toBe(3);
    expect(() => loadConfig({ TRUST_PROXY_HOPS: '0' })).toThrow(/TRUST_PROXY_HOPS/);
    expect(() => loadConfig({ TRUST_PROXY_HOPS: 'two' })).toThrow(/TRUST_PROXY_HOPS/);
  });
});
