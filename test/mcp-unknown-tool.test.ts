/**
 * MCP (issue 12): a tools/call of a name that is not a tool answers the tool error with the 14
 * valid names (the same names tools/list gives), through the official SDK client and as raw
 * JSON-RPC, and a valid call after it is unaffected (batches are refused whole: door-rate-limit.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadConfig } from '../src/config.js';
import { registerChains } from '../src/store/chain-state.js';
import { TOOL_NAMES } from '../src/doors/mcp/tools.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

describe('MCP: an unknown tool name', () => {
  let t: TestDatabase;
  let server: RunningServer;
  let client: Client;
  beforeAll(async () => {
    t = await openTestDatabase();
    const config = { ...loadConfig({}), rateLimit: { rate: 1_000_000, burst: 1_000_000 } };
    await registerChains(t.db, config.chains);
    server = await startHttpServer(
      { config, db: t.db, now: () => new Date() },
      { host: '127.0.0.1', port: 0 },
    );
    client = new Client({ name: 'mcp-unknown-tool-test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.url}/mcp`)));
  });
  afterAll(async () => {
    await client?.close();
    await server?.close();
    await t?.close();
  });

  it('lists the 14 valid names in the error, the same as tools/list', async () => {
    const { tools } = await client.listTools();
    const listed = tools.map((x) => x.name);
    expect(listed).toHaveLength(14);
    expect([...TOOL_NAMES].sort()).toEqual([...listed].sort());

    const r = (await client.callTool({ name: 'rep_lookup', arguments: {} })) as {
      isError?: boolean;
      content: { type: string; text: string }[];
    };
    expect(r.isError).toBe(true);
    const text = r.content[0]!.text;
    expect(text).toMatch(/^Tool "rep_lookup" not found\. The 14 tools of this server are: /);
    for (const name of listed) expect(text).toContain(name);
  });

  it('raw JSON-RPC: a hostile name is answered as a tool error, and the next valid call is untouched', async () => {
    const hostile = 'x"\n<script>'.repeat(30);
    const post = (id: number, name: string) =>
      fetch(`${server.url}/mcp`, {
        method: 'POST',
        headers: MCP_HEADERS,
        body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: {} } }),
      });
    type Answer = { id: number; result: { isError?: boolean; content: { text: string }[] } };
    const badRes = await post(1, hostile);
    expect(badRes.status).toBe(200);
    const bad = (await badRes.json()) as Answer;
    expect(bad.id).toBe(1);
    expect(bad.result.isError).toBe(true);
    expect(bad.result.content[0]!.text).toContain(`Tool ${JSON.stringify(hostile.slice(0, 100))} not found`);
    for (const name of TOOL_NAMES) expect(bad.result.content[0]!.text).toContain(name);

    const goodRes = await post(2, 'rep_manifesto');
    expect(goodRes.status).toBe(200);
    const good = (await goodRes.json()) as Answer;
    expect(good.id).toBe(2);
    expect(good.result.isError ?? false).toBe(false);
    expect(good.result.content[0]!.text).not.toContain('not found');
  });
});
