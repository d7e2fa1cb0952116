/**
 * The HTTP load pieces the benchmarks share: the access log silenced (so it does not weigh on the
 * rates), a bare Hono route (the ceiling a route is compared with) and the autocannon CLI run in a
 * child process (its JSON report read for the average rate).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import pino from 'pino';
import { configureLogging } from '../src/log.js';

const run$ = promisify(execFile);

/** Sends the process log (access lines included) to /dev/null, asynchronously. */
export function silenceLogs(): void {
  configureLogging({
    level: 'info',
    pretty: false,
    destination: pino.destination({ dest: '/dev/null', sync: false }),
  });
}

/**
 * A bare Hono app answering `GET /` with `{"ok":true}` (or the JSON text `body`: the same bytes as
 * a route under test, so only the shell around it differs) on an ephemeral port of 127.0.0.1.
 */
export async function startBareHono(body?: string): Promise<{ url: string; close(): Promise<void> }> {
  const bare = new Hono();
  bare.get('/', (c) =>
    body === undefined ? c.json({ ok: true }) : c.body(body, 200, { 'content-type': 'application/json' }),
  );
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: bare.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/**
 * Average requests per second of `url` under the autocannon CLI (`connections` connections for
 * `seconds` s), after 300 sequential warm-up requests (JIT, caches) that are not measured.
 * Non-2xx answers are reported on stdout.
 */
export async function autocannonRps(
  url: string,
  load: { connections: number; seconds: number },
): Promise<number> {
  for (let k = 0; k < 300; k++) await (await fetch(url)).arrayBuffer();
  const { stdout } = await run$(
    join(process.cwd(), 'node_modules', '.bin', 'autocannon'),
    ['-j', '-c', String(load.connections), '-d', String(load.seconds), url],
    { maxBuffer: 64 * 1024 * 1024 },
  );
  const r = JSON.parse(stdout) as { requests: { average: number }; non2xx: number };
  if (r.non2xx > 0) console.log(`    (${url}: ${r.non2xx} non-2xx answers)`);
  return r.requests.average;
}
