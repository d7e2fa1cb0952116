/**
 * The A2A door end to end, with @a2a-js/sdk 0.3.9 as the CLIENT against a real listening server.
 * Fixture: the demo scenario (three local EVM chains indexed by the real indexer) plus a few Solana
 * rows written through the ingest tables, then the aggregate refresh.
 *
 * Every expected number is read from the FREE HTTP handlers the door must reuse
 * (`/wallets/{wallet}/chains`, `/search/{q}`, `/health`) over the same server, never hard-coded,
 * and formatted here independently into the lines the contract describes. Prices come from
 * src/payments/pricing.ts. The envelope and its errors are in test/a2a-protocol.test.ts.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentCard, Message } from '@a2a-js/sdk';
import { A2AClient, ClientFactory, DefaultAgentCardResolver, type Client } from '@a2a-js/sdk/client';
import { loadConfig } from '../src/config.js';
import type { Demo } from '../src/demo/run-demo.js';
import { tierById } from '../src/payments/pricing.js';
import { refreshAggregates } from '../src/store/aggregates-refresh.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { testDatabaseUrl } from './helpers/db.js';
import { openDemoCopy } from './helpers/demo.js';
import { solanaSeeder } from './helpers/solana-seed.js';
import { drainRegistrations, registrationContextFor } from '../src/registrations/fetcher.js';
import { drainProbes, proberContextFor } from '../src/liveness/prober.js';
import { setAgentUris } from '../src/store/agents.js';
import { syncRegistrationJobs } from '../src/store/registrations.js';
import { REGISTRATION_TYPE } from '../src/registrations/parse.js';

const NOW = new Date('2026-11-20T08:00:00Z');

// Solana fixture (base58: no 0, O, I, l).
const SOL_WALLET = `So1anaWa11et${'A'.repeat(32)}`; // 44 chars
const SOL_ASSET = `AssetXYZ${'B'.repeat(30)}`;
const SOL_ASSET_UNRATED = `AssetUnrated${'C'.repeat(28)}`;
/** At once a wallet (owns BOTH_OWNED, rated a real zero) and an agent asset (owned by SOL_WALLET). */
const BOTH = `BothWa11etAndAsset${'D'.repeat(20)}`;
const BOTH_OWNED = `BothOwned${'E'.repeat(30)}`;
const UNKNOWN_KEY = `Unknown${'F'.repeat(30)}`;
const SOL_RATER = (n: number) => `Rater${n}${'R'.repeat(30)}`;
const NOBODY = '0x00000000000000000000000000000000000000b0';

let demo: Demo;
let server: RunningServer;
let client: Client;

async function seedSolana(): Promise<void> {
  const sol = solanaSeeder(demo.db);
  await sol.agent(SOL_ASSET, SOL_WALLET);
  await sol.agent(SOL_ASSET_UNRATED, SOL_WALLET);
  await sol.agent(BOTH, SOL_WALLET);
  await sol.agent(BOTH_OWNED, BOTH);
  await sol.rate(SOL_ASSET, SOL_RATER(1), '90');
  await sol.rate(SOL_ASSET, SOL_RATER(2), '70');
  await sol.rate(SOL_ASSET, SOL_RATER(2), '85');
  await sol.rate(SOL_ASSET, SOL_WALLET, '100'); // self-rating: out of the score
  await sol.rate(SOL_ASSET, SOL_RATER(3), '10', { revoked: true }); // revoked: out of the score
  await sol.rate(BOTH_OWNED, SOL_RATER(1), '0'); // a real zero
  // SOL_ASSET's registration file, read by the real fetcher (a stand-in fetch) and probed (stand-in probes)
  const uri = 'https://sol-agent.example/agent.json';
  await setAgentUris(demo.db, [
    { network: 'solana', agentId: SOL_ASSET, uri, blockNumber: 1, logIndex: 0, declaredType: null },
  ]);
  await syncRegistrationJobs(demo.db, [{ network: 'solana', agentId: SOL_ASSET }]);
  const soon = () => new Date(Date.now() + 5000);
  const scope = { network: 'solana', agentIds: [SOL_ASSET] };
  const body = JSON.stringify({
    type: REGISTRATION_TYPE,
    name: 'Sol "agent" <b>one</b>',
    services: [
      { name: 'MCP', endpoint: 'https://sol-agent.example/mcp' },
      { name: 'web', endpoint: 'https://sol-agent.example/' },
    ],
    registrations: [{ agentId: SOL_ASSET, agentRegistry: 'solana:mainnet:program' }],
  });
  await drainRegistrations({
    ...registrationContextFor(demo.db, demo.config),
    scope,
    clock: soon,
    fetch: async (u) =>
      u === uri
        ? { ok: true, bytes: new TextEncoder().encode(body), contentType: 'application/json', finalUrl: u }
        : u.endsWith('/.well-known/agent-registration.json')
          ? {
              ok: true,
              bytes: new TextEncoder().encode(JSON.stringify({ registrations: [{ agentId: SOL_ASSET }] })),
              contentType: 'application/json',
              finalUrl: u,
            }
          : { ok: false, code: 'http_error', retryable: false, detail: 'HTTP 404' },
  });
  await drainProbes(
    {
      ...proberContextFor(demo.db, demo.config),
      scope,
      clock: soon,
      probe: async (kind) => ({
        alive: kind === 'mcp',
        reason: kind === 'mcp' ? null : 'http_404',
        toolCount: kind === 'mcp' ? 4 : null,
        skillCount: null,
        latencyMs: 1,
      }),
    },
    5_000,
  );
}

beforeAll(async () => {
  demo = await openDemoCopy({
    config: loadConfig({ RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000' }),
  });
  await seedSolana();
  await refreshAggregates(demo.db, () => NOW);
  server = await startHttpServer(
    { config: demo.config, db: demo.db, now: () => NOW },
    { host: '127.0.0.1', port: 0 },
  );
  // The card names BASE_URL + /a2a; the port is known only now (the config is read per request).
  demo.config.baseUrl = server.url;
  client = await new ClientFactory().createFromUrl(server.url);
}, 240_000);

afterAll(async () => {
  await server?.close();
  await demo?.close();
});

// ------------------------------------------------------------------ helpers

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

async function getJson(path: string): Promise<Json> {
  const res = await fetch(`${server.url}${path}`);
  expect(res.status, path).toBe(200);
  return res.json();
}

function userMessage(text: string): { message: Message } {
  return {
    message: { kind: 'message', role: 'user', messageId: randomUUID(), parts: [{ kind: 'text', text }] },
  };
}

/** message/send through the SDK client; the answer must be a message with one text part. */
async function ask(text: string): Promise<string> {
  const result = await client.sendMessage(userMessage(text));
  expect(result.kind).toBe('message');
  const msg = result as Message;
  expect(msg.role).toBe('agent');
  expect(msg.parts).toHaveLength(1);
  const part = msg.parts[0]!;
  expect(part.kind).toBe('text');
  return (part as { text: string }).text;
}

const pl = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
const price = (id: string) => `$${tierById(id).price_usd}`;

/** The contract's per-chain line, formatted here from a `/wallets/{wallet}/chains` row. */
function expectedLine(c: Json): string {
  const score = c.final_score === null ? 'no ratings yet' : `score ${(c.final_score as number).toFixed(6)}`;
  return `${c.network}: ${pl(c.agent_count, 'identity', 'identities')}, ${score}, ${pl(c.total_reviews, 'rating', 'ratings')} from ${pl(c.distinct_raters, 'distinct rater', 'distinct raters')}`;
}

/** The answer must hold, in order, one line per chain of the free preview, and the paid pointers. */
async function expectPreview(text: string, wallet: string): Promise<Json> {
  const preview = await getJson(`/wallets/${wallet}/chains`);
  const lines = text.split('\n');
  const expected = preview.chains.map(expectedLine);
  expect(expected.length).toBeGreaterThan(0);
  const header = lines.indexOf(
    `Wallet ${preview.wallet}: ${pl(preview.identity_count, 'identity', 'identities')} on ${pl(preview.chains.length, 'chain', 'chains')} (free per-chain preview).`,
  );
  expect(header, text).toBeGreaterThanOrEqual(0);
  const first = header + 1;
  expect(lines.slice(first, first + expected.length)).toEqual(expected);
  expect(lines[first + expected.length]).toBe(
    preview.global_score === null
      ? 'Global score: no ratings yet.'
      : `Global score: ${(preview.global_score as number).toFixed(6)} (mean of the per-chain scores, one chain one vote).`,
  );
  expect(text).toContain(`GET /reputation/wallet/${preview.wallet} (${price('wallet-lookup')})`);
  if (preview.chains_with_reputation === 0) {
    expect(text).toContain('Nothing to decompose yet (no rating received)');
    expect(text).not.toContain('/history');
    return preview;
  }
  expect(text).toContain(`GET /reputation/wallet/${preview.wallet}/history (${price('wallet-history')})`);
  const c0 = preview.chains[0];
  expect(text).toContain(`GET /reputation/agent/${c0.network}/${c0.agent_ids[0]} (${price('agent-detail')})`);
  return preview;
}

/** Every score in an answer is written with six decimals. */
function expectSixDecimals(text: string) {
  for (const m of text.matchAll(/score:? (\S+)/gi)) {
    if (m[1] === 'no' || m[1] === 'policy') continue;
    expect(m[1]!.replace(/[(),.]$/, ''), text).toMatch(/^-?\d+\.\d{6}$/);
  }
}

// ------------------------------------------------------------------ agent card through the SDK

describe('agent card, resolved by the SDK', () => {
  it('runs on the database the suite was asked for', () => {
    expect(demo.db.kind).toBe(testDatabaseUrl ? 'postgres' : 'pglite');
  });

  it('resolves /.well-known/agent-card.json and builds a JSON-RPC client on its url', async () => {
    const card: AgentCard = await new DefaultAgentCardResolver().resolve(server.url);
    expect(card).toMatchObject({
      protocolVersion: '0.3.0',
      version: '2.0.0',
      url: `${server.url}/a2a`,
      preferredTransport: 'JSONRPC',
      capabilities: { streaming: false, pushNotifications: false, stateTransitionHistory: false },
      defaultInputModes: ['text/plain'],
      defaultOutputModes: ['text/plain'],
    });
    expect((card as Json).supportedInterfaces).toEqual([
      { url: `${server.url}/a2a`, transport: 'JSONRPC', protocolBinding: 'JSONRPC' },
    ]);
    expect(card.skills.map((s) => s.id)).toEqual(['vet-wallet', 'index-status']);
    expect(await client.getAgentCard()).toEqual(card);
  });

  it('also works with the legacy A2AClient from the card URL', async () => {
    const legacy = await A2AClient.fromCardUrl(`${server.url}/.well-known/agent-card.json`);
    const res = await legacy.sendMessage(userMessage('status'));
    expect('result' in res && res.result.kind).toBe('message');
  });
});

// ------------------------------------------------------------------ branch 1: EVM address

describe('an EVM address anywhere in the text: the per-chain preview', () => {
  it('serves the multi-chain owner one line per chain, scores raw at six decimals, and the paid routes by price', async () => {
    const wallet = demo.facts.multiChainOwner.address; // checksummed
    const text = await ask(`Can I trust ${wallet}?`);
    const preview = await expectPreview(text, wallet);
    expect(text.startsWith(`Wallet ${wallet.toLowerCase()}: `)).toBe(true);
    expect(preview.chains.map((c: Json) => c.network)).toEqual(['base', 'arbitrum', 'optimism']);
    expect(preview.chains.every((c: Json) => c.final_score !== null)).toBe(true);
    expectSixDecimals(text);
    // No caveat, no 402 over this door; the pay note names HTTP.
    expect(text).not.toMatch(/caveat|burn|402 challenge|X-PAYMENT/i);
    expect(text).toContain('nothing is paid over this door');
  });

  it('finds the address in any case, anywhere, and answers byte-identically to the bare address', async () => {
    const wallet = demo.facts.multiChainOwner.address;
    const bare = await ask(wallet.toLowerCase());
    expect(
      await ask(`please vet (${wallet.replace(/^0x/, '0x').toUpperCase().replace(/^0X/, '0x')}) — thanks`),
    ).toBe(bare);
    expect(await ask(`line one\n\t${wallet}\nline three`)).toBe(bare);
  });

  it('reads the first address and says how many others were left unread', async () => {
    const a = demo.facts.multiChainOwner.address;
    const b = demo.facts.unratedOwner.address;
    const text = await ask(`${a} or ${b} or ${a}?`);
    await expectPreview(text, a);
    expect(text).toContain('Your message holds 1 other address, not read: send one address per message.');
  });

  it('shows registered-but-unrated chains as `no ratings yet` with their counts, and a null global score', async () => {
    const wallet = demo.facts.unratedOwner.address;
    const text = await ask(wallet);
    const preview = await expectPreview(text, wallet);
    expect(preview.global_score).toBeNull();
    for (const c of preview.chains)
      expect(expectedLine(c)).toMatch(
        /: \d+ identit(y|ies), no ratings yet, 0 ratings from 0 distinct raters$/,
      );
    expect(text).toContain('Global score: no ratings yet.');
    expect(preview.chains_with_reputation).toBe(0);
    expect(text).toContain(
      `Nothing to decompose yet (no rating received): GET /reputation/wallet/${wallet.toLowerCase()} (${price('wallet-lookup')}) would add nothing today.`,
    );
  });

  it('serves every owner of the index with exactly the preview of /wallets/{wallet}/chains', async () => {
    const owners = [...new Set(demo.facts.agents.map((a) => a.owner))];
    expect(owners.length).toBeGreaterThan(10);
    for (const owner of owners) {
      const text = await ask(`vet ${owner}`);
      await expectPreview(text, owner);
      expectSixDecimals(text);
    }
  });

  it('carries no caveat for the burn address (the A2A door carries none)', async () => {
    const text = await ask(demo.facts.burnOwnedAgent.owner);
    await expectPreview(text, demo.facts.burnOwnedAgent.owner);
    expect(text).not.toMatch(/caveat|burn/i);
    const preview = await getJson(`/wallets/${demo.facts.burnOwnedAgent.owner}/chains`);
    for (const c of preview.caveats) expect(text).not.toContain(c.text);
  });

  it('answers a wallet with no identity anywhere with a sentence (an answer, not an error)', async () => {
    const preview = await getJson(`/wallets/${NOBODY}/chains`);
    expect(preview.chains).toEqual([]);
    const text = await ask(`what about ${NOBODY}`);
    expect(text.split('\n')[0]).toBe(
      `Wallet ${NOBODY} holds no ERC-8004 identity on any chain this index covers, so there is no score to show (an answer, not an error).`,
    );
    expect(text).toContain(`GET /reputation/rater/${NOBODY} (${price('rater-profile')})`);
  });
});

// ------------------------------------------------------------------ branch 2: base58

describe('a Solana base58 key: resolved through /search first', () => {
  it('answers an agent asset with an agent line (owner, score) and the paid agent route', async () => {
    const search = await getJson(`/search/${SOL_ASSET}`);
    const m = search.matches.find((x: Json) => x.interpreted_as === 'solana_asset');
    expect(m).toBeDefined();
    expect(m.final_score).not.toBeNull();
    const text = await ask(`Is ${SOL_ASSET} any good?`);
    const lines = text.split('\n');
    expect(lines[0]).toBe(
      `Agent ${SOL_ASSET} on solana: owner ${SOL_WALLET}, score ${(m.final_score as number).toFixed(6)}, ` +
        `${pl(m.total_reviews, 'rating', 'ratings')} from ${pl(m.distinct_raters, 'distinct rater', 'distinct raters')}.`,
    );
    expect(lines[1]).toBe(
      `Every rating it received, with its transaction: GET /reputation/agent/solana/${SOL_ASSET} (${price('agent-detail')}).`,
    );
    expect(text).toContain(`GET /wallets/${SOL_WALLET}/chains (free)`);
    expectSixDecimals(text);
  });

  it('follows an agent line with what its registration file declares (quoted, never verified), or that it has none', async () => {
    const lines = (await ask(SOL_ASSET)).split('\n');
    const reg = await getJson(`/agents/solana/${SOL_ASSET}/registration`);
    expect(reg.registration.state).toBe('valid');
    expect(lines[2]).toBe(
      `Its registration file is valid (declared by the agent, never verified: name "Sol \\"agent\\" <b>one</b>"); ` +
        '2 services, 1 live, 2 with a verified domain.',
    );
    expect((await ask(SOL_ASSET_UNRATED)).split('\n')[2]).toBe('It names no registration file (agentURI).');
  });

  it('answers an unrated agent asset with `no ratings yet`', async () => {
    const text = await ask(SOL_ASSET_UNRATED);
    expect(text.split('\n')[0]).toBe(
      `Agent ${SOL_ASSET_UNRATED} on solana: owner ${SOL_WALLET}, no ratings yet, 0 ratings from 0 distinct raters.`,
    );
  });

  it('answers a Solana wallet with the branch-1 preview', async () => {
    const text = await ask(`vet ${SOL_WALLET} please`);
    const preview = await expectPreview(text, SOL_WALLET);
    expect(preview.chains.map((c: Json) => c.network)).toEqual(['solana']);
    expectSixDecimals(text);
  });

  it('answers a key that is both an agent and a wallet with both, a real zero as 0.000000', async () => {
    const text = await ask(BOTH);
    expect(text.split('\n')[0]).toMatch(new RegExp(`^Agent ${BOTH} on solana: owner ${SOL_WALLET}, `));
    const preview = await expectPreview(text, BOTH);
    expect(preview.chains[0].final_score).toBe(0);
    expect(text).toContain(`solana: 1 identity, score 0.000000, 1 rating from 1 distinct rater`);
  });

  it('is case-sensitive and answers an unknown key with a sentence', async () => {
    expect((await getJson(`/search/${UNKNOWN_KEY}`)).matches).toEqual([]);
    const text = await ask(UNKNOWN_KEY);
    expect(text.split('\n')[0]).toBe(
      `${UNKNOWN_KEY} is a well-formed Solana key, but this index knows it neither as a wallet holding an agent nor as an agent asset (an answer, not an error).`,
    );
    // The lower-cased spelling of a known wallet is another key.
    expect(await ask(SOL_WALLET.toLowerCase())).toContain(
      'neither as a wallet holding an agent nor as an agent asset',
    );
  });
});

// ------------------------------------------------------------------ branch 3: status

describe('anything else: the live index status and usage', () => {
  it.each(['hello', 'What can you do?', '7', '12345678901234567890', '', '   ', '0x1234', 'id 0 on base'])(
    'answers %j with the counts of /health and the paid routes by price',
    async (msg) => {
      const health = await getJson('/health');
      const scanned = health.chains.filter((c: Json) => c.enabled).map((c: Json) => c.network);
      expect([...scanned].sort()).toEqual(['arbitrum', 'base', 'optimism']);
      const text = await ask(msg);
      expect(text).toContain(
        `Index status: ${pl(health.agents, 'agent', 'agents')} and ${pl(health.feedback_entries, 'rating', 'ratings')} indexed across ` +
          `${pl(health.chains.length, 'chain', 'chains')} (${scanned.length} scanned: ${scanned.join(', ')}); scoring policy ${health.policy_version}.`,
      );
      expect(health.agents).toBeGreaterThan(0);
      for (const [route, id] of [
        ['GET /reputation/wallet/{wallet}', 'wallet-lookup'],
        ['GET /reputation/wallet/{wallet}/history', 'wallet-history'],
        ['GET /reputation/agent/{network}/{agent_id}', 'agent-detail'],
        ['GET /reputation/rater/{wallet}', 'rater-profile'],
        ['GET /leaderboard/page', 'leaderboard-deep'],
      ] as const) {
        expect(text).toContain(`${route} (${price(id)})`);
      }
      expect(text).toContain(`?snapshot=true: ${price('wallet-snapshot')}`);
    },
  );

  it('gives every answer a fresh messageId', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const r = (await client.sendMessage(userMessage('status'))) as Message;
      ids.add(r.messageId);
    }
    expect(ids.size).toBe(3);
  });

  it('refuses streaming through the SDK (capabilities say no) and tasks with -32601', async () => {
    await expect(client.getTask({ id: 'nope' })).rejects.toThrow(/-32601|not found/i);
  });
});
