/**
 * The client side of test/a2a-protocol.test.ts and its suites (test/a2a-protocol/*.ts): the
 * servers the file starts, raw JSON-RPC posts over `fetch`, a message/send builder, and the
 * checks of a message answer and of an error envelope.
 */
import { expect } from 'vitest';
import type { RunningServer } from '../../src/server.js';
import type { TestDatabase } from './db.js';

export const NOW = new Date('2026-11-20T08:00:00Z');
export const NOBODY = '0x00000000000000000000000000000000000000b0';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** What the file's beforeAll starts: its database, a server on it and one on a database that is down. */
export interface A2aServers {
  t: TestDatabase;
  server: RunningServer;
  down: RunningServer;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

/** Posts to the file's server (read when called: the file's beforeAll starts it). */
export function a2aClient(servers: () => A2aServers) {
  async function post(
    body: string,
    opts: { path?: string; base?: string; headers?: Record<string, string> } = {},
  ) {
    const res = await fetch(`${opts.base ?? servers().server.url}${opts.path ?? '/a2a'}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...opts.headers },
      body,
    });
    const text = await res.text();
    return { res, text, body: JSON.parse(text) as Json };
  }

  const rpc = (msg: Record<string, unknown>, opts?: Parameters<typeof post>[1]) =>
    post(JSON.stringify(msg), opts);

  const send = (text: string | null, id: unknown = 1, parts?: unknown[], base?: string) =>
    rpc(
      {
        jsonrpc: '2.0',
        id,
        method: 'message/send',
        params: {
          message: {
            kind: 'message',
            role: 'user',
            messageId: 'm-1',
            parts: parts ?? [{ kind: 'text', text }],
          },
        },
      },
      base ? { base } : {},
    );

  return { post, rpc, send };
}

export function expectMessage(body: Json, id: unknown): string {
  expect(Object.keys(body).sort()).toEqual(['id', 'jsonrpc', 'result']);
  expect(body.jsonrpc).toBe('2.0');
  expect(body.id).toEqual(id);
  expect(Object.keys(body.result).sort()).toEqual(['kind', 'messageId', 'parts', 'role']);
  expect(body.result).toMatchObject({ kind: 'message', role: 'agent' });
  expect(body.result.messageId).toMatch(UUID);
  expect(body.result.parts).toEqual([{ kind: 'text', text: expect.any(String) }]);
  return body.result.parts[0].text as string;
}

export function expectError(body: Json, code: number, id: unknown) {
  expect(Object.keys(body).sort()).toEqual(['error', 'id', 'jsonrpc']);
  expect(body).toMatchObject({ jsonrpc: '2.0', id, error: { code, message: expect.any(String) } });
  expect(body.error.message.length).toBeGreaterThan(0);
}

export const STATUS =
  /^Your message holds no (text|EVM address and no Solana key) to look up\.\nIndex status: /;
