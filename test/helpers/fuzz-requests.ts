/**
 * Request generators (fast-check) over every route and door of the service, and the checks every
 * answer must pass. Shared by the bounded fuzzer of `npm test` (test/fuzz-http.test.ts) and the
 * longer fuzz of `npm run soak` (bench/soak.ts).
 *
 * The checks (the contract's promises on EVERY answer): no 5xx except the documented 503
 * `facilitator_unavailable`; `Api-Version` and `RateLimit-Policy` present; a JSON body parses;
 * the status is one the contract (or this project's documented choices) names.
 */
import { connect } from 'node:net';
import fc from 'fast-check';

/** Every status the service documents, for any route, door or refused request. */
export const DOCUMENTED_STATUSES = new Set([
  200, 202, 204, 304, 400, 402, 404, 405, 406, 408, 410, 413, 415, 422, 429, 431, 503,
]);

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

const EVM = fc
  .uint8Array({ minLength: 20, maxLength: 20 })
  .map((b) => `0x${Buffer.from(b).toString('hex')}`)
  .chain((a) => fc.constantFrom(a, a.toUpperCase().replace('0X', '0x'), a.slice(2)));
const BASE58 = fc.stringMatching(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
const HOSTILE = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom(
    '',
    '..',
    '../..',
    '%',
    '%00',
    '%ff',
    '<script>alert(1)</script>',
    "' OR 1=1 --",
    'ＡＢＣ',
    '\u202e',
    'null',
    '-1',
    '1e309',
  ),
  fc.string({ maxLength: 3000 }),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 260n }).map(String),
);
/** One path segment: plausible or hostile, always percent-encoded (fetch would refuse raw bytes). */
const SEGMENT = fc
  .oneof(EVM, BASE58, HOSTILE, fc.constantFrom('base', 'ethereum', 'solana', 'nowhere', '1', '0'))
  .map((s) => encodeURIComponent(s));

const TEMPLATES: readonly ((s: string[]) => string)[] = [
  () => '/health',
  () => '/pricing',
  () => '/manifesto',
  (s) => `/search/${s[0]}`,
  (s) => `/wallets/${s[0]}/chains`,
  (s) => `/wallets/${s[0]}/exists`,
  () => '/chains',
  (s) => `/chains/${s[0]}`,
  () => '/feed',
  () => '/leaderboard',
  () => '/leaderboard/page',
  () => '/stats/facets',
  () => '/stats/types',
  () => '/stats/issuers',
  () => '/stats/documents',
  () => '/',
  (s) => `/explore/search?q=${s[0]}`,
  (s) => `/explore/wallets/${s[0]}`,
  (s) => `/explore/chains/${s[0]}`,
  (s) => `/explore/${s[0]}`,
  () => '/explore/assets/explorer.css',
  (s) => `/badge/${s[0]}.svg`,
  (s) => `/badge/${s[0]}`,
  () => '/a2a',
  () => '/mcp',
  () => '/.well-known/agent-card.json',
  () => '/.well-known/oauth-protected-resource',
  () => '/.well-known/openid-configuration',
  () => '/openapi.json',
  () => '/categories',
  () => '/names/resolve',
  () => '/names/reverse',
  () => '/workflows.json',
  () => '/api',
  (s) => `/auth/${s[0]}`,
  () => '/me',
  (s) => `/reputation/wallet/${s[0]}`,
  (s) => `/reputation/wallet/${s[0]}/history`,
  (s) => `/reputation/agent/${s[0]}/${s[1]}`,
  (s) => `/reputation/rater/${s[0]}`,
  (s) => `/${s[0]}/${s[1]}`,
];

const QUERY_KEYS = [
  'limit',
  'offset',
  'network',
  'days',
  'type',
  'snapshot',
  'q',
  'wallet',
  'name',
  'granularity',
  'max_ratings',
  'x',
];
const QUERY = fc
  .array(
    fc.tuple(
      fc.oneof(fc.constantFrom(...QUERY_KEYS), fc.string({ maxLength: 10 })),
      fc.oneof(HOSTILE, fc.integer().map(String)),
    ),
    {
      maxLength: 3,
    },
  )
  .map((pairs) => (pairs.length ? `?${new URLSearchParams(pairs).toString()}` : ''));

const TOOLS = [
  'rep_pricing',
  'rep_resolve',
  'rep_check_wallet',
  'rep_chains',
  'rep_feed',
  'rep_index_status',
  'rep_types',
  'rep_manifesto',
  'rep_lookup_wallet',
  'rep_rater_profile',
  'rep_lookup_agent',
  'rep_history',
  'rep_facets',
  'rep_leaderboard',
  'rep_nope',
];
const JSON_VALUE = fc.jsonValue({ maxDepth: 3 });
const TOOL_ARGS = fc.dictionary(
  fc.constantFrom(
    'wallet',
    'network',
    'agent_id',
    'q',
    'limit',
    'offset',
    'type',
    'payment',
    'snapshot',
    'max_ratings',
    'extra',
  ),
  fc.oneof(EVM, BASE58, HOSTILE, fc.integer(), fc.boolean(), JSON_VALUE),
  { maxKeys: 4 },
);
const MCP_MESSAGE = fc.oneof(
  fc.record({
    jsonrpc: fc.constant('2.0'),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 })),
    method: fc.constant('tools/call'),
    params: fc.record({ name: fc.constantFrom(...TOOLS), arguments: TOOL_ARGS }),
  }),
  fc.record({
    jsonrpc: fc.constant('2.0'),
    id: fc.integer(),
    method: fc.constantFrom('initialize', 'tools/list', 'ping', 'resources/list', 'prompts/list', 'nope'),
    params: fc.option(fc.dictionary(fc.string({ maxLength: 8 }), JSON_VALUE, { maxKeys: 3 }), {
      nil: undefined,
    }),
  }),
  fc.record({ jsonrpc: fc.constant('2.0'), method: fc.constant('notifications/initialized') }),
);
const A2A_MESSAGE = fc.record({
  jsonrpc: fc.constantFrom('2.0', '1.0'),
  id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null)),
  method: fc.constantFrom('message/send', 'message/stream', 'tasks/get', 'nope'),
  params: fc.oneof(
    fc.record({
      message: fc.record({
        parts: fc.array(
          fc.record({
            kind: fc.constantFrom('text', 'data', 'file'),
            text: fc.oneof(EVM, BASE58, HOSTILE, fc.constant('status')),
          }),
          { maxLength: 3 },
        ),
      }),
    }),
    JSON_VALUE,
  ),
});
/** A POST body: a well-formed message, a batch of them, any JSON, or broken text. */
const DOOR_BODY = (msg: fc.Arbitrary<unknown>) =>
  fc.oneof(
    { weight: 5, arbitrary: msg.map((m) => JSON.stringify(m)) },
    { weight: 1, arbitrary: fc.array(msg, { maxLength: 4 }).map((m) => JSON.stringify(m)) },
    { weight: 1, arbitrary: JSON_VALUE.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
  );

const HEADERS = fc.record(
  {
    accept: fc.constantFrom(
      'application/json',
      'application/json, text/event-stream',
      '*/*',
      'text/html',
      'image/svg+xml',
    ),
    'content-type': fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded'),
    'x-payment': fc.oneof(
      HOSTILE.map((s) => encodeURIComponent(s)),
      fc.base64String({ maxLength: 200 }),
    ),
    'if-none-match': fc.constantFrom('"x"', '*', 'W/"abc"'),
    origin: fc.constant('https://somewhere.example'),
  },
  { requiredKeys: [] },
);

/** Any request to any route or door, over fetch. */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc
  .tuple(
    fc.nat({ max: TEMPLATES.length - 1 }),
    fc.array(SEGMENT, { minLength: 2, maxLength: 2 }),
    fc.boolean(),
    QUERY,
    fc.constantFrom('GET', 'GET', 'GET', 'HEAD', 'POST', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'),
    HEADERS,
    DOOR_BODY(MCP_MESSAGE),
    DOOR_BODY(A2A_MESSAGE),
  )
  .map(([t, segs, v1, query, method, headers, mcpBody, a2aBody]) => {
    const route = TEMPLATES[t]!(segs);
    const path = `${v1 ? '/v1' : ''}${route}${query}`;
    const req: FuzzRequest = { method, path, headers: { ...headers } };
    if (method === 'POST' || method === 'PUT' || method === 'PATCH') {
      req.body = route === '/mcp' ? mcpBody : a2aBody;
      if (route === '/mcp' && headers.accept === undefined)
        req.headers.accept = 'application/json, text/event-stream';
    }
    return req;
  });

/** A raw HTTP/1.1 request line with arbitrary bytes in the target (what fetch cannot send). */
export const rawRequestLine: fc.Arbitrary<Buffer> = fc
  .tuple(
    fc.constantFrom('GET', 'POST', 'HEAD', 'FOO', 'G@T', 'get', ''),
    fc.oneof(
      fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.concat([Buffer.from('/search/'), Buffer.from(b)])),
      fc.string({ maxLength: 64 }).map((s) => Buffer.from(`/${s}`)),
      fc.nat({ max: 24_000 }).map((n) => Buffer.from(`/search/${'a'.repeat(n)}`)),
    ),
    fc.nat({ max: 20_000 }),
  )
  .map(([method, target, headerLen]) =>
    Buffer.concat([
      Buffer.from(`${method} `),
      target,
      Buffer.from(
        ` HTTP/1.1\r\nHost: 127.0.0.1\r\n${headerLen > 16_000 ? `X-Pad: ${'p'.repeat(headerLen)}\r\n` : ''}Connection: close\r\n\r\n`,
      ),
    ]),
  );

export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export async function sendFetch(base: string, r: FuzzRequest, clientAddress?: string): Promise<Answer> {
  const headers = { ...r.headers, ...(clientAddress ? { 'x-forwarded-for': clientAddress } : {}) };
  const res = await fetch(`${base}${r.path}`, {
    method: r.method,
    headers,
    body: r.body,
    redirect: 'manual',
  });
  const body = await res.text();
  const h: Record<string, string> = {};
  res.headers.forEach((v, k) => (h[k] = v));
  return { status: res.status, headers: h, body };
}

/** Writes raw bytes on a fresh connection; the answer is read until the server closes. */
export function sendRaw(base: string, raw: Buffer, timeoutMs = 15_000): Promise<Answer> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no answer in ${timeoutMs} ms`));
    }, timeoutMs);
    sock.on('data', (d: Buffer) => chunks.push(d));
    sock.on('error', () => undefined);
    sock.on('close', () => {
      clearTimeout(timer);
      const text = Buffer.concat(chunks).toString('latin1');
      const cut = text.indexOf('\r\n\r\n');
      const head = cut < 0 ? text : text.slice(0, cut);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({
        status: Number(statusLine.split(' ')[1] ?? 0),
        headers,
        body: cut < 0 ? '' : text.slice(cut + 4),
      });
    });
    sock.write(raw);
  });
}

/** The promises every answer keeps; returns the first broken one (null: all kept). */
export function brokenPromise(a: Answer, method: string): string | null {
  // The one documented redirect: `/explore` and `/explore/` send a browser home (docs/API.md).
  if (a.status === 302) {
    if (a.headers.location !== '/') return `302 to ${a.headers.location ?? 'nowhere'}`;
  } else if (!DOCUMENTED_STATUSES.has(a.status)) return `undocumented status ${a.status}`;
  if (a.status >= 500) {
    if (a.status !== 503) return `5xx ${a.status}`;
    try {
      if ((JSON.parse(a.body) as { error?: string }).error !== 'facilitator_unavailable')
        return `503 other than facilitator_unavailable: ${a.body.slice(0, 200)}`;
    } catch {
      return `503 without a JSON body`;
    }
  }
  if (a.headers['api-version'] !== '2.0.0') return 'no Api-Version header';
  if (!a.headers['ratelimit-policy']) return 'no RateLimit-Policy header';
  const ct = a.headers['content-type'] ?? '';
  const chunked = /chunked/i.test(a.headers['transfer-encoding'] ?? '');
  if (ct.startsWith('application/json') && method !== 'HEAD' && a.body !== '' && !chunked) {
    try {
      JSON.parse(a.body);
    } catch {
      return `JSON body does not parse: ${a.body.slice(0, 200)}`;
    }
  }
  return null;
}
