/**
 * The A2A door's envelope, the success envelope of message/send: the text in result.parts[0].text,
 * id echo, fresh message ids, text parts read by `kind` or `type`, the status fallthrough, dot-only
 * texts. Registered by test/a2a-protocol.test.ts on its servers (the client:
 * test/helpers/a2a-client.ts).
 */
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/doors/a2a/dispatch.js';
import { NOBODY, STATUS, expectMessage, a2aClient, type A2aServers } from '../helpers/a2a-client.js';

/** The 'POST /a2a message/send: the envelope' suite over the file's servers. */
export function envelopeSuite(servers: () => A2aServers): void {
  const { rpc, send } = a2aClient(servers);

  describe('POST /a2a message/send: the envelope', () => {
    it('answers a message (never a task) with the text in result.parts[0].text, under /a2a and /v1/a2a', async () => {
      for (const path of ['/a2a', '/v1/a2a']) {
        const { res, body } = await rpc(
          {
            jsonrpc: '2.0',
            id: 'req-1',
            method: 'message/send',
            params: { message: { parts: [{ kind: 'text', text: 'status' }] } },
          },
          { path },
        );
        expect(res.status, path).toBe(200);
        expect(res.headers.get('content-type')).toMatch(/^application\/json/);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(res.headers.get('api-version')).toBe('2.0.0');
        expect(res.headers.get('ratelimit-policy')).toBe('1000000;w=1;burst=1000000');
        expect(expectMessage(body, 'req-1')).toMatch(STATUS);
      }
    });

    it('echoes the id exactly: strings (empty, unicode), integers (0, negative, 2^53-1) and null', async () => {
      for (const id of [
        'abc',
        '',
        'ünï ✓ "quoted"',
        0,
        -7,
        42,
        Number.MAX_SAFE_INTEGER,
        -Number.MAX_SAFE_INTEGER,
        null,
      ]) {
        const { body, text } = await send('hello', id);
        expectMessage(body, id);
        expect(text).toContain(`"id":${JSON.stringify(id)}`);
      }
    });

    it('gives every answer a fresh messageId (a UUID), even for identical requests', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) ids.add((await send('same text')).body.result.messageId);
      expect(ids.size).toBe(5);
    });

    it('reads a text part by `kind` or by `type`, and both give the same answer', async () => {
      const byKind = expectMessage((await send(null, 1, [{ kind: 'text', text: `vet ${NOBODY}` }])).body, 1);
      const byType = expectMessage((await send(null, 1, [{ type: 'text', text: `vet ${NOBODY}` }])).body, 1);
      expect(byKind).toBe(byType);
      expect(byKind).toContain(`Wallet ${NOBODY} holds no ERC-8004 identity on any chain`);
    });

    it('ignores non-text parts, even when they carry an address in a `text` field', async () => {
      const parts = [
        { kind: 'file', file: { uri: `https://x.example/${NOBODY}`, mimeType: 'text/plain' }, text: NOBODY },
        { kind: 'data', data: { wallet: NOBODY }, text: NOBODY },
        { type: 'image', text: NOBODY },
        { kind: 'data', type: 'text', text: NOBODY }, // `kind` wins over `type`
        { kind: 'text', text: 42 }, // not a string
        'a bare string',
        null,
        { kind: 'text', text: 'just words' },
      ];
      expect(expectMessage((await send(null, 'p', parts)).body, 'p')).toMatch(STATUS);
    });

    it('does not read role or messageId', async () => {
      const { body } = await rpc({
        jsonrpc: '2.0',
        id: 3,
        method: 'message/send',
        params: { message: { role: NOBODY, messageId: NOBODY, parts: [{ kind: 'text', text: 'hi' }] } },
      });
      expect(expectMessage(body, 3)).toMatch(STATUS);
    });

    it('falls through to the status answer when params is missing, null, empty, or carries no message parts', async () => {
      const variants: Record<string, unknown>[] = [
        {},
        { params: null },
        { params: {} },
        { params: { message: {} } },
        { params: { message: { parts: 'not an array' } } },
        { params: { message: { parts: [] } } },
        { params: [] },
      ];
      for (const v of variants) {
        const { res, body } = await rpc({ jsonrpc: '2.0', id: 9, method: 'message/send', ...v });
        expect(res.status, JSON.stringify(v)).toBe(200);
        expect(expectMessage(body, 9), JSON.stringify(v)).toMatch(
          /^Your message holds no text to look up\.\nIndex status: 0 agents and 0 ratings/,
        );
      }
    });

    it('reads a dot-only text (`..`, `.`, `.%2E`, `../chains`) like any text without a subject: the status answer', async () => {
      // The door only ever puts an EVM address or a base58 key in a path (through pathSegment), so a
      // dot segment never reaches a route from here: `..` is unparseable input, answered as such.
      for (const text of ['..', '.', '.%2E', '%2e%2e', '../chains', '/search/..']) {
        expect(classify(text), text).toEqual({ kind: 'status', empty: false });
        const { res, body } = await send(text, 4);
        expect(res.status, text).toBe(200);
        expect(expectMessage(body, 4), text).toMatch(
          /^Your message holds no EVM address and no Solana key to look up\.\nIndex status: 0 agents and 0 ratings/,
        );
      }
    });

    it('carries no caveat, no payment challenge and no policy decoration beyond text', async () => {
      const { text } = await send(`check ${NOBODY}`);
      expect(text).not.toMatch(/caveat|"402"|x402Version|accepts/);
    });
  });
}
