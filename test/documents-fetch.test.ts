/**
 * Fetching a hostile feedbackURI (src/documents/safe-fetch.ts) against a local HTTP server:
 * SSRF refusals (loopback, link-local metadata, private ranges; also through a redirect), the
 * redirect limit, the byte cap, the timeout, content types, data: and ipfs:// URIs. Nothing here
 * leaves 127.0.0.1: refused addresses are refused before any connection.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acceptableContentType,
  fetchDocument,
  ipfsUrl,
  isBlockedAddress,
  type FetchLimits,
} from '../src/documents/safe-fetch.js';

let server: Server;
let base: string;
let port: number;

const limits = (over: Partial<FetchLimits> = {}): FetchLimits => ({
  maxBytes: 1024,
  timeoutMs: 5_000,
  maxRedirects: 2,
  allowPrivate: false,
  // the test's own server is the one private address allowed (a redirect elsewhere is not)
  allowAddresses: ['127.0.0.1'],
  ipfsGateway: null,
  userAgent: 'test',
  ...over,
});

let endlessClosed = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    switch (u.pathname) {
      case '/doc.json':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"agentId":1}');
        return;
      case '/big':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(`"${'x'.repeat(5000)}"`);
        return;
      case '/big-chunked':
        res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
        for (let i = 0; i < 10; i++) res.write('x'.repeat(500));
        res.end();
        return;
      case '/html':
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end('<script>alert(1)</script>');
        return;
      case '/slow':
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{}');
        }, 3_000).unref();
        return;
      case '/redirect':
        res.writeHead(302, { location: u.searchParams.get('to') ?? '/doc.json' });
        res.end();
        return;
      case '/loop':
        res.writeHead(302, { location: '/loop' });
        res.end();
        return;
      case '/missing':
        res.writeHead(404);
        res.end();
        return;
      case '/busy':
        res.writeHead(503);
        res.end();
        return;
      case '/endless-error': {
        // an error answer whose body never ends: the fetcher must not keep reading it
        res.writeHead(500, { 'content-type': 'text/plain' });
        const chunk = 'x'.repeat(64 * 1024);
        const timer = setInterval(() => {
          if (res.destroyed) {
            clearInterval(timer);
            endlessClosed = true;
          } else res.write(chunk);
        }, 5);
        res.on('close', () => {
          clearInterval(timer);
          endlessClosed = true;
        });
        return;
      }
      case '/ipfs/bafyfeedback':
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end('{"from":"ipfs"}');
        return;
      default:
        res.writeHead(500);
        res.end();
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

const text = (b: Uint8Array) => new TextDecoder().decode(b);

describe('address rules', () => {
  it('refuses loopback, private, link-local (metadata), CGNAT, unique-local and mapped forms', () => {
    for (const a of [
      '127.0.0.1',
      '127.0.0.2',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.100.100.200',
      '0.0.0.0',
      '::1',
      '::',
      'fe80::1',
      'fd00:ec2::254',
      '::ffff:127.0.0.1',
      '::ffff:a9fe:a9fe',
      '::a9fe:a9fe',
      '::ffff:0:7f00:1',
      '224.0.0.1',
    ])
      expect(isBlockedAddress(a), a).toBe(true);
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111'])
      expect(isBlockedAddress(a), a).toBe(false);
  });

  it('content types: JSON, text and octet-stream only', () => {
    expect(acceptableContentType('application/json; charset=utf-8')).toBe(true);
    expect(acceptableContentType('application/ld+json')).toBe(true);
    expect(acceptableContentType(null)).toBe(true);
    expect(acceptableContentType('text/html')).toBe(false);
    expect(acceptableContentType('image/svg+xml')).toBe(false);
  });
});

describe('fetchDocument', () => {
  it('fetches a document from an allowed server', async () => {
    const r = await fetchDocument(`${base}/doc.json`, limits());
    expect(r.ok && text(r.bytes)).toBe('{"agentId":1}');
  });

  it('SSRF: refuses loopback unless allowed by configuration', async () => {
    const r = await fetchDocument(`${base}/doc.json`, limits({ allowAddresses: [] }));
    expect(r).toMatchObject({ ok: false, code: 'blocked_address', retryable: false });
    const allowed = await fetchDocument(
      `${base}/doc.json`,
      limits({ allowAddresses: [], allowPrivate: true }),
    );
    expect(allowed.ok).toBe(true);
    // a name that resolves to loopback is refused the same way
    const named = await fetchDocument(`http://localhost:${port}/doc.json`, limits({ allowAddresses: [] }));
    expect(named).toMatchObject({ ok: false, code: 'blocked_address' });
  });

  it('SSRF: a redirect to another loopback address or to the metadata service is refused at that hop', async () => {
    for (const to of [
      `http://127.0.0.2:${port}/doc.json`,
      'http://169.254.169.254/latest/meta-data/',
      'http://[::1]/',
      'http://10.0.0.1/',
    ]) {
      const r = await fetchDocument(`${base}/redirect?to=${encodeURIComponent(to)}`, limits());
      expect(r, to).toMatchObject({ ok: false, code: 'blocked_address' });
    }
    // a redirect to a refused scheme
    const file = await fetchDocument(
      `${base}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`,
      limits(),
    );
    expect(file).toMatchObject({ ok: false, code: 'bad_redirect' });
    // a permitted redirect is followed
    const ok = await fetchDocument(`${base}/redirect?to=/doc.json`, limits());
    expect(ok.ok).toBe(true);
  });

  it('stops after the redirect limit', async () => {
    expect(await fetchDocument(`${base}/loop`, limits())).toMatchObject({
      ok: false,
      code: 'too_many_redirects',
    });
  });

  it('caps the size (declared or streamed), refuses HTML, times out', async () => {
    expect(await fetchDocument(`${base}/big`, limits())).toMatchObject({ ok: false, code: 'too_large' });
    expect(await fetchDocument(`${base}/big-chunked`, limits())).toMatchObject({
      ok: false,
      code: 'too_large',
    });
    expect(await fetchDocument(`${base}/html`, limits())).toMatchObject({
      ok: false,
      code: 'bad_content_type',
    });
    const slow = await fetchDocument(`${base}/slow`, limits({ timeoutMs: 300 }));
    expect(slow).toMatchObject({ ok: false, code: 'timeout', retryable: true });
  });

  it('HTTP errors: 404 is final, 503 may pass', async () => {
    expect(await fetchDocument(`${base}/missing`, limits())).toMatchObject({
      code: 'http_error',
      retryable: false,
    });
    expect(await fetchDocument(`${base}/busy`, limits())).toMatchObject({
      code: 'http_error',
      retryable: true,
    });
  });

  it('an error answer with an endless body: refused, and the connection closed (its body never read)', async () => {
    expect(await fetchDocument(`${base}/endless-error`, limits())).toMatchObject({
      code: 'http_error',
      retryable: true,
    });
    for (let i = 0; i < 100 && !endlessClosed; i++) await new Promise((r) => setTimeout(r, 20));
    expect(endlessClosed).toBe(true);
  });

  it('data: URIs are decoded in place; other schemes are refused', async () => {
    const b64 = `data:application/json;base64,${Buffer.from('{"a":1}').toString('base64')}`;
    const r = await fetchDocument(b64, limits());
    expect(r.ok && text(r.bytes)).toBe('{"a":1}');
    const pct = await fetchDocument('data:application/json,%7B%22a%22%3A2%7D', limits());
    expect(pct.ok && text(pct.bytes)).toBe('{"a":2}');
    expect(await fetchDocument('data:text/html,<b>x</b>', limits())).toMatchObject({
      code: 'bad_content_type',
    });
    expect(await fetchDocument('file:///etc/passwd', limits())).toMatchObject({ code: 'unsupported_scheme' });
    expect(await fetchDocument('javascript:alert(1)', limits())).toMatchObject({
      code: 'unsupported_scheme',
    });
  });

  it('ipfs:// waits for a gateway, then goes through it', async () => {
    expect(await fetchDocument('ipfs://bafyfeedback', limits())).toMatchObject({ code: 'no_ipfs_gateway' });
    const r = await fetchDocument('ipfs://bafyfeedback', limits({ ipfsGateway: `${base}/ipfs/` }));
    expect(r.ok && text(r.bytes)).toBe('{"from":"ipfs"}');
    expect(ipfsUrl('ipfs://../../etc', 'https://g/ipfs/')).toBeNull();
  });
});
