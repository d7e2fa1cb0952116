/**
 * The demo's registration files (issue 33): three local https sites on 127.0.0.1 (the demo's own
 * certificate, src/demo/tls.ts) and a closed port, serving registration files, the domain-proof
 * files (`/.well-known/agent-registration.json`), a live MCP endpoint (the official SDK's server,
 * two tools) and an A2A agent card (three skills); and on the base chain, agents of the scenario
 * pointed at them with `setAgentURI`, one per case, so every state shows offline:
 *  - files: `valid` (the full shape; the older `endpoints[]` / `x402support` shape; a hostile one;
 *    an inline `data:` one), `invalid` (failing fields, a registrations[] naming another agent),
 *    `unreachable` (404), `changed` (edited after the first fetch), `pending` (an ipfs:// file
 *    waiting for a gateway);
 *  - domain proofs: `verified` (home lists the agent), `absent` (bare serves none), `mismatch`
 *    (other lists another agent), `unreachable` (the closed port);
 *  - liveness: MCP, A2A card and web alive on home; a web 404 and an MCP 404 dead; the closed port
 *    dead; ENS and a `javascript:` URL not probed.
 * `fetchDemoRegistrations` then runs the real fetcher and prober (the demo's certificate trusted and
 * 127.0.0.1 allowed for these sites only), edits the `changed` file and re-fetches.
 */
import { createServer as createHttpsServer, type Server } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Hex } from 'viem';
import { privateKeyToAddress } from 'viem/accounts';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { drainProbes, proberContextFor, type ProbeReport } from '../liveness/prober.js';
import {
  drainRegistrations,
  registrationContextFor,
  type RegistrationReport,
} from '../registrations/fetcher.js';
import { REGISTRATION_TYPE } from '../registrations/parse.js';
import { recheckRegistrationsNow } from '../store/registrations.js';
import type { LocalNode } from './local-node.js';
import { setAgentURI, type Registries } from './registries.js';
import { DEMO_TLS_CERT, DEMO_TLS_KEY } from './tls.js';

export const REGISTRATION_CASES = [
  'valid',
  'older_shape',
  'invalid',
  'unreachable',
  'changed',
  'hostile',
  'inline',
  'pending',
] as const;
export type RegistrationCase = (typeof REGISTRATION_CASES)[number];

/** The hostile declared name of the `hostile` case (escaping test for every surface). */
export const HOSTILE_NAME = `<script>alert("name")</script> Evil & "Co" <img src=x onerror=alert(1)>`;

type SiteName = 'home' | 'bare' | 'other';

export interface RegistrationSites {
  /** https://127.0.0.1:<port> of each site. */
  url: Record<SiteName, string>;
  /** https://127.0.0.1:<port> where nothing listens. */
  closed: string;
  set(site: SiteName, path: string, contentType: string, body: string): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage, max: number): Promise<unknown> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new Error('body too large');
    parts.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(parts).toString('utf8'));
}

/** A stateless MCP server (the official SDK) with two tools, one per request (the demo's and the tests'). */
export async function serveDemoMcp(req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (req.method !== 'POST') {
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  let body: unknown;
  try {
    body = await readBody(req, 64 * 1024);
  } catch {
    res.writeHead(400).end();
    return;
  }
  const server = new McpServer({ name: 'demo-research-agent', version: '1.0.0' });
  server.registerTool('research', { description: 'Answers a research question.' }, () => ({
    content: [{ type: 'text', text: 'demo answer' }],
  }));
  server.registerTool('cite', { description: 'Lists the sources of the last answer.' }, () => ({
    content: [{ type: 'text', text: 'demo sources' }],
  }));
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: true,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

/** The three https sites and a closed port, on 127.0.0.1 (404 for anything not set; MCP at home's /mcp). */
export async function startRegistrationSites(): Promise<RegistrationSites> {
  const docs: Record<SiteName, Map<string, [string, string]>> = {
    home: new Map(),
    bare: new Map(),
    other: new Map(),
  };
  const servers: Server[] = [];
  const url = {} as Record<SiteName, string>;
  for (const site of ['home', 'bare', 'other'] as const) {
    const server = createHttpsServer({ cert: DEMO_TLS_CERT, key: DEMO_TLS_KEY }, (req, res) => {
      const path = new URL(req.url ?? '/', 'https://x').pathname;
      if (site === 'home' && path === '/mcp') {
        serveDemoMcp(req, res).catch(() => {
          if (!res.headersSent) res.writeHead(500);
          res.end();
        });
        return;
      }
      const d = docs[site].get(path);
      if (!d) {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found');
        return;
      }
      res.writeHead(200, { 'content-type': d[0] });
      res.end(d[1]);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    servers.push(server);
    url[site] = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
  // A port that was free a moment ago: nothing listens there (connections are refused).
  const probe = createNetServer();
  await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
  const closedPort = (probe.address() as AddressInfo).port;
  await new Promise<void>((r) => probe.close(() => r()));
  return {
    url,
    closed: `https://127.0.0.1:${closedPort}`,
    set: (site, path, type, body) => void docs[site].set(path, [type, body]),
    close: async () => {
      await Promise.all(
        servers.map(
          (s) =>
            new Promise<void>((r) => {
              s.closeAllConnections();
              s.close(() => r());
            }),
        ),
      );
    },
  };
}

/** The agents a case is played on: their id on the base chain and their owner's key. */
export type RegistrationAgents = Record<RegistrationCase, { agentId: bigint | number; ownerKey: Hex }>;

export interface RegistrationFacts {
  network: 'base';
  /** Agent id per case. */
  agents: Record<RegistrationCase, string>;
  /** agentURI per case. */
  uris: Record<RegistrationCase, string>;
  /** The file edited after the first fetch, and its edited body. */
  changed: { path: string; edited: string };
}

const JSON_TYPE = 'application/json';

/**
 * Serves the files of every case on `sites` and points each case's agent at its file with
 * `setAgentURI` (from its owner) on `node` (the base chain, where `registries` live).
 */
export async function playRegistrationScenario(
  node: LocalNode,
  registries: Registries,
  sites: RegistrationSites,
  agents: RegistrationAgents,
): Promise<RegistrationFacts> {
  const { home, bare, other } = sites.url;
  const registry = `eip155:${node.chainId}:${registries.identityRegistry}`;
  const id = (c: RegistrationCase) => BigInt(agents[c].agentId).toString();
  const self = (c: RegistrationCase) => [{ agentId: Number(id(c)), agentRegistry: registry }];
  const file = (c: RegistrationCase, over: Record<string, unknown>) =>
    JSON.stringify({
      type: REGISTRATION_TYPE,
      name: `Demo ${c.replace('_', ' ')} agent`,
      description: `A demo agent whose registration file shows the "${c}" case.`,
      x402Support: true,
      active: true,
      registrations: self(c),
      supportedTrust: ['reputation'],
      ...over,
    });

  sites.set(
    'home',
    '/agents/valid.json',
    JSON_TYPE,
    file('valid', {
      name: 'Atlas research agent',
      description: 'Answers research questions with sources.\nPaid per call over x402.',
      image: `${home}/atlas.png`,
      services: [
        { name: 'MCP', endpoint: `${home}/mcp`, version: '2025-06-18' },
        { name: 'A2A', endpoint: `${home}/.well-known/agent-card.json`, version: '0.3.0' },
        { name: 'web', endpoint: `${home}/` },
      ],
    }),
  );
  // The older shape: endpoints[] and lowercase x402support; every endpoint fails in its own way.
  const older = JSON.parse(
    file('older_shape', {
      endpoints: [
        { name: 'web', endpoint: `${bare}/web` },
        { name: 'MCP', endpoint: `${other}/mcp` },
        { name: 'A2A', endpoint: `${sites.closed}/.well-known/agent-card.json` },
        { name: 'ENS', endpoint: 'older-shape.eth', version: 'v1' },
      ],
      active: false,
    }),
  ) as Record<string, unknown>;
  delete older.x402Support;
  older.x402support = false;
  sites.set('home', '/agents/older.json', JSON_TYPE, JSON.stringify(older));
  sites.set(
    'home',
    '/agents/invalid.json',
    JSON_TYPE,
    JSON.stringify({
      type: 'https://example.org/not-erc-8004',
      description: 42,
      services: 'none',
      registrations: [{ agentId: 999_999, agentRegistry: registry }],
    }),
  );
  const changedBody = file('changed', { services: [{ name: 'web', endpoint: `${home}/` }] });
  sites.set('home', '/agents/changed.json', JSON_TYPE, changedBody);
  sites.set(
    'home',
    '/agents/hostile.json',
    JSON_TYPE,
    file('hostile', {
      name: HOSTILE_NAME,
      description: `</dd><script>alert("description")</script>\n"quotes" & 'apostrophes' <b>bold</b>`,
      image: 'javascript:alert("image")',
      services: [
        { name: 'web', endpoint: `${home}/` },
        { name: '<b>custom</b>', endpoint: 'javascript:alert("endpoint")' },
      ],
    }),
  );
  const inline = `data:application/json;base64,${Buffer.from(
    file('inline', { name: 'Inline agent', services: [{ name: 'ENS', endpoint: 'inline-agent.eth' }] }),
  ).toString('base64')}`;

  // The well-known files: home lists its own agents; other lists someone else; bare has none.
  sites.set(
    'home',
    '/.well-known/agent-registration.json',
    JSON_TYPE,
    JSON.stringify({
      registrations: (['valid', 'changed', 'hostile'] as const).flatMap((c) => self(c)),
    }),
  );
  sites.set(
    'other',
    '/.well-known/agent-registration.json',
    JSON_TYPE,
    JSON.stringify({ registrations: [{ agentId: 123_456, agentRegistry: registry }] }),
  );
  sites.set(
    'home',
    '/',
    'text/html; charset=utf-8',
    '<!doctype html><title>Atlas</title><h1>Atlas research agent</h1>',
  );
  sites.set(
    'home',
    '/.well-known/agent-card.json',
    JSON_TYPE,
    JSON.stringify({
      protocolVersion: '0.3.0',
      name: 'Atlas research agent',
      description: 'Answers research questions with sources.',
      url: `${home}/a2a`,
      version: '1.0.0',
      capabilities: { streaming: false, pushNotifications: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
      skills: [
        { id: 'research', name: 'Research', description: 'Answers a question.', tags: ['research'] },
        { id: 'summarize', name: 'Summarize', description: 'Summarizes a text.', tags: ['text'] },
        { id: 'cite', name: 'Cite', description: 'Lists sources.', tags: ['sources'] },
      ],
    }),
  );
  void bare;

  const uris: Record<RegistrationCase, string> = {
    valid: `${home}/agents/valid.json`,
    older_shape: `${home}/agents/older.json`,
    invalid: `${home}/agents/invalid.json`,
    unreachable: `${home}/agents/gone.json`,
    changed: `${home}/agents/changed.json`,
    hostile: `${home}/agents/hostile.json`,
    inline,
    pending: 'ipfs://bafybeiregistrationwaitingforagateway/agent.json',
  };
  // The owners pay the gas of their setAgentURI (demo keys: the balance is written, not sent).
  const owners = [...new Set(REGISTRATION_CASES.map((c) => privateKeyToAddress(agents[c].ownerKey)))];
  const funds = `0x${(10n ** 21n).toString(16)}`;
  await Promise.all(owners.map((a) => node.request('hardhat_setBalance', [a, funds])));
  for (const c of REGISTRATION_CASES)
    await setAgentURI(registries, agents[c].ownerKey, agents[c].agentId, uris[c]);
  return {
    network: 'base',
    agents: Object.fromEntries(REGISTRATION_CASES.map((c) => [c, id(c)])) as Record<RegistrationCase, string>,
    uris,
    changed: {
      path: '/agents/changed.json',
      edited: JSON.stringify({ ...JSON.parse(changedBody), description: 'Edited after the first fetch.' }),
    },
  };
}

/**
 * Runs the real fetcher and prober over the demo's agents only (the demo's certificate trusted,
 * 127.0.0.1 allowed: its own sites), then edits the `changed` file and fetches the files again.
 */
export async function fetchDemoRegistrations(
  db: Database,
  config: Config,
  sites: RegistrationSites,
  facts: RegistrationFacts,
): Promise<{ first: RegistrationReport; again: RegistrationReport; probes: ProbeReport }> {
  const scope = { network: facts.network, agentIds: Object.values(facts.agents) };
  const trust = { allowAddresses: ['127.0.0.1'], ca: [DEMO_TLS_CERT] };
  const files = registrationContextFor(db, config);
  files.options.limits = { ...files.options.limits, ...trust };
  const ctx = { ...files, scope };
  const first = await drainRegistrations(ctx);
  sites.set('home', facts.changed.path, JSON_TYPE, facts.changed.edited);
  // The scheduled re-fetch, now.
  await recheckRegistrationsNow(db, new Date(), scope);
  const again = await drainRegistrations(ctx);
  const probes = proberContextFor(db, config);
  probes.options = {
    ...probes.options,
    limits: {
      ...probes.options.limits,
      ...trust,
      timeoutMs: Math.min(probes.options.limits.timeoutMs, 5000),
    },
    hostIntervalSeconds: 0,
  };
  const probed = await drainProbes({ ...probes, scope }, 60_000);
  return { first, again, probes: probed };
}
