/**
 * The registration routes over HTTP on the demo index (whose agents name agentURIs the demo never
 * fetches: every file is `pending`): the free `GET /agents/{network}/{agent_id}/registration`
 * (its errors as the contract's other routes give them), `GET /stats/registrations` (the funnel per
 * chain, every chain listed), both in the OpenAPI document; the explorer's agent page and the links
 * to it from the wallet and chain pages.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/doors/http/app.js';
import { EXPLORER_CSP } from '../src/doors/explorer/routes.js';
import type { Demo } from '../src/demo/run-demo.js';
import { openDemoCopy } from './helpers/demo.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const NOW = new Date('2026-11-01T12:00:00Z');
let demo: Demo;
let app: ReturnType<typeof createApp>;

const json = async (path: string, status = 200) => {
  const res = await app.request(path);
  expect(res.status, path).toBe(status);
  return (await res.json()) as any;
};

beforeAll(async () => {
  demo = await openDemoCopy();
  app = createApp({ config: demo.config, db: demo.db, now: () => NOW });
}, 300_000);
afterAll(async () => {
  await demo?.close();
});

describe('GET /agents/{network}/{agent_id}/registration (free)', () => {
  it("serves an agent's file (pending: never fetched here), its owner and the paid route; /v1 too", async () => {
    const a = demo.facts.agents.find((x) => x.network === 'base' && x.agentId === 0)!;
    const body = await json('/agents/base/0/registration');
    expect(body).toMatchObject({
      network: 'base',
      agent_id: '0',
      owner: a.owner.toLowerCase(),
      agent_uri: a.agentURI,
      detail_route: 'GET /reputation/agent/base/0',
    });
    expect(body.registration).toMatchObject({
      state: 'pending',
      uri: a.agentURI,
      name: null,
      services: [],
      problems: [],
      fetched_at: null,
      fetch: { state: 'queued', attempts: 0 },
    });
    expect(body.registration.declared).toMatch(/self-declared, never verified/);
    expect(await json('/v1/agents/base/0/registration')).toEqual(body);
    const res = await app.request('/agents/base/000/registration');
    expect(res.headers.get('cache-control')).toBe('public, max-age=60');
    expect(((await res.json()) as any).agent_id).toBe('0');
  });

  it('unknown network 404 (known_networks), a malformed id 422, an agent not indexed 404', async () => {
    const unknown = await json('/agents/nowhere/1/registration', 404);
    expect(unknown.detail.error).toBe('unknown_network');
    expect(unknown.detail.known_networks).toContain('base');
    const bad = await json('/agents/base/abc/registration', 422);
    expect(bad.detail[0]).toMatchObject({ loc: ['path', 'agent_id'], input: 'abc' });
    expect(await json('/agents/base/999999/registration', 404)).toEqual({ detail: 'agent not indexed' });
  });

  it('GET /stats/registrations: every chain, the funnel; here every file is pending', async () => {
    const s = await json('/stats/registrations');
    const chains = (await json('/chains')) as any[];
    expect(s.chains.map((c: any) => c.network)).toEqual(chains.map((c) => c.network).sort());
    for (const c of s.chains) {
      const agents = demo.facts.agents.filter((a) => a.network === c.network);
      expect(c.agents, c.network).toBe(chains.find((x) => x.network === c.network).agents);
      expect(c.with_uri, c.network).toBe(agents.filter((a) => a.agentURI !== '').length);
      expect(c.file_states, c.network).toEqual({
        pending: c.with_uri,
        valid: 0,
        invalid: 0,
        unreachable: 0,
        changed: 0,
      });
      expect([c.fetched, c.valid_file, c.verified_domain, c.live_endpoint]).toEqual([0, 0, 0, 0]);
    }
    expect(s.totals.with_uri).toBe(demo.facts.agents.filter((a) => a.agentURI !== '').length);
    expect(s).toMatchObject({ advisory: true, fetcher_enabled: true, liveness_enabled: true });
  });

  it('both routes are in the OpenAPI document, free', async () => {
    const doc = await json('/openapi.json');
    expect(doc.paths['/agents/{network}/{agent_id}/registration'].get.tags).toEqual(['free']);
    expect(doc.paths['/stats/registrations'].get.tags).toEqual(['free']);
    expect(doc.components.schemas.Registration.properties.state.enum).toEqual([
      'pending',
      'valid',
      'invalid',
      'unreachable',
      'changed',
    ]);
  });
});

describe("the explorer's agent page", () => {
  it('shows the agent, its owner linked, its file pending; wallet and chain pages link to it', async () => {
    const a = demo.facts.multiChainOwner.agents.find((x) => x.network === 'base')!;
    const res = await app.request(`/explore/agents/base/${a.agentId}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toBe(EXPLORER_CSP);
    const html = await res.text();
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain(
      `id="owner-link" href="/explore/wallets/${demo.facts.multiChainOwner.address.toLowerCase()}"`,
    );
    expect(html).toMatch(/data-state="pending"/);
    expect(html).toMatch(/not fetched yet/);
    const wallet = await (await app.request(`/explore/wallets/${demo.facts.multiChainOwner.address}`)).text();
    for (const x of demo.facts.multiChainOwner.agents)
      expect(wallet).toContain(`href="/explore/agents/${x.network}/${x.agentId}"`);
    const chain = await (await app.request('/explore/chains/base')).text();
    expect(chain).toMatch(/href="\/explore\/agents\/base\/\d+"/);
  });

  it("an unknown network, a malformed id and an agent the index never saw answer the API's meaning as HTML", async () => {
    const unknown = await app.request('/explore/agents/nowhere/1');
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toMatch(/Unknown network/);
    expect((await app.request('/explore/agents/base/abc')).status).toBe(422);
    const none = await app.request('/explore/agents/base/424242');
    expect(none.status).toBe(404);
    expect(await none.text()).toMatch(/agent not indexed/);
  });
});
