/**
 * The A2A door's envelope, over a real listening server and raw `fetch`: every JSON-RPC error path
 * (-32700, -32600, -32601, -32603), id echo, text part reading (`kind` | `type`, non-text parts
 * ignored, bounded scan), the status fallthrough, fresh message ids, the 405 on wrong methods, the
 * open CORS of /a2a and /mcp, and the agent card. The answer CONTENT against an indexed scenario is
 * in test/a2a.test.ts; here the database is a fresh, empty one (plus a "down" one for -32603).
 * This file starts the servers; the suites are modules of test/a2a-protocol/, registered in order.
 */
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../src/config.js';
import type { Database } from '../src/db/database.js';
import { startHttpServer, type RunningServer } from '../src/server.js';
import { agentCardSuite } from './a2a-protocol/agent-card.js';
import { envelopeSuite } from './a2a-protocol/envelope.js';
import { jsonRpcErrorsSuite } from './a2a-protocol/json-rpc-errors.js';
import { methodsCorsSuite } from './a2a-protocol/methods-cors.js';
import { textReadingSuite } from './a2a-protocol/text-reading.js';
import { NOW } from './helpers/a2a-client.js';
import { openTestDatabase, type TestDatabase } from './helpers/db.js';

const UNLIMITED = { RATE_LIMIT_RPS: '1000000', RATE_LIMIT_BURST: '1000000' };

let t: TestDatabase;
let server: RunningServer;
let down: RunningServer;
const servers = () => ({ t, server, down });

function downDatabase(): Database {
  const fail = async () => {
    throw new Error('database is down');
  };
  return {
    kind: 'postgres',
    query: fail,
    exec: fail,
    transaction: fail,
    tryWithLock: fail,
    close: async () => undefined,
  } as unknown as Database;
}

beforeAll(async () => {
  t = await openTestDatabase();
  // A budget this suite cannot exhaust; the door's own rate budget is tested on a separate server.
  const config = loadConfig(UNLIMITED);
  server = await startHttpServer({ config, db: t.db, now: () => NOW }, { host: '127.0.0.1', port: 0 });
  config.baseUrl = server.url;
  down = await startHttpServer(
    { config: loadConfig(UNLIMITED), db: downDatabase(), now: () => NOW },
    { host: '127.0.0.1', port: 0 },
  );
});

afterAll(async () => {
  await server?.close();
  await down?.close();
  await t?.close();
});

envelopeSuite(servers);
jsonRpcErrorsSuite(servers);
textReadingSuite(servers);
methodsCorsSuite(servers);
agentCardSuite(servers);
