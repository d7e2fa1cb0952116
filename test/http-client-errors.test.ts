/**
 * Requests Node's own HTTP layer refuses (issue 11, point 3), sent over raw sockets: oversized
 * headers or URL, a bad method, control and non-ASCII bytes in the path, a malformed request line,
 * a backslash path. Each gets the contract's JSON `{detail}` body with `Api-Version` and
 * `RateLimit-Policy`, never an empty body.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

let t: TestDatabase;
let server: RunningServer;

beforeAll(async () => {
  t = await openTestDatabase();
  server = await startHttpServer(
    {
      config: loadConfig({ RATE_LIMIT_RPS: '1000', RATE_LIMIT_BURST: '1000' }),
      db: t.db,
      now: () => new Date(),
    },
    { host: '127.0.0.1', port: 0 },
  );
}, 60_000);

afterAll(async () => {
  await server?.close();
  await t?.close();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `raw` bytes on a fresh connection and reads the whole answer (the server closes). */
function rawRequest(raw: Buffer | string): Promise<RawAnswer> {
  const port = Number(new URL(server.url).port);
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('no answer in 10 s'));
    }, 10_000);
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('error', () => undefined); // a reset after the answer is fine
    sock.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1] ?? 0), headers, body: rest.join('\r\n\r\n') });
    });
    sock.write(raw);
  });
}

function expectContractError(a: RawAnswer, status: number) {
  expect(a.status).toBe(status);
  expect(a.headers['api-version']).toBe('2.0.0');
  expect(a.headers['ratelimit-policy']).toBe('1000;w=1;burst=1000');
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(a.body) as { detail: unknown };
  expect(typeof body.detail).toBe('string');
  expect((body.detail as string).length).toBeGreaterThan(0);
}

const req = (line: string, headers: string[] = []) =>
  [line, 'Host: 127.0.0.1', ...headers, 'Connection: close', '', ''].join('\r\n');

describe("Node's HTTP parser errors answered in contract", () => {
  it('headers over 16 KB: 431 with the JSON body and headers', async () => {
    expectContractError(await rawRequest(req('GET /health HTTP/1.1', [`X-Big: ${'a'.repeat(20_000)}`])), 431);
  });

  it('a URL over 16 KB: 431', async () => {
    expectContractError(await rawRequest(req(`GET /search/${'a'.repeat(20_000)} HTTP/1.1`)), 431);
  });

  it('a bad method: 400', async () => {
    expectContractError(await rawRequest(req('FR0B /health HTTP/1.1')), 400);
    expectContractError(await rawRequest(req('G@T /health HTTP/1.1')), 400);
  });

  it('control and non-ASCII bytes in the path: 400', async () => {
    expectContractError(await rawRequest(req('GET /search/a\u0001b HTTP/1.1')), 400);
    expectContractError(await rawRequest(req('GET /search/a\u007fb HTTP/1.1')), 400);
    const nonAscii = Buffer.concat([
      Buffer.from('GET /search/'),
      Buffer.from([0xc3, 0xa9, 0xff]),
      Buffer.from(' HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'),
    ]);
    expectContractError(await rawRequest(nonAscii), 400);
  });

  it('a malformed request line or header: 400', async () => {
    expectContractError(await rawRequest('GARBAGE\r\n\r\n'), 400);
    expectContractError(await rawRequest(req('GET /health HTTP/1.1', ['Bad Header Without Colon'])), 400);
  });

  it('a path node-server cannot turn into a Request (backslash): 400 in contract', async () => {
    expectContractError(await rawRequest(req('GET /health\\x HTTP/1.1')), 400);
  });

  it('a normal request on the same server still works', async () => {
    const a = await rawRequest(req('GET /health HTTP/1.1'));
    expect(a.status).toBe(200);
    expect(a.headers['api-version']).toBe('2.0.0');
  });
});
