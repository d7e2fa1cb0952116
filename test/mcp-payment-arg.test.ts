/**
 * The MCP door's `payment` argument and the metered tools' status (issue 9, point 6), through the
 * real app (real paywall, real handlers on an empty index, stub facilitator): a `payment` that no
 * HTTP header can carry is an `invalid_payment_header` rejection like over HTTP, never
 * `unreachable` with a transport error; a refusal whose body says `retryable: false` is never
 * `unreachable` ("retry later").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { createApp } from '../src/doors/http/app.js';
import type { AppContext } from '../src/doors/http/context.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';
import { payment, StubFacilitator, TREASURY } from './helpers/x402-stub.js';

const RATER = '0xdddddddddddddddddddddddddddddddddddddddd';

async function callTool(app: ReturnType<typeof createApp>, name: string, args: Record<string, unknown>) {
  const res = await app.request('/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  const msg = JSON.parse(text) as { result: { structuredContent: Record<string, unknown> } };
  return { text, result: msg.result.structuredContent };
}

describe('MCP payment argument', () => {
  let t: TestDatabase;
  let paidApp: ReturnType<typeof createApp>;
  let closedApp: ReturnType<typeof createApp>;
  const stub = new StubFacilitator();

  beforeAll(async () => {
    t = await openTestDatabase();
    const paid: AppContext = {
      config: loadConfig({ TREASURY_ADDRESS: TREASURY }),
      db: t.db,
      now: () => new Date(),
      facilitator: stub,
    };
    const closed: AppContext = { config: loadConfig({}), db: t.db, now: () => new Date(), facilitator: stub };
    paidApp = createApp(paid);
    closedApp = createApp(closed);
  }, 120_000);
  afterAll(() => t?.close());

  it.each([
    ['a character above U+00FF', 'eyJ4NDAyVmVyc2lvbiI6Mn0€'],
    ['an emoji', '🙂'],
    ['a line break', 'abc\r\nX-Other: 1'],
  ])('a payment with %s is invalid_payment_header, not unreachable', async (_name, bad) => {
    const { text, result } = await callTool(paidApp, 'rep_rater_profile', { wallet: RATER, payment: bad });
    expect(result.status).toBe('payment_required');
    expect(result.payment_rejected).toBe(true);
    expect((result.challenge as { error: string }).error).toBe('invalid_payment_header');
    expect(text).not.toMatch(/ByteString/);
    expect(stub.verifies).toBe(0);
  });

  it('a valid payment still pays through the tool', async () => {
    const { result } = await callTool(paidApp, 'rep_rater_profile', { wallet: RATER, payment: payment() });
    expect(result.status).toBe('ok');
    expect((result.payment as { reused: boolean }).reused).toBe(false);
  });

  it('without TREASURY_ADDRESS a metered tool says error (retryable false), never unreachable', async () => {
    const { result } = await callTool(closedApp, 'rep_rater_profile', { wallet: RATER });
    expect(result.status).toBe('error');
    expect(result.http_status).toBe(503);
    expect(result.data).toMatchObject({ error: 'payments_not_configured', retryable: false });
    expect(String(result.message)).not.toMatch(/retry later/i);
  });
});
