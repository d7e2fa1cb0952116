/**
 * The A2A door's envelope, HTTP methods and CORS of the doors: 405 on wrong methods, the open CORS
 * of /a2a and /mcp, the door counted against the rate budget. Registered by
 * test/a2a-protocol.test.ts on its servers (the client: test/helpers/a2a-client.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { startHttpServer } from '../../src/server.js';
import { NOBODY, NOW, expectMessage, a2aClient, type A2aServers, type Json } from '../helpers/a2a-client.js';

/** The 'HTTP methods and CORS of the doors' suite over the file's servers. */
export function methodsCorsSuite(servers: () => A2aServers): void {
  let t: A2aServers['t'];
  let server: A2aServers['server'];
  const { send } = a2aClient(servers);
  beforeAll(() => {
    ({ t, server } = servers());
  });

  describe('HTTP methods and CORS of the doors', () => {
    it('answers GET, HEAD, PUT, PATCH and DELETE on /a2a with 405 {detail}', async () => {
      for (const path of ['/a2a', '/v1/a2a']) {
        for (const method of ['GET', 'PUT', 'PATCH', 'DELETE']) {
          const res = await fetch(`${server.url}${path}`, { method });
          expect(res.status, `${method} ${path}`).toBe(405);
          const body = (await res.json()) as Json;
          expect(Object.keys(body)).toEqual(['detail']);
          expect(typeof body.detail).toBe('string');
          expect(res.headers.get('allow')).toBe('POST, OPTIONS');
          expect(res.headers.get('api-version')).toBe('2.0.0');
        }
        const head = await fetch(`${server.url}${path}`, { method: 'HEAD' });
        expect(head.status).toBe(405);
      }
    });

    it('answers the preflight of /a2a and /mcp (and their /v1 aliases) with 204 and the open CORS headers', async () => {
      for (const path of ['/a2a', '/v1/a2a', '/mcp', '/v1/mcp']) {
        const res = await fetch(`${server.url}${path}`, {
          method: 'OPTIONS',
          headers: {
            origin: 'https://somewhere.example',
            'access-control-request-method': 'POST',
            'access-control-request-headers': 'content-type',
          },
        });
        expect(res.status, path).toBe(204);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        expect(res.headers.get('access-control-allow-methods')).toBe('POST, GET, OPTIONS');
        expect(res.headers.get('access-control-allow-headers')).toBe('content-type');
        expect(res.headers.get('access-control-max-age')).toBe('600');
        expect(res.headers.get('api-version')).toBe('2.0.0');
        expect(await res.text()).toBe('');
      }
    });

    it('counts the POST /a2a and every in-process read behind it against the same client budget', async () => {
      const config = loadConfig({ RATE_LIMIT_RPS: '1', RATE_LIMIT_BURST: '6' });
      const tight = await startHttpServer(
        { config, db: t.db, now: () => NOW },
        { host: '127.0.0.1', port: 0 },
      );
      try {
        // Each `vet` costs the POST plus its in-process preview read: 6 tokens serve 3 at most
        // (plus what the 1/s refill gives back), where counting the POST alone would serve 6.
        let served = 0;
        let last: Response | undefined;
        for (let i = 0; i < 8; i++) {
          const { res, body } = await send(`vet ${NOBODY}`, 1, undefined, tight.url);
          last = res;
          if (res.status !== 200) break;
          expectMessage(body, 1);
          served++;
        }
        expect(served).toBeGreaterThanOrEqual(2);
        expect(served).toBeLessThanOrEqual(4);
        expect(last?.status).toBe(429);
        expect(last?.headers.get('retry-after')).toBe('1');
      } finally {
        await tight.close();
      }
    });

    it('leaves other paths under /mcp and /a2a to the router', async () => {
      for (const path of ['/mcp/x', '/a2a/x']) {
        const res = await fetch(`${server.url}${path}`, { method: 'OPTIONS' });
        expect(res.status, path).toBe(404);
      }
    });
  });
}
