/**
 * The explorer's agent page in headless Debian Chromium (playwright-core), on the demo index with
 * two agents pointed at registration files on local https sites (the demo's certificate trusted,
 * 127.0.0.1 allowed), read by the real fetcher and probed by the real prober (a live MCP server,
 * an A2A card, web pages): the declared name and description show as text labelled as declared by
 * the agent (a hostile name runs nothing, opens no dialog, loads nothing), the services with their
 * domain proof and liveness as the JSON route serves them, the owner's page one click away and
 * linking back; the page breaks no CSP rule and fits a phone. Skipped, with the reason, only when
 * /usr/bin/chromium is absent.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { Demo } from '../src/demo/run-demo.js';
import { HOSTILE_NAME, startRegistrationSites, type RegistrationSites } from '../src/demo/registrations.js';
import { DEMO_TLS_CERT } from '../src/demo/tls.js';
import { drainProbes, proberContextFor } from '../src/liveness/prober.js';
import { drainRegistrations, registrationContextFor } from '../src/registrations/fetcher.js';
import { REGISTRATION_TYPE } from '../src/registrations/parse.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { setAgentUris } from '../src/store/agents.js';
import { syncRegistrationJobs } from '../src/store/registrations.js';
import {
  ARTIFACTS,
  hasChromium,
  isolatedPage,
  launchChromium,
  skipReason,
  warnSkipped,
  type IsolatedPage,
} from './helpers/chromium.js';
import { openDemoCopy } from './helpers/demo.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const SKIP = skipReason("the explorer's agent page");
const MOBILE = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true };
const HOSTILE_DESCRIPTION = `</dd><script>alert("description")</script>\n<img src=x onerror=alert(3)> & "quotes"`;

let demo: Demo;
let sites: RegistrationSites;
let server: RunningServer;
let browser: Browser | null = null;
let valid: { network: string; id: string; owner: string };
let hostile: { network: string; id: string; owner: string };

beforeAll(async () => {
  if (!hasChromium) {
    warnSkipped("the explorer's agent page");
    return;
  }
  [demo, sites] = await Promise.all([openDemoCopy(), startRegistrationSites()]);
  const base = demo.facts.agents.filter((a) => a.network === 'base').sort((a, b) => a.agentId - b.agentId);
  const owned = demo.facts.multiChainOwner.agents.find((a) => a.network === 'base')!;
  const v = base.find((a) => a.agentId !== owned.agentId)!;
  valid = { network: 'base', id: String(v.agentId), owner: v.owner.toLowerCase() };
  hostile = {
    network: 'base',
    id: String(owned.agentId),
    owner: demo.facts.multiChainOwner.address.toLowerCase(),
  };
  const home = sites.url.home;
  const registry = `eip155:8453:${demo.config.chains.find((c) => c.network === 'base')!.identityRegistry}`;
  const self = (id: string) => [{ agentId: Number(id), agentRegistry: registry }];
  sites.set(
    'home',
    '/valid.json',
    'application/json',
    JSON.stringify({
      type: REGISTRATION_TYPE,
      name: 'Atlas research agent',
      description: 'Answers research questions with sources.',
      services: [
        { name: 'MCP', endpoint: `${home}/mcp`, version: '2025-06-18' },
        { name: 'A2A', endpoint: `${home}/.well-known/agent-card.json` },
        { name: 'web', endpoint: `${sites.url.bare}/web` },
      ],
      x402Support: true,
      active: true,
      registrations: self(valid.id),
    }),
  );
  sites.set(
    'home',
    '/hostile.json',
    'application/json',
    JSON.stringify({
      type: REGISTRATION_TYPE,
      name: HOSTILE_NAME,
      description: HOSTILE_DESCRIPTION,
      image: 'javascript:alert("image")',
      services: [{ name: '<b>custom</b>', endpoint: 'javascript:alert("endpoint")' }],
      registrations: self(hostile.id),
    }),
  );
  sites.set(
    'home',
    '/.well-known/agent-registration.json',
    'application/json',
    JSON.stringify({ registrations: self(valid.id) }),
  );
  sites.set(
    'home',
    '/.well-known/agent-card.json',
    'application/json',
    JSON.stringify({ name: 'Atlas', skills: [{ id: 'research' }, { id: 'cite' }, { id: 'summarize' }] }),
  );
  await setAgentUris(demo.db, [
    {
      network: 'base',
      agentId: valid.id,
      uri: `${home}/valid.json`,
      blockNumber: 10 ** 9,
      logIndex: 0,
      declaredType: null,
    },
    {
      network: 'base',
      agentId: hostile.id,
      uri: `${home}/hostile.json`,
      blockNumber: 10 ** 9,
      logIndex: 0,
      declaredType: null,
    },
  ]);
  const agentIds = [valid.id, hostile.id];
  await syncRegistrationJobs(
    demo.db,
    agentIds.map((agentId) => ({ network: 'base', agentId })),
  );
  const scope = { network: 'base', agentIds };
  const trust = { allowAddresses: ['127.0.0.1'], ca: [DEMO_TLS_CERT] };
  const soon = () => new Date(Date.now() + 5000);
  const files = registrationContextFor(demo.db, demo.config);
  files.options.limits = { ...files.options.limits, ...trust };
  await drainRegistrations({ ...files, scope, clock: soon });
  const probes = proberContextFor(demo.db, demo.config);
  probes.options = {
    ...probes.options,
    limits: { ...probes.options.limits, ...trust },
    hostIntervalSeconds: 0,
  };
  await drainProbes({ ...probes, scope, clock: soon }, 30_000);
  server = await startHttpServer(
    { config: demo.config, db: demo.db, now: () => new Date() },
    { host: '127.0.0.1', port: 0 },
  );
  browser = await launchChromium();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await sites?.close();
  await demo?.close();
});

async function api(path: string): Promise<any> {
  const res = await fetch(`${server.url}${path}`);
  expect(res.status, path).toBe(200);
  return res.json();
}

async function open(path: string, options?: Parameters<typeof isolatedPage>[2]): Promise<IsolatedPage> {
  const p = await isolatedPage(browser!, server.url, options);
  const res = await p.page.goto(`${server.url}${path}`, { waitUntil: 'load' });
  expect(res?.status()).toBe(200);
  expect(res?.headers()['content-security-policy']).toContain("script-src 'self'");
  return p;
}

async function clean(p: IsolatedPage): Promise<void> {
  expect(p.external).toEqual([]);
  expect(p.errors).toEqual([]);
  expect(p.consoleErrors).toEqual([]);
  expect(p.dialogs).toEqual([]);
  expect(await p.page.locator('script').count()).toBe(0);
  await p.page.close();
}

const text = async (p: IsolatedPage, selector: string) => ((await p.page.textContent(selector)) ?? '').trim();

describe("the explorer's agent page in headless Chromium", () => {
  it('a valid file: declared name and description labelled, services with domain proof and liveness as served', async (ctx) => {
    if (!hasChromium) return ctx.skip(SKIP);
    const reg = (await api(`/agents/base/${valid.id}/registration`)).registration;
    expect(reg.state).toBe('valid');
    const p = await open(`/explore/agents/base/${valid.id}`);
    expect(await text(p, '#agent-id')).toBe(valid.id);
    expect(await p.page.getAttribute('#registration-state', 'data-state')).toBe('valid');
    expect(await text(p, '#declared-name')).toBe('Atlas research agent');
    expect(await text(p, '#declared-description')).toBe('Answers research questions with sources.');
    expect(await p.page.locator('h3', { hasText: 'Declared by the agent' }).count()).toBe(1);
    expect(await p.page.locator('text=self-declared, never verified').count()).toBeGreaterThan(0);
    expect(await p.page.locator('#services tbody tr').count()).toBe(reg.services.length);
    for (const [i, s] of (reg.services as any[]).entries()) {
      const row = p.page.locator(`#services tr[data-position="${i}"]`);
      expect((await row.locator('td.url').textContent())?.trim()).toBe(s.url);
      const proof = ((await row.locator('td.proof').textContent()) ?? '').trim();
      expect(proof.startsWith(s.domain_proof ?? 'n/a')).toBe(true);
      expect(
        ((await row.locator('td.liveness').textContent()) ?? '').trim().startsWith(s.liveness.state),
      ).toBe(true);
    }
    expect(reg.services.map((s: any) => s.liveness.state)).toEqual(['alive', 'alive', 'dead']);
    expect(await text(p, '#services tr[data-position="0"] td.liveness')).toMatch(/alive.*2 tools/);
    expect(await text(p, '#services tr[data-position="1"] td.liveness')).toMatch(/alive.*3 skills/);
    expect(await text(p, '#services tr[data-position="2"] td.liveness')).toMatch(/dead \(http_404\)/);
    const file = join(ARTIFACTS, 'explorer-agent.png');
    await p.page.screenshot({ path: file, fullPage: false });
    expect(statSync(file).size).toBeGreaterThan(10_000);
    // the owner's page, one click away, links back
    await Promise.all([p.page.waitForURL(/\/explore\/wallets\//), p.page.click('#owner-link')]);
    expect(p.page.url()).toContain(`/explore/wallets/${valid.owner}`);
    await Promise.all([
      p.page.waitForURL(new RegExp(`/explore/agents/base/${valid.id}$`)),
      p.page.click(`a[href="/explore/agents/base/${valid.id}"]`),
    ]);
    await clean(p);
  });

  it('a hostile file: its markup is text, nothing runs, opens or loads; a phone needs no sideways scroll', async (ctx) => {
    if (!hasChromium) return ctx.skip(SKIP);
    const p = await open(`/explore/agents/base/${hostile.id}`, MOBILE);
    expect(await text(p, '#declared-name')).toBe(HOSTILE_NAME);
    expect(await p.page.textContent('#declared-description')).toBe(HOSTILE_DESCRIPTION);
    expect(await p.page.locator('main img').count()).toBe(0);
    expect(await p.page.locator('main b').count()).toBe(0);
    expect(await p.page.locator('a[href^="javascript:"]').count()).toBe(0);
    expect(await text(p, '#services tr[data-position="0"] td.liveness')).toMatch(/not probed/);
    const [scroll, client] = await p.page.evaluate(() => [
      document.documentElement.scrollWidth,
      document.documentElement.clientWidth,
    ]);
    expect(scroll).toBeLessThanOrEqual(client);
    await p.page.screenshot({ path: join(ARTIFACTS, 'explorer-agent-hostile-mobile.png') });
    await clean(p);
  });

  it("the chain page's top wallets link to agent pages", async (ctx) => {
    if (!hasChromium) return ctx.skip(SKIP);
    const p = await open('/explore/chains/base');
    const href = await p.page.getAttribute('#top td.ids a', 'href');
    expect(href).toMatch(/^\/explore\/agents\/base\/\d+$/);
    await Promise.all([p.page.waitForURL(/\/explore\/agents\/base\/\d+$/), p.page.click('#top td.ids a')]);
    expect(await p.page.locator('h2', { hasText: 'Registration file' }).count()).toBe(1);
    await clean(p);
  });
});
