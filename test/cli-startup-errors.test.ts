/**
 * Start-up errors through the binary (issue 11, point 5): one line naming the variable and the
 * cause, no stack trace, the documented exit code; `serve` checks its port BEFORE opening or
 * migrating the database.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDatabaseUrl } from './helpers/db.js';
import { repindexArgs } from './helpers/repindex-bin.js';

const ROOT = join(import.meta.dirname, '..');

function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string; ms: number }> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, repindexArgs(args), {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, ms: Date.now() - t0 });
    });
  });
}

/** One line (the message), never a stack trace. */
function expectOneLine(stderr: string) {
  const lines = stderr
    .split('\n')
    .filter((l) => l.trim() !== '' && !l.includes('ExperimentalWarning') && !l.startsWith('(node'));
  expect(lines, stderr).toHaveLength(1);
  expect(stderr).not.toMatch(/\n\s+at /);
  return lines[0]!;
}

let busy: Server;
let busyPort: number;
let closedPort: number;
const dirs: string[] = [];
const dataDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'repindex-startup-'));
  dirs.push(d);
  return d;
};

beforeAll(async () => {
  busy = createServer();
  await new Promise<void>((r) => busy.listen(0, '127.0.0.1', r));
  busyPort = (busy.address() as { port: number }).port;
  // A port nobody listens on (bound, then released).
  const tmp = createServer();
  await new Promise<void>((r) => tmp.listen(0, '127.0.0.1', r));
  closedPort = (tmp.address() as { port: number }).port;
  await new Promise((r) => tmp.close(r));
});

afterAll(async () => {
  await new Promise((r) => busy?.close(r));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('start-up errors', () => {
  it('a busy port: exit 75, one line naming HOST/PORT and the cause', async () => {
    const r = await run(['serve'], {
      DATA_DIR: dataDir(),
      PORT: String(busyPort),
      INDEXER_PERIOD_SECONDS: '0',
    });
    expect(r.code).toBe(75);
    const line = expectOneLine(r.stderr);
    expect(line).toContain('PORT');
    expect(line).toContain(String(busyPort));
    expect(line).toMatch(/already in use/);
  }, 120_000);

  it('checks the port before the database: a busy port wins over an unreachable DATABASE_URL', async () => {
    const r = await run(['serve'], {
      DATABASE_URL: `postgres://nobody@127.0.0.1:${closedPort}/nothing`,
      PORT: String(busyPort),
      INDEXER_PERIOD_SECONDS: '0',
    });
    expect(r.code).toBe(75);
    expect(expectOneLine(r.stderr)).toMatch(/PORT.*already in use/);
  }, 120_000);

  it('an unreachable DATABASE_URL: exit 69, one line naming DATABASE_URL and the cause (never the password)', async () => {
    for (const cmd of [['migrate'], ['index', '--once'], ['serve']]) {
      const r = await run(cmd, {
        DATABASE_URL: `postgres://nobody:s3cret@127.0.0.1:${closedPort}/nothing`,
        PORT: '0',
        INDEXER_PERIOD_SECONDS: '0',
      });
      expect(r.code, cmd.join(' ')).toBe(69);
      const line = expectOneLine(r.stderr);
      expect(line).toContain('DATABASE_URL');
      expect(line).toMatch(/cannot reach/);
      expect(line).toContain('ECONNREFUSED');
      expect(line).not.toContain('s3cret');
    }
  }, 240_000);

  it.skipIf(!testDatabaseUrl)(
    'a DATABASE_URL naming a missing database: exit 78, one line saying so',
    async () => {
      const u = new URL(testDatabaseUrl!);
      u.pathname = '/repindex_no_such_database_h11';
      for (const cmd of [['migrate'], ['serve']]) {
        const r = await run(cmd, { DATABASE_URL: u.toString(), PORT: '0', INDEXER_PERIOD_SECONDS: '0' });
        expect(r.code, cmd.join(' ')).toBe(78);
        const line = expectOneLine(r.stderr);
        expect(line).toContain('DATABASE_URL');
        expect(line).toMatch(/does not exist/);
      }
    },
    240_000,
  );
});
