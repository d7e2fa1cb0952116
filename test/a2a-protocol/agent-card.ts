/**
 * The A2A door's envelope, the agent card (GET /.well-known/agent-card.json) and its place in
 * /openapi.json. Registered by test/a2a-protocol.test.ts on its servers (the client:
 * test/helpers/a2a-client.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type A2aServers, type Json } from '../helpers/a2a-client.js';

/** The 'GET /.well-known/agent-card.json' suite over the file's servers. */
export function agentCardSuite(servers: () => A2aServers): void {
  let server: A2aServers['server'];
  beforeAll(() => {
    ({ server } = servers());
  });

  describe('GET /.well-known/agent-card.json', () => {
    it('serves the 0.3.0 card with the fields of the contract, its url on BASE_URL', async () => {
      for (const path of ['/.well-known/agent-card.json', '/v1/.well-known/agent-card.json']) {
        const res = await fetch(`${server.url}${path}`);
        expect(res.status).toBe(200);
        expect(res.headers.get('access-control-allow-origin')).toBe('*');
        const card = (await res.json()) as Json;
        expect(card).toMatchObject({
          protocolVersion: '0.3.0',
          name: expect.any(String),
          version: '2.0.0',
          description: expect.any(String),
          url: `${server.url}/a2a`,
          preferredTransport: 'JSONRPC',
          supportedInterfaces: [
            { url: `${server.url}/a2a`, transport: 'JSONRPC', protocolBinding: 'JSONRPC' },
          ],
          provider: { organization: expect.any(String), url: server.url },
          documentationUrl: `${server.url}/docs`,
          capabilities: { streaming: false, pushNotifications: false, stateTransitionHistory: false },
          defaultInputModes: ['text/plain'],
          defaultOutputModes: ['text/plain'],
        });
        expect(card.skills.map((s: Json) => s.id)).toEqual(['vet-wallet', 'index-status']);
        for (const s of card.skills) {
          expect(s).toMatchObject({ name: expect.any(String), description: expect.any(String) });
          expect(s.tags.length).toBeGreaterThan(0);
          expect(s.examples.length).toBeGreaterThan(0);
        }
      }
    });

    it('is declared in /openapi.json while the door itself is not', async () => {
      const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as Json;
      expect(doc.paths['/.well-known/agent-card.json'].get).toBeDefined();
      expect(Object.keys(doc.paths).filter((p) => p.startsWith('/a2a') || p.startsWith('/mcp'))).toEqual([]);
      expect(JSON.stringify(doc)).not.toMatch(/"\/a2a/);
    });
  });
}
