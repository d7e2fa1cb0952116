/**
 * The A2A door's envelope, every JSON-RPC error path (-32700, -32600, -32601, -32603) with HTTP 200
 * and the id echoed, and the body size bound. Registered by test/a2a-protocol.test.ts on its
 * servers (the client: test/helpers/a2a-client.ts).
 */
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { MAX_BODY_BYTES } from '../../src/doors/http/routes/a2a.js';
import { NOBODY, expectError, expectMessage, a2aClient, type A2aServers } from '../helpers/a2a-client.js';

/** The 'POST /a2a: JSON-RPC errors' suite over the file's servers. */
export function jsonRpcErrorsSuite(servers: () => A2aServers): void {
  let down: A2aServers['down'];
  const { post, rpc, send } = a2aClient(servers);
  beforeAll(() => {
    ({ down } = servers());
  });

  describe('POST /a2a: JSON-RPC errors', () => {
    it.each([
      'message/stream',
      'tasks/get',
      'tasks/cancel',
      'tasks/resubscribe',
      'tasks/pushNotificationConfig/set',
      'tasks/pushNotificationConfig/get',
      'tasks/pushNotificationConfig/list',
      'tasks/pushNotificationConfig/delete',
      'agent/authenticatedExtendedCard',
      'agent/getAuthenticatedExtendedCard',
      'message/send ',
      'MESSAGE/SEND',
      'rpc.discover',
      '',
    ])('answers %j with HTTP 200 and -32601, echoing the id', async (method) => {
      for (const id of ['m', 7, null]) {
        const { res, body } = await rpc({
          jsonrpc: '2.0',
          id,
          method,
          params: { message: { parts: [{ kind: 'text', text: NOBODY }] } },
        });
        expect(res.status).toBe(200);
        expectError(body, -32601, id);
        expect(body.error.data).toEqual({ supported_methods: ['message/send'] });
      }
    });

    it.each<[string, unknown, unknown]>([
      ['a batch (array)', [{ jsonrpc: '2.0', id: 1, method: 'message/send' }], null],
      ['an empty batch', [], null],
      ['null', null, null],
      ['a number', 42, null],
      ['a string', 'message/send', null],
      ['a boolean', true, null],
      ['an empty object', {}, null],
      ['jsonrpc 1.0', { jsonrpc: '1.0', id: 1, method: 'message/send' }, 1],
      ['jsonrpc as a number', { jsonrpc: 2.0, id: 'a', method: 'message/send' }, 'a'],
      ['no jsonrpc', { id: 1, method: 'message/send' }, 1],
      ['no method', { jsonrpc: '2.0', id: 1 }, 1],
      ['method not a string', { jsonrpc: '2.0', id: 1, method: 5 }, 1],
      ['method null', { jsonrpc: '2.0', id: 'n', method: null }, 'n'],
      ['no id (a notification)', { jsonrpc: '2.0', method: 'message/send' }, null],
      ['id an object', { jsonrpc: '2.0', id: { a: 1 }, method: 'message/send' }, null],
      ['id an array', { jsonrpc: '2.0', id: [1], method: 'message/send' }, null],
      ['id a boolean', { jsonrpc: '2.0', id: true, method: 'message/send' }, null],
      ['id a fraction', { jsonrpc: '2.0', id: 1.5, method: 'message/send' }, null],
      ['id an unsafe integer', { jsonrpc: '2.0', id: 2 ** 60, method: 'message/send' }, null],
      ['params a string', { jsonrpc: '2.0', id: 4, method: 'message/send', params: 'hello' }, 4],
      ['params a number', { jsonrpc: '2.0', id: 4, method: 'message/send', params: 5 }, 4],
    ])('answers %s with HTTP 200 and -32600', async (_name, msg, id) => {
      const { res, body } = await post(JSON.stringify(msg));
      expect(res.status).toBe(200);
      expectError(body, -32600, id);
    });

    it('checks the envelope before the method: an invalid request with an unknown method is -32600', async () => {
      const { body } = await rpc({ jsonrpc: '1.0', id: 1, method: 'tasks/get' });
      expectError(body, -32600, 1);
    });

    it.each([
      '{bad',
      '',
      'not json',
      '{"jsonrpc":"2.0","id":1,"method":"message/send"',
      "{'jsonrpc':'2.0'}",
      '\u0000\u0001',
    ])('answers an unparseable body %j with HTTP 400 and -32700, id null', async (raw) => {
      const { res, body } = await post(raw);
      expect(res.status).toBe(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      expectError(body, -32700, null);
    });

    it('parses the body whatever the Content-Type says', async () => {
      const msg = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'message/send' });
      const { res, body } = await post(msg, { headers: { 'content-type': 'text/plain' } });
      expect(res.status).toBe(200);
      expectMessage(body, 1);
    });

    it(`refuses a body over ${MAX_BODY_BYTES} bytes unread with 413 and a -32600 envelope (never 500)`, async () => {
      const big = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'message/send',
        params: { message: { parts: [{ kind: 'text', text: 'x'.repeat(MAX_BODY_BYTES) }] } },
      });
      const { res, body } = await post(big);
      expect(res.status).toBe(413);
      expectError(body, -32600, null);
      // The server is still fine.
      expectMessage((await send('hi')).body, 1);
    });

    it('turns a failure behind the door into -32603 with the id echoed (HTTP 200), never a crash, never the message in the log', async () => {
      const spy = vi.spyOn(console, 'error').mockImplementation(() => undefined);
      try {
        const secret = 'SECRET-TEXT-0123';
        for (const [id, text] of [
          ['e1', `please vet ${NOBODY} ${secret}`],
          [5, `status ${secret}`],
          [null, `So1anaWa11et${'A'.repeat(32)} ${secret}`],
        ] as const) {
          const { res, body } = await rpc(
            {
              jsonrpc: '2.0',
              id,
              method: 'message/send',
              params: { message: { parts: [{ kind: 'text', text }] } },
            },
            { base: down.url },
          );
          expect(res.status).toBe(200);
          expectError(body, -32603, id);
          expect(JSON.stringify(body)).not.toContain(secret);
          expect(JSON.stringify(body)).not.toContain('database is down');
        }
        for (const call of spy.mock.calls) expect(call.join(' ')).not.toContain('SECRET-TEXT');
        // The same door keeps answering the envelope errors.
        expectError(
          (await rpc({ jsonrpc: '2.0', id: 1, method: 'tasks/get' }, { base: down.url })).body,
          -32601,
          1,
        );
      } finally {
        spy.mockRestore();
      }
    });
  });
}
