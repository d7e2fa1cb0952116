/**
 * Fetches one document from a hostile URI, with the rules of docs/SECURITY.md (feedback documents,
 * registration files and domain proofs; the liveness probes send their requests through the same
 * rules, see `safeRequest` and `fetchStatus`):
 *  - schemes: `https:`, `http:`, `ipfs://` (through the configured gateway; without one the job
 *    waits: `no_ipfs_gateway`) and `data:` (decoded in place, no network);
 *  - every host is resolved first and EVERY address it resolves to is checked: loopback,
 *    private, carrier-grade NAT, link-local (cloud metadata 169.254.169.254), unique-local,
 *    multicast, reserved and unspecified addresses are refused (`blocked_address`) unless
 *    `allowPrivate`; the connection then goes to the checked address (no second lookup, so DNS
 *    rebinding cannot swap it);
 *  - redirects are followed by hand, at most `maxRedirects`, each hop checked again the same way;
 *  - one deadline for the whole fetch (`timeoutMs`), a byte cap (`maxBytes`, from Content-Length
 *    and while reading), the content type checked (JSON, text or octet-stream; HTML and others are
 *    refused); nothing received is executed or interpreted beyond the bytes.
 */
import { lookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { BlockList, isIP, type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';

export interface FetchLimits {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  /** Allow private, loopback and link-local addresses (tests, private deployments). */
  allowPrivate: boolean;
  /** Exact addresses allowed although refused by the rules (a test's own local server); default none. */
  allowAddresses?: readonly string[];
  /** `https://gateway.example/ipfs/` style prefix the CID path is appended to; null: none. */
  ipfsGateway: string | null;
  /** User-Agent sent with every request. */
  userAgent: string;
  /**
   * Certificates trusted for https on top of the system's roots (PEM): the demo's and the tests'
   * own local TLS servers; default none.
   */
  ca?: readonly string[];
}

export type FetchResult =
  | { ok: true; bytes: Uint8Array; contentType: string | null; finalUrl: string }
  | { ok: false; code: FetchErrorCode; retryable: boolean; detail?: string };

export type FetchErrorCode =
  | 'bad_uri'
  | 'unsupported_scheme'
  | 'no_ipfs_gateway'
  | 'bad_data_uri'
  | 'dns_failed'
  | 'blocked_address'
  | 'connect_failed'
  | 'timeout'
  | 'too_many_redirects'
  | 'bad_redirect'
  | 'too_large'
  | 'bad_content_type'
  | 'http_error';

const BLOCKED = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['2002::', 16],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const)
  BLOCKED.addSubnet(net, prefix, 'ipv6');

/** True when an address must not be fetched from (private, loopback, link-local, metadata, …). */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, 'ipv4');
  if (family === 6) {
    const lower = address.toLowerCase();
    // IPv4-mapped / compatible forms are judged by their IPv4 address.
    const mapped = /^(?:0{0,4}:){0,5}(?:ffff:)?(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower.replace(/^::/, ''));
    if (mapped && isIP(mapped[1]!) === 4) return BLOCKED.check(mapped[1]!, 'ipv4');
    // ::ffff:a.b written in hex, the IPv4-compatible ::a.b and the SIIT ::ffff:0:a.b alike
    const hexMapped = /^::(?:ffff:(?:0{1,4}:)?)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
    if (hexMapped) {
      const hi = parseInt(hexMapped[1]!, 16);
      const lo = parseInt(hexMapped[2]!, 16);
      return BLOCKED.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, 'ipv4');
    }
    return BLOCKED.check(address, 'ipv6');
  }
  return true;
}

const ALLOWED_TYPES = /^(application\/(?:[\w.+-]*\+)?json|text\/plain|application\/octet-stream)$/i;

/** The media type of a Content-Type header is acceptable for a feedback file (absent: yes). */
export function acceptableContentType(header: string | null): boolean {
  if (header === null || header.trim() === '') return true;
  return ALLOWED_TYPES.test(header.split(';')[0]!.trim());
}

/** Decodes a `data:` URI (base64 or percent-encoded); null when malformed. */
export function decodeDataUri(uri: string, maxBytes: number): { bytes: Uint8Array; type: string } | null {
  const comma = uri.indexOf(',');
  if (!uri.toLowerCase().startsWith('data:') || comma < 0) return null;
  const meta = uri
    .slice(5, comma)
    .split(';')
    .map((s) => s.trim());
  const type = meta[0] || 'text/plain';
  const body = uri.slice(comma + 1);
  // A base64 body decodes to at most 3/4 of its length: refuse what cannot fit first.
  if (body.length > maxBytes * 2) return null;
  try {
    const bytes = meta.slice(1).some((m) => m.toLowerCase() === 'base64')
      ? Buffer.from(body.replace(/\s+/g, ''), 'base64')
      : Buffer.from(decodeURIComponent(body), 'utf8');
    return { bytes: new Uint8Array(bytes), type };
  } catch {
    return null;
  }
}

/** The http(s) URL an `ipfs://` URI is fetched from through `gateway`; null when malformed. */
export function ipfsUrl(uri: string, gateway: string): string | null {
  const path = uri.slice('ipfs://'.length).replace(/^ipfs\//, '');
  if (!/^[A-Za-z0-9][A-Za-z0-9._~/-]*$/.test(path) || path.includes('..')) return null;
  return `${gateway.endsWith('/') ? gateway : `${gateway}/`}${path}`;
}

const fail = (code: FetchErrorCode, retryable: boolean, detail?: string): FetchResult => ({
  ok: false,
  code,
  retryable,
  ...(detail === undefined ? {} : { detail: detail.slice(0, 200) }),
});

/** Resolves a host and checks every address; returns the address to connect to. */
async function resolveChecked(
  host: string,
  limits: FetchLimits,
): Promise<{ address: string; family: number } | FetchResult> {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  let addrs: { address: string; family: number }[];
  if (isIP(bare)) addrs = [{ address: bare, family: isIP(bare) }];
  else {
    try {
      addrs = await lookup(bare, { all: true, verbatim: true });
    } catch (e) {
      return fail('dns_failed', true, (e as Error).message);
    }
  }
  if (addrs.length === 0) return fail('dns_failed', true);
  const refused = (a: string) => isBlockedAddress(a) && !(limits.allowAddresses ?? []).includes(a);
  if (!limits.allowPrivate && addrs.some((a) => refused(a.address)))
    return fail('blocked_address', false, `${bare} resolves to a refused address`);
  return addrs[0]!;
}

interface Hop {
  status: number;
  location: string | null;
  contentType: string | null;
  headers: http.IncomingHttpHeaders;
  bytes: Uint8Array | null;
  error?: FetchResult;
}

/**
 * What a hop reads of the answer: `document` (a 2xx body of an acceptable content type, within the
 * cap; nothing of any other answer), `any` (the body of every non-redirect answer, any type, within
 * the cap) or `none` (the status and headers only).
 */
type ReadMode = 'document' | 'any' | 'none';

interface HopRequest {
  method: string;
  headers: Record<string, string>;
  body: Uint8Array | null;
  read: ReadMode;
}

const DOCUMENT_REQUEST: HopRequest = {
  method: 'GET',
  headers: { accept: 'application/json, text/plain;q=0.5' },
  body: null,
  read: 'document',
};

/** One request to a checked address; reads what `req.read` says, within the byte cap. */
function requestOnce(
  url: URL,
  target: { address: string; family: number },
  limits: FetchLimits,
  signal: AbortSignal,
  req: HopRequest = DOCUMENT_REQUEST,
): Promise<Hop> {
  const pinned: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) cb(null, [{ address: target.address, family: target.family }]);
    else cb(null, target.address, target.family);
  };
  const mod = url.protocol === 'https:' ? https : http;
  const ca =
    url.protocol === 'https:' && limits.ca && limits.ca.length > 0
      ? [...rootCertificates, ...limits.ca]
      : undefined;
  return new Promise((resolve) => {
    const request = mod.request(
      url,
      {
        method: req.method,
        lookup: pinned,
        signal,
        headers: { ...req.headers, 'user-agent': limits.userAgent },
        agent: false,
        ...(ca ? { ca } : {}),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        const contentType = (res.headers['content-type'] as string | undefined) ?? null;
        const location = (res.headers.location as string | undefined) ?? null;
        const headers = res.headers;
        const redirect = status >= 300 && status < 400 && status !== 304;
        if (req.read === 'none' || redirect || (req.read === 'document' && (status < 200 || status >= 300))) {
          // the body of a redirect or an error is never read: a hostile server could send it forever
          res.destroy();
          resolve({ status, location, contentType, headers, bytes: null });
          return;
        }
        if (req.read === 'document' && !acceptableContentType(contentType)) {
          res.destroy();
          resolve({
            status,
            location,
            contentType,
            headers,
            bytes: null,
            error: fail('bad_content_type', false, contentType ?? ''),
          });
          return;
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > limits.maxBytes) {
          res.destroy();
          resolve({ status, location, contentType, headers, bytes: null, error: fail('too_large', false) });
          return;
        }
        const parts: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > limits.maxBytes) {
            res.destroy();
            resolve({ status, location, contentType, headers, bytes: null, error: fail('too_large', false) });
            return;
          }
          parts.push(chunk);
        });
        res.on('end', () =>
          resolve({ status, location, contentType, headers, bytes: new Uint8Array(Buffer.concat(parts)) }),
        );
        res.on('error', (e) =>
          resolve({
            status,
            location,
            contentType,
            headers,
            bytes: null,
            error: signal.aborted ? fail('timeout', true) : fail('connect_failed', true, e.message),
          }),
        );
      },
    );
    request.on('error', (e) =>
      resolve({
        status: 0,
        location: null,
        contentType: null,
        headers: {},
        bytes: null,
        error: signal.aborted ? fail('timeout', true) : fail('connect_failed', true, e.message),
      }),
    );
    request.end(req.body ?? undefined);
  });
}

/** A URL of an http(s) hop, checked: null with the failure when it may not be requested. */
function checkedUrl(current: string, hop: number): URL | FetchResult {
  let url: URL;
  try {
    url = new URL(current);
  } catch {
    return fail(hop === 0 ? 'bad_uri' : 'bad_redirect', false);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return fail(hop === 0 ? 'unsupported_scheme' : 'bad_redirect', false, url.protocol);
  if (url.username || url.password) return fail('bad_uri', false, 'credentials in the URL');
  return url;
}

/** The checked address of a URL's host, or the failure (the deadline's abort included). */
async function targetOf(url: URL, limits: FetchLimits, signal: AbortSignal) {
  const target = await Promise.race([
    resolveChecked(url.hostname, limits),
    new Promise<FetchResult>((r) => {
      if (signal.aborted) r(fail('timeout', true));
      signal.addEventListener('abort', () => r(fail('timeout', true)));
    }),
  ]);
  if ('ok' in target) return target;
  if (signal.aborted) return fail('timeout', true);
  return target;
}

/** 408, 425, 429 and 5xx may pass; any other status is the server's answer. */
const retryableStatus = (status: number) =>
  status === 408 || status === 425 || status === 429 || status >= 500;

/** Fetches the document a feedbackURI names, under `limits` (never throws). */
export async function fetchDocument(uri: string, limits: FetchLimits): Promise<FetchResult> {
  const trimmed = uri.trim();
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed)?.[1]?.toLowerCase();
  if (scheme === 'data') {
    const d = decodeDataUri(trimmed, limits.maxBytes);
    if (!d) return fail('bad_data_uri', false);
    if (d.bytes.length > limits.maxBytes) return fail('too_large', false);
    if (!acceptableContentType(d.type)) return fail('bad_content_type', false, d.type);
    return { ok: true, bytes: d.bytes, contentType: d.type, finalUrl: 'data:' };
  }
  let start: string;
  if (scheme === 'ipfs') {
    if (!limits.ipfsGateway) return fail('no_ipfs_gateway', true);
    const u = ipfsUrl(trimmed, limits.ipfsGateway);
    if (!u) return fail('bad_uri', false);
    start = u;
  } else if (scheme === 'http' || scheme === 'https') start = trimmed;
  else return fail('unsupported_scheme', false, scheme ?? '');

  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), limits.timeoutMs);
  try {
    let current = start;
    for (let hop = 0; ; hop++) {
      const url = checkedUrl(current, hop);
      if ('ok' in url) return url;
      const target = await targetOf(url, limits, abort.signal);
      if ('ok' in target) return target;
      const res = await requestOnce(url, target, limits, abort.signal);
      if (res.error) return res.error;
      if (res.status >= 300 && res.status < 400 && res.status !== 304) {
        if (!res.location) return fail('bad_redirect', false);
        if (hop >= limits.maxRedirects) return fail('too_many_redirects', false);
        current = new URL(res.location, url).toString();
        continue;
      }
      if (res.status >= 200 && res.status < 300 && res.bytes)
        return { ok: true, bytes: res.bytes, contentType: res.contentType, finalUrl: url.toString() };
      return fail('http_error', retryableStatus(res.status), `HTTP ${res.status}`);
    }
  } finally {
    clearTimeout(timer);
    abort.abort(); // whatever is still open (a response body nobody reads) is closed now
  }
}

/** The status an http(s) URL answers a GET with, following checked redirects; the body is never read. */
export type StatusResult =
  | { ok: true; status: number; finalUrl: string }
  | { ok: false; code: FetchErrorCode; retryable: boolean; detail?: string };

/** GETs an http(s) URL under `limits` (redirects followed and checked) and returns its final status (never throws). */
export async function fetchStatus(uri: string, limits: FetchLimits): Promise<StatusResult> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), limits.timeoutMs);
  try {
    let current = uri.trim();
    for (let hop = 0; ; hop++) {
      const url = checkedUrl(current, hop);
      if ('ok' in url) return url as StatusResult;
      const target = await targetOf(url, limits, abort.signal);
      if ('ok' in target) return target as StatusResult;
      const res = await requestOnce(url, target, limits, abort.signal, {
        method: 'GET',
        headers: { accept: '*/*' },
        body: null,
        read: 'none',
      });
      if (res.error) return res.error as StatusResult;
      if (res.status >= 300 && res.status < 400 && res.status !== 304) {
        if (!res.location) return fail('bad_redirect', false) as StatusResult;
        if (hop >= limits.maxRedirects) return fail('too_many_redirects', false) as StatusResult;
        current = new URL(res.location, url).toString();
        continue;
      }
      return { ok: true, status: res.status, finalUrl: url.toString() };
    }
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

/** One exchange with an http(s) URL: any method, any answer (redirects are returned, not followed). */
export type ExchangeResult =
  | { ok: true; status: number; headers: http.IncomingHttpHeaders; bytes: Uint8Array }
  | { ok: false; code: FetchErrorCode; retryable: boolean; detail?: string };

/**
 * Sends one request to an http(s) URL under `limits` (its host's addresses checked, the connection
 * pinned to the checked one, the byte cap on the answer's body whatever its status and type) and
 * returns the answer; a redirect comes back as it is (the caller decides whether to follow it, and
 * calls again: each call is checked). One deadline (`timeoutMs`), and `signal` ends it sooner. Never
 * throws.
 */
export async function safeRequest(
  uri: string,
  init: { method: string; headers: Record<string, string>; body: Uint8Array | null; signal?: AbortSignal },
  limits: FetchLimits,
): Promise<ExchangeResult> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), limits.timeoutMs);
  const onAbort = () => abort.abort();
  if (init.signal?.aborted) abort.abort();
  init.signal?.addEventListener('abort', onAbort);
  try {
    const url = checkedUrl(uri, 0);
    if ('ok' in url) return url as ExchangeResult;
    const target = await targetOf(url, limits, abort.signal);
    if ('ok' in target) return target as ExchangeResult;
    const res = await requestOnce(url, target, limits, abort.signal, {
      method: init.method,
      headers: init.headers,
      body: init.body,
      read: 'any',
    });
    if (res.error) return res.error as ExchangeResult;
    return { ok: true, status: res.status, headers: res.headers, bytes: res.bytes ?? new Uint8Array() };
  } finally {
    clearTimeout(timer);
    init.signal?.removeEventListener('abort', onAbort);
    abort.abort();
  }
}
