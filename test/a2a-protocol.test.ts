/**
 * The A2A door's envelope, over a real listening server and raw `fetch`: every JSON-RPC error path
 * (-32700, -32600, -32601, -32603), id echo, text part reading (`kind` | `type`, non-text parts
 * ignored, bounded scan), the status fallthrough, fresh message ids, the 405 on wrong methods, the
 * open CORS of /a2a and /mcp, and the agent card. The answer CONTENT against an indexed scenario is
 * in test/a2a.test.ts; here the database is a fresh, empty one (plus a "down" one for -32603).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import { classify, extractText, MAX_TEXT_CHARS } from '../src/doors/a2a/dispatch.js';
import { MAX_BODY_BYTES } from '../src/doors/http/routes/a2a.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

const NOW = new Date('2026-11-20T08:00:00Z');
const NOBODY = '0x00000000000000000000000000000000000000b0';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const UNLIMITED = { RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000' };

let t: TestDatabase;
let server: RunningServer;
let down: RunningServer;

function downDatabase(): Database {
  const fail = async () => {
    throw new Error('database is down');
  };
  return {
    kind: 'postgres',
    query: fail,
    exec: fail,
    transaction: fail,
    tryWithLock: fail,
    close: async () => undefined,
  } as unknown as Database;
}

beforeAll(async () => {
  t = await openTestDatabase();
  // A budget this suite cannot exhaust; the door's own rate budget is tested on a separate server.
  const config = loadConfig(UNLIMITED);
  server = await startHttpServer({ config, db: t.db, now: () => NOW }, { host: '127.0.0.1', port: 0 });
  config.baseUrl = server.url;
  down = await startHttpServer(
    { config: loadConfig(UNLIMITED), db: downDatabase(), now: () => NOW },
    { host: '127.0.0.1', port: 0 },
  );
});

afterAll(async () => {
  await server?.close();
  await down?.close();
  await t?.close();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function post(
  body: string,
  opts: { path?: string; base?: string; headers?: Record<string, string> } = {},
) {
  const res = await fetch(`${opts.base ?? server.url}${opts.path ?? '/a2a'}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...opts.headers },
    body,
  });
  const text = await res.text();
  return { res, text, body: JSON.parse(text) as Json };
}

const rpc = (msg: Record<string, unknown>, opts?: Parameters<typeof post>[1]) =>
  post(JSON.stringify(msg), opts);

const send = (text: string | null, id: unknown = 1, parts?: unknown[], base?: string) =>
  rpc(
    {
      jsonrpc: '2.0',
      id,
      method: 'message/send',
      params: {
        message: {
          kind: 'message',
          role: 'user',
          messageId: 'm-1',
          parts: parts ?? [{ kind: 'text', text }],
        },
      },
    },
    base ? { base } : {},
  );

function expectMessage(body: Json, id: unknown): string {
  expect(Object.keys(body).sort()).toEqual(['id', 'jsonrpc', 'result']);
  expect(body.jsonrpc).toBe('2.0');
  expect(body.id).toEqual(id);
  expect(Object.keys(body.result).sort()).toEqual(['kind', 'messageId', 'parts', 'role']);
  expect(body.result).toMatchObject({ kind: 'message', role: 'agent' });
  expect(body.result.messageId).toMatch(UUID);
  expect(body.result.parts).toEqual([{ kind: 'text', text: expect.any(String) }]);
  return body.result.parts[0].text as string;
}

function expectError(body: Json, code: number, id: unknown) {
  expect(Object.keys(body).sort()).toEqual(['error', 'id', 'jsonrpc']);
  expect(body).toMatchObject({ jsonrpc: '2.0', id, error: { code, message: expect.any(String) } });
  expect(body.error.message.length).toBeGreaterThan(0);
}

const STATUS = /^Your message holds no (text|EVM address and no Solana key) to look up\.\nIndex status: /;

// ------------------------------------------------------------------ success envelope

describe('POST /a2a message/send: the envelope', () => {
  it('answers a message (never a task) with the text in result.parts[0].text, under /a2a and /v1/a2a', async () => {
    for (const path of ['/a2a', '/v1/a2a']) {
      const { res, body } = await rpc(
        {
          jsonrpc: '2.0',
          id: 'req-1',
          method: 'message/send',
          params: { message: { parts: [{ kind: 'text', text: 'status' }] } },
        },
        { path },
      );
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('api-version')).toBe('2.0.0');
      expect(res.headers.get('ratelimit-policy')).toBe('1000000;w=1;burst=1000000');
      expect(expectMessage(body, 'req-1')).toMatch(STATUS);
    }
  });

  it('echoes the id exactly: strings (empty, unicode), integers (0, negative, 2^53-1) and null', async () => {
    for (const id of [
      'abc',
      '',
      'ünï ✓ "quoted"',
      0,
      -7,
      42,
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
      null,
    ]) {
      const { body, text } = await send('hello', id);
      expectMessage(body, id);
      expect(text).toContain(`"id":${JSON.stringify(id)}`);
    }
  });

  it('gives every answer a fresh messageId (a UUID), even for identical requests', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add((await send('same text')).body.result.messageId);
    expect(ids.size).toBe(5);
  });

  it('reads a text part by `kind` or by `type`, and both give the same answer', async () => {
    const byKind = expectMessage((await send(null, 1, [{ kind: 'text', text: `vet ${NOBODY}` }])).body, 1);
    const byType = expectMessage((await send(null, 1, [{ type: 'text', text: `vet ${NOBODY}` }])).body, 1);
    expect(byKind).toBe(byType);
    expect(byKind).toContain(`Wallet ${NOBODY} holds no ERC-8004 identity on any chain`);
  });

  it('ignores non-text parts, even when they carry an address in a `text` field', async () => {
    const parts = [
      { kind: 'file', file: { uri: `https://x.example/${NOBODY}`, mimeType: 'text/plain' }, text: NOBODY },
      { kind: 'data', data: { wallet: NOBODY }, text: NOBODY },
      { type: 'image', text: NOBODY },
      { kind: 'data', type: 'text', text: NOBODY }, // `kind` wins over `type`
      { kind: 'text', text: 42 }, // not a string
      'a bare string',
      null,
      { kind: 'text', text: 'just words' },
    ];
    expect(expectMessage((await send(null, 'p', parts)).body, 'p')).toMatch(STATUS);
  });

  it('does not read role or messageId', async () => {
    const { body } = await rpc({
      jsonrpc: '2.0',
      id: 3,
      method: 'message/send',
      params: { message: { role: NOBODY, messageId: NOBODY, parts: [{ kind: 'text', text: 'hi' }] } },
    });
    expect(expectMessage(body, 3)).toMatch(STATUS);
  });

  it('falls through to the status answer when params is missing, null, empty, or carries no message parts', async () => {
    const variants: Record<string, unknown>[] = [
      {},
      { params: null },
      { params: {} },
      { params: { message: {} } },
      { params: { message: { parts: 'not an array' } } },
      { params: { message: { parts: [] } } },
      { params: [] },
    ];
    for (const v of variants) {
      const { res, body } = await rpc({ jsonrpc: '2.0', id: 9, method: 'message/send', ...v });
      expect(res.status, JSON.stringify(v)).toBe(200);
      expect(expectMessage(body, 9), JSON.stringify(v)).toMatch(
        /^Your message holds no text to look up\.\nIndex status: 0 agents and 0 ratings/,
      );
    }
  });

  it('reads a dot-only text (`..`, `.`, `.%2E`, `../chains`) like any text without a subject: the status answer', async () => {
    // The door only ever puts an EVM address or a base58 key in a path (through pathSegment), so a
    // dot segment never reaches a route from here: `..` is unparseable input, answered as such.
    for (const text of ['..', '.', '.%2E', '%2e%2e', '../chains', '/search/..']) {
      expect(classify(text), text).toEqual({ kind: 'status', empty: false });
      const { res, body } = await send(text, 4);
      expect(res.status, text).toBe(200);
      expect(expectMessage(body, 4), text).toMatch(
        /^Your message holds no EVM address and no Solana key to look up\.\nIndex status: 0 agents and 0 ratings/,
      );
    }
  });

  it('carries no caveat, no payment challenge and no policy decoration beyond text', async () => {
    const { text } = await send(`check ${NOBODY}`);
    expect(text).not.toMatch(/caveat|"402"|x402Version|accepts/);
  });
});

// ------------------------------------------------------------------ errors

describe('POST /a2a: JSON-RPC errors', () => {
  it.each([
    'message/stream',
    'tasks/get',
    'tasks/cancel',
    'tasks/resubscribe',
    'tasks/pushNotificationConfig/set',
    'tasks/pushNotificationConfig/get',
    'tasks/pushNotificationConfig/list',
    'tasks/pushNotificationConfig/delete',
    'agent/authenticatedExtendedCard',
    'agent/getAuthenticatedExtendedCard',
    'message/send ',
    'MESSAGE/SEND',
    'rpc.discover',
    '',
  ])('answers %j with HTTP 200 and -32601, echoing the id', async (method) => {
    for (const id of ['m', 7, null]) {
      const { res, body } = await rpc({
        jsonrpc: '2.0',
        id,
        method,
        params: { message: { parts: [{ kind: 'text', text: NOBODY }] } },
      });
      expect(res.status).toBe(200);
      expectError(body, -32601, id);
      expect(body.error.data).toEqual({ supported_methods: ['message/send'] });
    }
  });

  it.each<[string, unknown, unknown]>([
    ['a batch (array)', [{ jsonrpc: '2.0', id: 1, method: 'message/send' }], null],
    ['an empty batch', [], null],
    ['null', null, null],
    ['a number', 42, null],
    ['a string', 'message/send', null],
    ['a boolean', true, null],
    ['an empty object', {}, null],
    ['jsonrpc 1.0', { jsonrpc: '1.0', id: 1, method: 'message/send' }, 1],
    ['jsonrpc as a number', { jsonrpc: 2.0, id: 'a', method: 'message/send' }, 'a'],
    ['no jsonrpc', { id: 1, method: 'message/send' }, 1],
    ['no method', { jsonrpc: '2.0', id: 1 }, 1],
    ['method not a string', { jsonrpc: '2.0', id: 1, method: 5 }, 1],
    ['method null', { jsonrpc: '2.0', id: 'n', method: null }, 'n'],
    ['no id (a notification)', { jsonrpc: '2.0', method: 'message/send' }, null],
    ['id an object', { jsonrpc: '2.0', id: { a: 1 }, method: 'message/send' }, null],
    ['id an array', { jsonrpc: '2.0', id: [1], method: 'message/send' }, null],
    ['id a boolean', { jsonrpc: '2.0', id: true, method: 'message/send' }, null],
    ['id a fraction', { jsonrpc: '2.0', id: 1.5, method: 'message/send' }, null],
    ['id an unsafe integer', { jsonrpc: '2.0', id: 2 ** 60, method: 'message/send' }, null],
    ['params a string', { jsonrpc: '2.0', id: 4, method: 'message/send', params: 'hello' }, 4],
    ['params a number', { jsonrpc: '2.0', id: 4, method: 'message/send', params: 5 }, 4],
  ])('answers %s with HTTP 200 and -32600', async (_name, msg, id) => {
    const { res, body } = await post(JSON.stringify(msg));
    expect(res.status).toBe(200);
    expectError(body, -32600, id);
  });

  it('checks the envelope before the method: an invalid request with an unknown method is -32600', async () => {
    const { body } = await rpc({ jsonrpc: '1.0', id: 1, method: 'tasks/get' });
    expectError(body, -32600, 1);
  });

  it.each([
    '{bad',
    '',
    'not json',
    '{"jsonrpc":"2.0","id":1,"method":"message/send"',
    "{'jsonrpc':'2.0'}",
    '\u0000\u0001',
  ])('answers an unparseable body %j with HTTP 400 and -32700, id null', async (raw) => {
    const { res, body } = await post(raw);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expectError(body, -32700, null);
  });

  it('parses the body whatever the Content-Type says', async () => {
    const msg = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send' });
    const { res, body } = await post(msg, { headers: { 'content-type': 'text/plain' } });
    expect(res.status).toBe(200);
    expectMessage(body, 1);
  });

  it(`refuses a body over ${MAX_BODY_BYTES} bytes unread with 413 and a -32600 envelope (never 500)`, async () => {
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'message/send',
      params: { message: { parts: [{ kind: 'text', text: 'x'.repeat(MAX_BODY_BYTES) }] } },
    });
    const { res, body } = await post(big);
    expect(res.status).toBe(413);
    expectError(body, -32600, null);
    // The server is still fine.
    expectMessage((await send('hi')).body, 1);
  });

  it('turns a failure behind the door into -32603 with the id echoed (HTTP 200), never a crash, never the message in the log', async () => {
    const spy = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const secret = 'SECRET-TEXT-0123';
      for (const [id, text] of [
        ['e1', `please vet ${NOBODY} ${secret}`],
        [5, `status ${secret}`],
        [null, `So1anaWa11et${'A'.repeat(32)} ${secret}`],
      ] as const) {
        const { res, body } = await rpc(
          {
            jsonrpc: '2.0',
            id,
            method: 'message/send',
            params: { message: { parts: [{ kind: 'text', text }] } },
          },
          { base: down.url },
        );
        expect(res.status).toBe(200);
        expectError(body, -32603, id);
        expect(JSON.stringify(body)).not.toContain(secret);
        expect(JSON.stringify(body)).not.toContain('database is down');
      }
      for (const call of spy.mock.calls) expect(call.join(' ')).not.toContain('SECRET-TEXT');
      // The same door keeps answering the envelope errors.
      expectError(
        (await rpc({ jsonrpc: '2.0', id: 1, method: 'tasks/get' }, { base: down.url })).body,
        -32601,
        1,
      );
    } finally {
      spy.mockRestore();
    }
  });
});

// ------------------------------------------------------------------ bounded scan

describe('bounded reading of the message text', () => {
  it('joins text parts with a newline and scans only the first MAX_TEXT_CHARS characters', () => {
    expect(
      extractText({
        message: {
          parts: [
            { kind: 'text', text: 'a' },
            { type: 'text', text: 'b' },
          ],
        },
      }),
    ).toBe('a\nb');
    const long = extractText({
      message: {
        parts: [
          { kind: 'text', text: 'x'.repeat(10_000) },
          { kind: 'text', text: NOBODY },
        ],
      },
    });
    expect(long.length).toBe(MAX_TEXT_CHARS);
    expect(classify(long)).toEqual({ kind: 'status', empty: false });
    expect(classify(`${'x '.repeat(100)}${NOBODY}`)).toMatchObject({ kind: 'evm', address: NOBODY });
  });

  it('finds an address past the bound only if it starts within it (over the wire too)', async () => {
    const pad = ' '.repeat(MAX_TEXT_CHARS - 10);
    expect(expectMessage((await send(`${pad}${NOBODY}`)).body, 1)).toMatch(STATUS);
    expect(expectMessage((await send(`${' '.repeat(100)}${NOBODY}`)).body, 1)).toContain(`Wallet ${NOBODY}`);
  });

  it('reads at most 64 parts', () => {
    const parts = [
      ...Array.from({ length: 64 }, () => ({ kind: 'text', text: '.' })),
      { kind: 'text', text: NOBODY },
    ];
    expect(classify(extractText({ message: { parts } }))).toEqual({ kind: 'status', empty: false });
  });

  it('classifies: the first EVM address anywhere, standing alone; then a base58 key; digits only and empty are status', () => {
    const a = '0x1111111111111111111111111111111111111111';
    const b = '0xAbCdEf0000000000000000000000000000000002';
    expect(classify(`compare ${b} with ${a} and ${a}`)).toEqual({
      kind: 'evm',
      address: b.toLowerCase(),
      others: 1,
    });
    expect(classify(`(${a}).`)).toEqual({ kind: 'evm', address: a, others: 0 });
    // Glued to other hex or letters it is not an address (a transaction hash is not a wallet).
    expect(classify(`0x${'ab'.repeat(32)}`).kind).not.toBe('evm');
    expect(classify(`${a}ff`).kind).not.toBe('evm');
    expect(classify(`z${a}`).kind).not.toBe('evm');
    // EVM first, even after a base58 key.
    expect(classify(`So1anaWa11et${'A'.repeat(32)} ${a}`)).toMatchObject({ kind: 'evm', address: a });
    expect(classify(`vet So1anaWa11et${'A'.repeat(32)}?`)).toEqual({
      kind: 'base58',
      key: `So1anaWa11et${'A'.repeat(32)}`,
    });
    expect(classify('7')).toEqual({ kind: 'status', empty: false });
    expect(classify('1'.repeat(40))).toEqual({ kind: 'status', empty: false });
    expect(classify('')).toEqual({ kind: 'status', empty: true });
    expect(classify('  \n ')).toEqual({ kind: 'status', empty: true });
    // Too long for a key (45 base58 characters) is no key.
    expect(classify('A'.repeat(45)).kind).toBe('status');
  });
});

// ------------------------------------------------------------------ HTTP method, CORS

describe('HTTP methods and CORS of the doors', () => {
  it('answers GET, HEAD, PUT, PATCH and DELETE on /a2a with 405 {detail}', async () => {
    for (const path of ['/a2a', '/v1/a2a']) {
      for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
        const res = await fetch(`${server.url}${path}`, { method });
        expect(res.status, `${method} ${path}`).toBe(405);
        const body = (await res.json()) as Json;
        expect(Object.keys(body)).toEqual(['detail']);
        expect(typeof body.detail).toBe('string');
        expect(res.headers.get('allow')).toBe('POST, OPTIONS');
        expect(res.headers.get('api-version')).toBe('2.0.0');
      }
      const head = await fetch(`${server.url}${path}`, { method: 'HEAD' });
      expect(head.status).toBe(405);
    }
  });

  it('answers the preflight of /a2a and /mcp (and their /v1 aliases) with 204 and the open CORS headers', async () => {
    for (const path of ['/a2a', '/v1/a2a', '/mcp', '/v1/mcp']) {
      const res = await fetch(`${server.url}${path}`, {
        method: 'OPTIONS',
        headers: {
          origin: 'https://somewhere.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      expect(res.status, path).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expect(res.headers.get('access-control-allow-methods')).toBe('POST, GET, OPTIONS');
      expect(res.headers.get('access-control-allow-headers')).toBe('content-type');
      expect(res.headers.get('access-control-max-age')).toBe('600');
      expect(res.headers.get('api-version')).toBe('2.0.0');
      expect(await res.text()).toBe('');
    }
  });

  it('counts the POST /a2a and every in-process read behind it against the same client budget', async () => {
    const config = loadConfig({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '6' });
    const tight = await startHttpServer({ config, db: t.db, now: () => NOW }, { host: '127.0.0.1', port: 0 });
    try {
      // Each `vet` costs the POST plus its in-process preview read: 6 tokens serve 3 at most
      // (plus what the 1/s refill gives back), where counting the POST alone would serve 6.
      let served = 0;
      let last: Response | undefined;
      for (let i = 0; i < 8; i++) {
        const { res, body } = await send(`vet ${NOBODY}`, 1, undefined, tight.url);
        last = res;
        if (res.status !== 200) break;
        expectMessage(body, 1);
        served++;
      }
      expect(served).toBeGreaterThanOrEqual(2);
      expect(served).toBeLessThanOrEqual(4);
      expect(last?.status).toBe(429);
      expect(last?.headers.get('retry-after')).toBe('1');
    } finally {
      await tight.close();
    }
  });

  it('leaves other paths under /mcp and /a2a to the router', async () => {
    for (const path of ['/mcp/x', '/a2a/x']) {
      const res = await fetch(`${server.url}${path}`, { method: 'OPTIONS' });
      expect(res.status, path).toBe(404);
    }
  });
});

// ------------------------------------------------------------------ agent card, schema

describe('GET /.well-known/agent-card.json', () => {
  it('serves the 0.3.0 card with the fields of the contract, its url on BASE_URL', async () => {
    for (const path of ['/.well-known/agent-card.json', '/v1/.well-known/agent-card.json']) {
      const res = await fetch(`${server.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const card = (await res.json()) as Json;
      expect(card).toMatchObject({
        protocolVersion: '0.3.0',
        name: expect.any(String),
        version: '2.0.0',
        description: expect.any(String),
        url: `${server.url}/a2a`,
        preferredTransport: 'JSONRPC',
        supportedInterfaces: [{ url: `${server.url}/a2a`, transport: 'JSONRPC', protocolBinding: 'JSONRPC' }],
        provider: { organization: expect.any(String), url: server.url },
        documentationUrl: `${server.url}/docs`,
        capabilities: { streaming: false, pushNotifications: false, stateTransitionHistory: false },
        defaultInputModes: ['text/plain'],
        defaultOutputModes: ['text/plain'],
      });
      expect(card.skills.map((s: Json) => s.id)).toEqual(['vet-wallet', 'index-status']);
      for (const s of card.skills) {
        expect(s).toMatchObject({ name: expect.any(String), description: expect.any(String) });
        expect(s.tags.length).toBeGreaterThan(0);
        expect(s.examples.length).toBeGreaterThan(0);
      }
    }
  });

  it('is declared in /openapi.json while the door itself is not', async () => {
    const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as Json;
    expect(doc.paths['/.well-known/agent-card.json'].get).toBeDefined();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/a2a') || p.startsWith('/mcp'))).toEqual([]);
    expect(JSON.stringify(doc)).not.toMatch(/"\/a2a/);
  });
});
