/**
 * The demo's registration files (src/demo/registrations.ts, played by `repindex demo`): agents on a
 * local base chain pointed with `setAgentURI` at local https sites, indexed by the real pass,
 * fetched by the real fetcher and probed by the real prober (the official MCP client against the
 * SDK's server, an A2A card, web pages). Every file state, every domain proof and both liveness
 * outcomes show, through the free `/stats/registrations` and `/agents/{network}/{id}/registration`,
 * the paid agent detail and the explorer's agent page. Runs on PGlite and (with DATABASE_URL)
 * PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { privateKeyToAddress } from 'viem/accounts';
import type { Hex } from 'viem';
import {
  fetchDemoRegistrations,
  HOSTILE_NAME,
  playRegistrationScenario,
  REGISTRATION_CASES,
  startRegistrationSites,
  type RegistrationAgents,
  type RegistrationFacts,
  type RegistrationSites,
} from '../src/demo/registrations.js';
import { demoKey } from '../src/demo/market.js';
import { giveFeedback, registerAgent } from '../src/demo/registries.js';
import { createApp } from '../src/doors/http/app.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { refreshAfterPass } from '../src/after-pass.js';
import { registry } from '../src/metrics.js';
import { agentDetailHandler } from '../src/paid/agent-detail.js';
import type { Config } from '../src/config.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import {
  configFor,
  quietLogger,
  startLocalChain,
  target,
  type LocalChain,
} from './helpers/indexer-fixtures.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- the served JSON is read field by field */

let chain: LocalChain;
let t: TestDatabase;
let sites: RegistrationSites;
let facts: RegistrationFacts;
let config: Config;
let app: ReturnType<typeof createApp>;
let report: Awaited<ReturnType<typeof fetchDemoRegistrations>>;
let freeBefore: unknown;

/** Free answers whose contract the registration files must not move (counts, leaderboard, types). */
async function freeAnswers() {
  const health = await get('/health');
  return {
    agents: health.agents,
    ratings: health.feedback_entries,
    chains: ((await get('/chains')) as any[]).map((c) => [c.network, c.agents, c.ratings]),
    leaderboard: (await get('/leaderboard')).rows,
    types: { ...(await get('/stats/types')), refreshed_at: null },
  };
}

const get = async (path: string) => {
  const res = await app.request(path);
  expect(res.status, path).toBe(200);
  return (await res.json()) as any;
};
const reg = async (c: (typeof REGISTRATION_CASES)[number]) =>
  (await get(`/agents/base/${facts.agents[c]}/registration`)).registration;

beforeAll(async () => {
  [chain, t, sites] = await Promise.all([
    startLocalChain('base', 8453),
    openTestDatabase(),
    startRegistrationSites(),
  ]);
  // One agent per case, registered without a URI by its own owner (the demo uses the scenario's).
  const agents = {} as RegistrationAgents;
  const fund = `0x${(10n ** 21n).toString(16)}`;
  for (const c of REGISTRATION_CASES) {
    const ownerKey: Hex = demoKey(`registration-test:${c}`);
    await chain.node.request('hardhat_setBalance', [privateKeyToAddress(ownerKey), fund]);
    const { agentId } = await registerAgent(chain.reg, ownerKey, '');
    agents[c] = { agentId, ownerKey };
  }
  // a rating, so that the leaderboard holds a row
  await giveFeedback(chain.reg, chain.node.privateKeys[1]!, { agentId: agents.valid.agentId, value: 80 });
  config = configFor([target(chain, { startBlock: 0 })]);
  app = createApp({ config, db: t.db, now: () => new Date(), freeCache: null });
  const pass = async () => {
    const r = await runIndexPass({
      db: t.db,
      config,
      log: quietLogger(),
      afterPass: refreshAfterPass,
      progress: 'off',
    });
    if (r.status !== 'ok' || r.failed.length > 0) throw new Error('index pass failed');
  };
  // The free answers before the cases are played on these agents, and after: the same.
  await pass();
  freeBefore = await freeAnswers();
  facts = await playRegistrationScenario(chain.node, chain.reg, sites, agents);
  await pass();
  report = await fetchDemoRegistrations(t.db, config, sites, facts);
}, 180_000);

afterAll(async () => {
  await sites?.close();
  await t?.close();
  await chain?.close();
});

describe("the demo's registration files", () => {
  it('move no free answer: the cases are played on existing agents (setAgentURI), none is added', async () => {
    expect(await freeAnswers()).toEqual(freeBefore);
    expect((freeBefore as any).agents).toBe(REGISTRATION_CASES.length);
    expect((freeBefore as any).leaderboard).toHaveLength(1);
  });

  it('fetches every file once, then re-fetches them (the edited one is changed); probes every http(s) endpoint', async () => {
    // the pending ipfs file waits for a gateway; the others were read
    expect(report.first).toMatchObject({ valid: 5, invalid: 1, unreachable: 1, changed: 0, waiting: 1 });
    expect(report.again).toMatchObject({ valid: 4, invalid: 1, unreachable: 1, changed: 1 });
    // valid: MCP, A2A, web; older shape: web, MCP, A2A; changed: web; hostile: web
    expect(report.probes).toEqual({ probed: 8, alive: 5, dead: 3 });
    // and the metrics count them
    const probes = (await registry.getSingleMetric('repindex_liveness_probes_total')!.get()).values;
    expect(
      probes.find((v) => v.labels.probe === 'mcp' && v.labels.result === 'alive')?.value,
    ).toBeGreaterThanOrEqual(1);
    const files = (await registry.getSingleMetric('repindex_registration_files_total')!.get()).values;
    expect(files.find((v) => v.labels.outcome === 'changed')?.value).toBeGreaterThanOrEqual(1);
  });

  it('/stats/registrations shows every file state, every domain proof and both liveness outcomes, with the funnel', async () => {
    const s = await get('/stats/registrations');
    expect(s.advisory).toBe(true);
    expect(s.funnel).toEqual([
      'agents',
      'with_uri',
      'fetched',
      'valid_file',
      'verified_domain',
      'live_endpoint',
    ]);
    const base = s.chains.find((c: any) => c.network === 'base');
    expect(base).toMatchObject({
      agents: REGISTRATION_CASES.length,
      with_uri: REGISTRATION_CASES.length,
      // pending (no gateway) and unreachable (404) never answered with a file
      fetched: REGISTRATION_CASES.length - 2,
      // valid, older shape, hostile, inline, changed
      valid_file: 5,
      // valid, changed, hostile: home's well-known file lists them
      verified_domain: 3,
      live_endpoint: 3,
      file_states: { pending: 1, valid: 4, invalid: 1, unreachable: 1, changed: 1 },
      domain_proofs: { verified: 5, absent: 1, mismatch: 1, unreachable: 1 },
      endpoints: { total: 11, probed: 8, alive: 5, dead: 3 },
    });
    for (const k of ['pending', 'valid', 'invalid', 'unreachable', 'changed'])
      expect(base.file_states[k], k).toBeGreaterThan(0);
    // every other chain is listed, with nothing
    expect(s.chains.map((c: any) => c.network)).toEqual([...s.chains.map((c: any) => c.network)].sort());
    expect(s.totals.with_uri).toBe(base.with_uri);
    expect(s.chains.find((c: any) => c.network === 'ethereum')).toMatchObject({ agents: 0, with_uri: 0 });
  });

  it('valid: MCP (initialize + tools/list), A2A card and web alive, each host verified', async () => {
    const r = await reg('valid');
    expect(r).toMatchObject({
      state: 'valid',
      name: 'Atlas research agent',
      description: 'Answers research questions with sources.\nPaid per call over x402.',
      x402_support: true,
      active: true,
      supported_trust: ['reputation'],
      registrations_check: 'listed',
      problems: [],
      changed_at: null,
    });
    expect(r.declared).toMatch(/self-declared, never verified/);
    expect(r.fetched_at).not.toBeNull();
    expect(r.services.map((s: any) => [s.type, s.domain_proof, s.liveness.state, s.liveness.probe])).toEqual([
      ['MCP', 'verified', 'alive', 'mcp'],
      ['A2A', 'verified', 'alive', 'a2a'],
      ['web', 'verified', 'alive', 'web'],
    ]);
    expect(r.services[0].liveness).toMatchObject({ tool_count: 2, skill_count: null, reason: null });
    expect(r.services[1].liveness).toMatchObject({ skill_count: 3, tool_count: null });
    for (const s of r.services) expect(s.liveness.last_alive_at).toBe(s.liveness.last_checked_at);
  });

  it('the older shape (endpoints[], x402support) reads; its endpoints show absent, mismatch, unreachable and dead', async () => {
    const r = await reg('older_shape');
    expect(r).toMatchObject({ state: 'valid', x402_support: false, active: false, problems: [] });
    const by = Object.fromEntries(r.services.map((s: any) => [s.type, s]));
    expect(by.web).toMatchObject({ domain_proof: 'absent', liveness: { state: 'dead', reason: 'http_404' } });
    expect(by.web.domain_reason).toBe('HTTP 404');
    expect(by.MCP).toMatchObject({ domain_proof: 'mismatch', liveness: { state: 'dead' } });
    expect(by.A2A).toMatchObject({
      domain_proof: 'unreachable',
      domain_reason: 'connect_failed',
      liveness: { state: 'dead', reason: 'connect_failed', last_alive_at: null },
    });
    expect(by.ENS).toMatchObject({
      url: 'older-shape.eth',
      domain_proof: null,
      liveness: { state: 'not_probed' },
    });
  });

  it('invalid: the failing fields are named, a registrations[] naming another agent included', async () => {
    const r = await reg('invalid');
    expect(r.state).toBe('invalid');
    expect(r.registrations_check).toBe('mismatch');
    expect(r.problems).toEqual(
      expect.arrayContaining([
        { field: 'type', problem: 'unexpected_value' },
        { field: 'name', problem: 'missing' },
        { field: 'description', problem: 'not_a_string' },
        { field: 'services', problem: 'not_an_array' },
        { field: 'registrations', problem: 'does_not_list_this_agent' },
      ]),
    );
    expect(r.services).toEqual([]);
  });

  it('unreachable (404), changed (edited after the first fetch) and pending (ipfs, no gateway)', async () => {
    const u = await reg('unreachable');
    expect(u).toMatchObject({ state: 'unreachable', name: null, fetched_at: null });
    expect(u.fetch.last_error_code).toBe('http_error');
    const c = await reg('changed');
    expect(c).toMatchObject({ state: 'changed', description: 'Edited after the first fetch.', problems: [] });
    expect(c.changed_at).not.toBeNull();
    const p = await reg('pending');
    expect(p).toMatchObject({ state: 'pending', uri: facts.uris.pending, fetched_at: null });
    expect(p.fetch.last_error_code).toBe('no_ipfs_gateway');
    const i = await reg('inline');
    expect(i).toMatchObject({ state: 'valid', name: 'Inline agent' });
    expect(i.services).toMatchObject([{ type: 'ENS', liveness: { state: 'not_probed' } }]);
  });

  it('hostile text is served as text, never probed when not http(s)', async () => {
    const r = await reg('hostile');
    expect(r.state).toBe('valid');
    expect(r.name).toBe(HOSTILE_NAME);
    expect(r.image).toBe('javascript:alert("image")');
    const js = r.services.find((s: any) => s.url.startsWith('javascript:'));
    expect(js).toMatchObject({
      type: '<b>custom</b>',
      domain_proof: null,
      liveness: { state: 'not_probed' },
    });
  });

  it('the paid agent detail carries the same registration as the free route', async () => {
    const ctx = { config, db: t.db, now: () => new Date() };
    for (const c of ['valid', 'older_shape', 'pending'] as const) {
      const v = await agentDetailHandler.validate(ctx, {
        params: { network: 'base', agent_id: facts.agents[c] },
        query: {},
      });
      if (!v.ok) throw new Error(JSON.stringify(v.body));
      const body = JSON.parse(
        JSON.stringify((await agentDetailHandler.run(ctx, v.input, { receipt: null })).body),
      );
      expect(body.registration).toEqual(await reg(c));
      expect(body.agent_uri).toBe(facts.uris[c]);
    }
  });

  it("the explorer's agent page: declared text labelled and escaped, services with proof and liveness, the owner linked", async () => {
    const res = await app.request(`/explore/agents/base/${facts.agents.hostile}`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<img src=x/i);
    expect(html).not.toMatch(/href="javascript:/i);
    expect(html).toContain('&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt; Evil &amp; &quot;Co&quot;');
    expect(html).toMatch(/Declared by the agent/);
    expect(html).toMatch(/self-declared, never verified/);
    expect(html).toMatch(/id="owner-link" href="\/explore\/wallets\/0x[0-9a-fA-F]{40}"/);
    const valid = await (await app.request(`/explore/agents/base/${facts.agents.valid}`)).text();
    expect(valid).toMatch(/<span class="proof proof-verified">verified<\/span>/);
    expect(valid).toMatch(/<span class="live live-alive">alive<\/span>, 2 tools/);
    expect(valid).toMatch(/3 skills/);
    const older = await (await app.request(`/explore/agents/base/${facts.agents.older_shape}`)).text();
    for (const p of ['absent', 'mismatch', 'unreachable']) expect(older).toContain(`proof-${p}`);
    expect(older).toMatch(/live-dead/);
    const none = await app.request('/explore/agents/base/424242');
    expect(none.status).toBe(404);
    expect(await none.text()).toMatch(/agent not indexed/);
  });
});
