/** The repindex binary, run as a user would: a child process on a temporary data directory. */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { migratedDataDir } from './helpers/db-template.js';
import { tempDir } from './helpers/tmp.js';
import { repindexArgs } from './helpers/repindex-bin.js';
import { startServeProcess } from './helpers/serve-process.js';

const ROOT = join(import.meta.dirname, '..');

function run(args: string[], env: Record<string, string> = {}) {
  return spawnSync(process.execPath, repindexArgs(args), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
}

describe('repindex CLI', () => {
  it('prints help for the binary and for each command', () => {
    const top = run(['--help']);
    expect(top.status).toBe(0);
    for (const cmd of ['serve', 'index --once', 'migrate', 'demo']) expect(top.stdout).toContain(cmd);
    for (const cmd of ['serve', 'index', 'migrate', 'demo']) {
      const r = run([cmd, '--help']);
      expect(r.status, cmd).toBe(0);
      expect(r.stdout).toContain(`Usage: repindex ${cmd}`);
    }
  });

  it('refuses unknown commands and options', () => {
    expect(run(['frobnicate']).status).toBe(64);
    expect(run(['migrate', '--bogus']).status).toBe(64);
  });

  it('stops on a bad configuration value with a message naming it', () => {
    const r = run(['migrate'], { PORT: 'abc' });
    expect(r.status).toBe(78);
    expect(r.stderr).toContain('PORT must be an integer');
    const dir = tempDir('repindex-cli-');
    writeFileSync(join(dir, 'chains.json'), '{"nowhere": {}}');
    const r2 = run(['migrate'], { CHAINS_FILE: join(dir, 'chains.json') });
    expect(r2.status).toBe(78);
    expect(r2.stderr).toContain('unknown network "nowhere"');
  });

  // One brand-new data directory for the whole first-start story (PGlite's initdb costs seconds of
  // CPU in a fresh process): `npm start` on a new machine, then `migrate` run by hand.
  it('serve creates and migrates a fresh data directory, answers /health, refuses a second process; migrate then finds it up to date', async () => {
    const dataDir = tempDir('repindex-cli-');
    const serve = await startServeProcess({ name: 'first start', env: { DATA_DIR: dataDir } });
    try {
      const { url } = serve;
      // The first start created the schema, and said so.
      expect(serve.out()).toContain('applied 0001_core.sql');
      const res = await fetch(`${url}/health`);
      expect(res.status).toBe(200);
      const body = await res.json();
      expect(body).toMatchObject({ status: 'starting', agents: 0, feedback_entries: 0 });
      expect(body.chains).toHaveLength(11);
      // PGlite has no lock of its own: a second process on the same directory must refuse.
      const second = run(['index', '--once'], { DATA_DIR: dataDir });
      expect(second.status).toBe(75);
      expect(second.stderr).toContain('in use by another repindex process');
    } finally {
      await serve.stop();
    }
    // Migrating by hand afterwards is harmless.
    const again = run(['migrate'], { DATA_DIR: dataDir });
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toContain('already up to date');
    expect(again.stdout).not.toMatch(/applied \d/);
  });

  it('--help runs the compiled CLI (dist/) in the launcher process', () => {
    const r = run(['--help']);
    expect(r.status).toBe(0);
    // The fallback to the TypeScript sources announces itself; the suite's global setup built dist/.
    expect(r.stderr).not.toContain('running the TypeScript sources');
  });

  it('SIGTERM to the launcher stops the server and frees the port (no child is left behind)', async () => {
    const dataDir = migratedDataDir(tempDir('repindex-cli-'));
    const serve = await startServeProcess({
      name: 'launcher',
      env: { DATA_DIR: dataDir, LOG_LEVEL: 'info' },
    });
    const { url } = serve;
    try {
      expect((await fetch(`${url}/health`)).status).toBe(200);
      expect(await serve.stop()).toBe(0);
    } finally {
      await serve.kill();
    }
    // The launcher was the server: once it has exited, nothing listens on the port any more.
    await expect(fetch(`${url}/health`)).rejects.toThrow();
    const port = Number(new URL(url).port);
    await new Promise<void>((resolve, reject) => {
      const s = createServer();
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => s.close(() => resolve()));
    });
  });
});
