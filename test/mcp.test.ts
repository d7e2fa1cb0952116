/**
 * The MCP door on the demo scenario, through a real listening server and the official SDK client
 * (Streamable HTTP): tools/list, statelessness, JSON answers, 405 on GET, CORS, and the free tools
 * answering exactly what the HTTP route answers (compared with a direct in-process request of that
 * route, never with hard-coded numbers). PGlite, or PostgreSQL with TEST_DATABASE_URL.
 * The metered mapping against fake paid routes lives in test/mcp-metered.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createApp } from '../src/doors/http/app.js';
import type { AppContext } from '../src/doors/http/context.js';
import { FREE_TOOLS, METERED_TOOLS } from '../src/doors/mcp/tools.js';
import type { Demo } from '../src/demo/run-demo.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { payment, StubFacilitator, TREASURY } from './helpers/x402-stub.js';
import { openDemoCopy } from './helpers/demo.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const NOW = new Date('2026-11-01T12:00:00Z');
const NOBODY = '0x00000000000000000000000000000000000abcde';
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('MCP door on the demo scenario', () => {
  let demo: Demo;
  let server: RunningServer;
  let app: ReturnType<typeof createApp>;
  let client: Client;
  // Settlement is stubbed here; the real rail is payments-e2e.test.ts.
  const stub = new StubFacilitator();

  const direct = async (path: string) => {
    const res = await app.request(path);
    return { status: res.status, body: (await res.json()) as any };
  };
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = (await client.callTool({ name, arguments: args })) as any;
    return r;
  };
  const tool = async (name: string, args: Record<string, unknown> = {}) => {
    const r = await call(name, args);
    expect(r.isError ?? false).toBe(false);
    // The text content carries the same object as structuredContent (older clients).
    expect(JSON.parse(r.content[0].text)).toEqual(r.structuredContent);
    return r.structuredContent as any;
  };
  const rawPost = (body: unknown, headers: Record<string, string> = MCP_HEADERS, path = '/mcp') =>
    fetch(`${server.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });

  beforeAll(async () => {
    demo = await openDemoCopy();
    const ctx: AppContext = {
      config: { ...demo.config, treasuryAddress: TREASURY, rateLimit: { rate: 1_000_000, burst: 1_000_000 } },
      db: demo.db,
      now: () => NOW,
      facilitator: stub,
    };
    app = createApp(ctx);
    server = await startHttpServer(ctx, { host: '127.0.0.1', port: 0 });
    client = new Client({ name: 'mcp-test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  }, 300_000);
  afterAll(async () => {
    await client?.close();
    await server?.close();
    await demo?.close();
  });

  it('tools/list: exactly 14 tools, the six metered ones declare payment, the eight free ones never', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((x) => x.name).sort()).toEqual([...FREE_TOOLS, ...METERED_TOOLS].sort());
    expect(tools).toHaveLength(14);
    const withPayment = tools
      .filter((x) => 'payment' in ((x.inputSchema.properties ?? {}) as object))
      .map((x) => x.name);
    expect(withPayment.sort()).toEqual(
      [
        'rep_lookup_wallet',
        'rep_rater_profile',
        'rep_lookup_agent',
        'rep_history',
        'rep_facets',
        'rep_leaderboard',
      ].sort(),
    );
    for (const x of tools) {
      expect(x.name.startsWith('rep_')).toBe(true);
      expect(x.outputSchema?.type).toBe('object');
      if ((FREE_TOOLS as readonly string[]).includes(x.name))
        expect((x.inputSchema as any).additionalProperties).toBe(false);
    }
    const agent = tools.find((x) => x.name === 'rep_lookup_agent')!;
    expect(agent.inputSchema.required).toEqual(expect.arrayContaining(['network', 'agent_id']));
    expect((agent.inputSchema.properties as any).network.default).toBeUndefined();
    expect(Object.keys(tools.find((x) => x.name === 'rep_lookup_wallet')!.inputSchema.properties!)).toContain(
      'snapshot',
    );
  });

  it('stateless: no mcp-session-id, tools/call without initialize, application/json answers', async () => {
    const init = await rawPost({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
    });
    expect(init.status).toBe(200);
    expect(init.headers.get('mcp-session-id')).toBeNull();
    expect(init.headers.get('content-type')).toMatch(/^application\/json/);
    expect(((await init.json()) as any).result.serverInfo.name).toBe('repindex');

    const res = await rawPost({
      jsonrpc: '2.0',
      id: 'x-7',
      method: 'tools/call',
      params: { name: 'rep_index_status', arguments: {} },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeNull();
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('api-version')).toBe('2.0.0');
    const body = (await res.json()) as any;
    expect(body.id).toBe('x-7');
    expect(body.result.structuredContent.status).toBe('ok');
    expect(body.result.structuredContent.data).toEqual((await direct('/health')).body);

    // The /v1 alias is the same door.
    const v1 = await rawPost({ jsonrpc: '2.0', id: 2, method: 'tools/list' }, MCP_HEADERS, '/v1/mcp');
    expect(v1.status).toBe(200);
    expect(((await v1.json()) as any).result.tools).toHaveLength(14);
  });

  it('the SDK header rules: 406 without the double Accept, 415 without JSON content type, 202 for a notification', async () => {
    const msg = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const noAccept = await rawPost(msg, { 'content-type': 'application/json', accept: 'application/json' });
    expect(noAccept.status).toBe(406);
    expect(((await noAccept.json()) as any).error.code).toBe(-32000);
    const noCt = await rawPost(msg, { 'content-type': 'text/plain', accept: MCP_HEADERS.accept });
    expect(noCt.status).toBe(415);
    const bad = await fetch(`${server.url}/mcp`, { method: 'POST', headers: MCP_HEADERS, body: '{not json' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).error.code).toBe(-32700);
    const note = await rawPost({ jsonrpc: '2.0', method: 'notifications/initialized' });
    expect(note.status).toBe(202);
  });

  it('GET /mcp answers 405 {detail}; the CORS preflight of /mcp is still 204', async () => {
    for (const p of ['/mcp', '/v1/mcp']) {
      const res = await fetch(`${server.url}${p}`, { headers: { accept: 'text/event-stream' } });
      expect(res.status).toBe(405);
      expect(typeof ((await res.json()) as any).detail).toBe('string');
    }
    const pre = await fetch(`${server.url}/mcp`, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'POST' },
    });
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    // Not in the OpenAPI document.
    const doc = (await direct('/openapi.json')).body;
    expect(Object.keys(doc.paths).filter((p: string) => p.includes('mcp'))).toEqual([]);
  });

  it('free tools answer status ok with exactly the JSON of their HTTP route', async () => {
    const owner = demo.facts.multiChainOwner.address;
    const agent = demo.facts.multiChainOwner.agents[0]!;
    const cases: [string, Record<string, unknown>, string][] = [
      ['rep_index_status', {}, '/health'],
      ['rep_types', {}, '/stats/types'],
      ['rep_manifesto', {}, '/manifesto'],
      ['rep_chains', {}, '/chains'],
      ['rep_chains', { network: 'base' }, '/chains/base'],
      ['rep_chains', { network: 'optimism', days: 7 }, '/chains/optimism?days=7'],
      ['rep_feed', {}, '/feed'],
      ['rep_feed', { network: 'arbitrum', limit: 5 }, '/feed?network=arbitrum&limit=5'],
      ['rep_resolve', { q: owner }, `/search/${owner}`],
      ['rep_resolve', { q: String(agent.agentId) }, `/search/${agent.agentId}`],
      ['rep_check_wallet', { wallet: owner }, `/wallets/${owner}/chains`],
      ['rep_check_wallet', { wallet: owner.toUpperCase().replace('0X', '0x') }, `/wallets/${owner}/chains`],
      ['rep_facets', {}, '/stats/facets'],
      ['rep_facets', { network: 'base' }, '/stats/facets?network=base'],
      ['rep_leaderboard', {}, '/leaderboard'],
    ];
    for (const [name, args, path] of cases) {
      const want = await direct(path);
      expect(want.status, path).toBe(200);
      const got = await tool(name, args);
      expect(got.status, name).toBe('ok');
      expect(got.http_status).toBe(200);
      expect(got.data, `${name} ${path}`).toEqual(want.body);
      expect(got.tool_caveats).toEqual([]);
    }
  });

  it('rep_leaderboard: the free page cut at limit declares its trimmed tail; pagination total is null', async () => {
    const want = (await direct('/leaderboard')).body;
    const got = await tool('rep_leaderboard', { limit: 2 });
    expect(got.status).toBe('ok');
    expect(got.data.rows).toEqual(want.rows.slice(0, 2));
    expect(got.pagination).toMatchObject({
      source: 'free',
      offset: 0,
      total: null,
      returned: Math.min(2, want.rows.length),
    });
    if (want.rows.length > 2) expect(got.tool_caveats.map((c: any) => c.code)).toEqual(['trimmed-tail']);
    const full = await tool('rep_leaderboard', { payment: 'dW51c2Vk' });
    expect(full.pagination.total).toBeNull();
    expect(full.tool_caveats.map((c: any) => c.code)).toContain('payment-not-used');
  });

  it('errors of free tools: invalid wallet is status error, unknown chain not_found, bad feed network error', async () => {
    const bad = await tool('rep_check_wallet', { wallet: 'not-a-wallet' });
    expect(bad.status).toBe('error');
    expect(bad.http_status).toBe(422);
    expect(bad.data).toEqual((await direct('/wallets/not-a-wallet/chains')).body);
    const chain = await tool('rep_chains', { network: 'atlantis' });
    expect(chain.status).toBe('not_found');
    expect(chain.http_status).toBe(404);
    const feed = await tool('rep_feed', { network: 'atlantis' });
    expect(feed.status).toBe('error');
    expect(feed.data.detail ?? feed.data).toBeTruthy();
    const q = await tool('rep_resolve', { q: 'hello world' });
    expect(q.status).toBe('error');
  });

  it('a dot-only argument (`..`, `.`) gets the refusal of the route named, never the answer of another route', async () => {
    // Built naively, `/search/..` is `/`, `/wallets/../chains` is `/chains` and `/chains/..` is `/`.
    const search = (await direct('/search/not-a-thing')).body;
    const wallet = (await direct('/wallets/not-a-wallet/chains')).body;
    const network = (await direct('/chains/atlantis')).body;
    expect(network.detail.error).toBe('unknown_network');
    for (const v of ['..', '.']) {
      const q = await tool('rep_resolve', { q: v });
      expect(q.status, v).toBe('error');
      expect(q.http_status, v).toBe(422);
      expect(q.route, v).toBe(`GET /search/${v}`);
      expect(q.data, v).toEqual({ detail: { ...search.detail, query: v } });

      for (const name of [
        'rep_check_wallet',
        'rep_lookup_wallet',
        'rep_rater_profile',
        'rep_history',
        'rep_facets',
      ]) {
        const w = await tool(name, { wallet: v });
        expect(w.status, `${name} ${v}`).toBe('error');
        expect(w.http_status, `${name} ${v}`).toBe(422);
        expect(w.route, `${name} ${v}`).toBe(`GET /wallets/${v}/chains`);
        expect(w.data, `${name} ${v}`).toEqual({ detail: { ...wallet.detail, wallet: v } });
      }

      const agent = await tool('rep_lookup_agent', { network: 'base', agent_id: v });
      expect(agent.status, v).toBe('error');
      expect(agent.http_status, v).toBe(422);
      expect(agent.data, v).toEqual({ detail: { ...search.detail, query: v } });

      const chain = await tool('rep_chains', { network: v });
      expect(chain.status, v).toBe('not_found');
      expect(chain.http_status, v).toBe(404);
      expect(chain.route, v).toBe(`GET /chains/${v}`);
      expect(chain.data, v).toEqual({ detail: { ...network.detail, network: v } });
    }
  });

  it('a free tool never accepts payment (input validation error)', async () => {
    const r = await call('rep_index_status', { payment: 'eyJ4IjoxfQ==' });
    expect(r.isError).toBe(true);
  });

  it('rep_pricing: the catalog of /pricing, the live index size of /health and a probe per metered tier', async () => {
    const pricing = (await direct('/pricing')).body;
    const health = (await direct('/health')).body;
    const got = await tool('rep_pricing');
    expect(got.status).toBe('ok');
    expect(got.data.tiers).toEqual(pricing.tiers);
    expect(got.data.treasury).toBe(TREASURY);
    expect(got.data.pricing_version).toBe(pricing.pricing_version);
    expect(got.data.index).toMatchObject({
      agents: health.agents,
      feedback_entries: health.feedback_entries,
      chains: health.chains.length,
    });
    expect(got.data.policies.policy_version).toBe(health.policy_version);
    const metered = pricing.tiers.filter((x: any) => !x.free).map((x: any) => x.id);
    expect(got.data.probes.map((p: any) => p.tier)).toEqual(metered);
    // Every metered route is mounted: each probe is a live 402 quoting the catalog price to the pinned treasury.
    for (const p of got.data.probes) {
      expect(p.live).toBe(true);
      expect(p.http_status).toBe(402);
      expect(p.recipient_check.verdict).toBe('OK_TO_PAY');
      expect(p.matches_catalog).toBe(true);
    }
  });

  it('metered tools decided by the free routes: nothing_to_buy, not_found, error (no quote)', async () => {
    const nothing = await tool('rep_lookup_wallet', { wallet: NOBODY });
    expect(nothing.status).toBe('nothing_to_buy');
    expect(nothing.preview).toEqual((await direct(`/wallets/${NOBODY}/chains`)).body);
    expect((await tool('rep_history', { wallet: NOBODY })).status).toBe('nothing_to_buy');
    expect((await tool('rep_facets', { wallet: NOBODY })).status).toBe('nothing_to_buy');
    expect((await tool('rep_lookup_wallet', { wallet: 'nope' })).status).toBe('error');
    expect((await tool('rep_rater_profile', { wallet: 'nope' })).status).toBe('error');
    const agent = await tool('rep_lookup_agent', { network: 'base', agent_id: '987654321' });
    expect(agent.status).toBe('not_found');
    expect(agent.http_status).toBe(200); // decided by the free /search answer
    const missing = await call('rep_lookup_agent', { agent_id: '1' });
    expect(missing.isError).toBe(true);
  });

  it('metered tools on a subject with data go to the paid route and return its 402 quote', async () => {
    const owner = demo.facts.multiChainOwner.address;
    const r = await tool('rep_lookup_wallet', { wallet: owner });
    expect(r.route).toBe(`GET /reputation/wallet/${owner}`);
    expect(r.status).toBe('payment_required');
    expect(r.http_status).toBe(402);
    expect(r.recipient_check).toMatchObject({ verdict: 'OK_TO_PAY', expected: TREASURY });
    expect(r.challenge.accepts.length).toBeGreaterThan(0);
    expect(r.challenge.pricing.tier).toBe('wallet-lookup');
  });

  it('a metered tool with a payment goes through the same paywall and returns the paid answer', async () => {
    const owner = demo.facts.multiChainOwner.address;
    const header = payment();
    const r = await tool('rep_lookup_wallet', { wallet: owner, payment: header });
    expect(r.status).toBe('ok');
    expect(r.payment).toMatchObject({ reused: false });
    expect(r.payment.receipt).toMatch(/^0x[0-9a-f]{64}$/);
    // The same header re-reads the same resource over HTTP for free: one paywall for both doors.
    const res = await app.request(`/reputation/wallet/${owner}`, { headers: { 'X-PAYMENT': header } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-payment-reused')).toBe('true');
    expect(r.data).toEqual(await res.json());
  });
});
