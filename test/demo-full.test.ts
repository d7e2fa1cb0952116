/**
 * The demo as `repindex demo` plays it (src/demo/run-demo.ts, `documents` and `registrations` on):
 * three local chains, the scenario, the evidence agent and the registration cases played on the
 * scenario's own base agents, all indexed, fetched and probed offline. Its `/stats/registrations`
 * shows every file state, every domain proof and both liveness outcomes at least once, the serving
 * banner points at them, and the registration cases added no agent. The demo's own database
 * (in-memory PGlite, its default).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/doors/http/app.js';
import { servingBanner, startDemo, type Demo } from '../src/demo/run-demo.js';
import { quietLogger } from './helpers/indexer-fixtures.js';
import { playedDemo } from './helpers/demo.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

let demo: Demo;
let app: ReturnType<typeof createApp>;

beforeAll(async () => {
  demo = await startDemo({ documents: true, registrations: true, log: quietLogger() });
  app = createApp({ config: demo.config, db: demo.db, now: () => new Date(), freeCache: null });
}, 300_000);

afterAll(async () => {
  await demo?.close();
});

const get = async (path: string) => {
  const res = await app.request(path);
  expect(res.status, path).toBe(200);
  return (await res.json()) as any;
};

describe('the demo, registrations on', () => {
  it('/stats/registrations shows every file state, domain proof and liveness outcome at least once', async () => {
    const s = await get('/stats/registrations');
    const base = s.chains.find((c: any) => c.network === 'base');
    for (const [k, v] of Object.entries(base.file_states)) expect(v, k).toBeGreaterThan(0);
    for (const [k, v] of Object.entries(base.domain_proofs)) expect(v, k).toBeGreaterThan(0);
    expect(base.endpoints.alive).toBeGreaterThan(0);
    expect(base.endpoints.dead).toBeGreaterThan(0);
    expect(base.endpoints.probed).toBeLessThan(base.endpoints.total); // ENS names are not probed
    expect(base.valid_file).toBeGreaterThanOrEqual(Math.max(base.verified_domain, base.live_endpoint));
    expect(base.live_endpoint).toBeGreaterThan(0);
    expect(base.verified_domain).toBeGreaterThan(0);
  });

  it('the cases are played on scenario agents: the only agent added is the evidence agent of the documents', async () => {
    const fixture = await playedDemo();
    const health = await get('/health');
    expect(health.agents).toBe(fixture.facts.totals.agents + 1);
    const valid = await get(`/agents/base/${demo.registrations!.agents.valid}/registration`);
    expect(valid.registration.state).toBe('valid');
    expect(valid.registration.services.map((x: any) => x.liveness.state)).toEqual([
      'alive',
      'alive',
      'alive',
    ]);
  });

  it('the serving banner points at the funnel and an agent page', () => {
    const text = servingBanner('http://127.0.0.1:1', demo.facts, 'pay', '7', demo.registrations ?? null);
    expect(text).toContain('curl -s http://127.0.0.1:1/stats/registrations');
    expect(text).toContain(`http://127.0.0.1:1/explore/agents/base/${demo.registrations!.agents.valid}`);
  });
});
