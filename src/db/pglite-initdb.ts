/**
 * A new PGlite data folder is made (PGlite's `initdb`) in a short-lived child process, never in
 * the process that then uses it: PGlite's initdb runs a second WebAssembly PostgreSQL whose memory
 * (~500 MB over an open database's ~340 MB) a process never gives back (WebAssembly memory does
 * not shrink), so a long-lived `index` or `serve` would carry it for its whole life.
 *
 * The child runs initdb into a scratch folder inside the data folder; the parent then moves its
 * entries up, `PG_VERSION` last, so a data folder that has `PG_VERSION` is always complete (a
 * child killed half way leaves only the scratch folder, removed by the next attempt).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The scratch folder (inside the data folder) the child runs initdb into. */
export const INITDB_SCRATCH = '.repindex-initdb';

/** What the child runs: open (and so initdb) the folder with PGlite, then close it. */
const CHILD_SOURCE = [
  'const [mod, dir] = process.argv.slice(1);',
  'const { PGlite } = await import(mod);',
  'const db = await PGlite.create({ dataDir: dir });',
  'await db.close();',
].join('\n');

/** The module the child imports PGlite from (the one this process resolves). */
export function pgliteModuleUrl(): string {
  return pathToFileURL(createRequire(import.meta.url).resolve('@electric-sql/pglite')).href;
}

export class PgliteInitError extends Error {
  override name = 'PgliteInitError';
}

/**
 * Runs the child; resolves on exit 0, rejects with its exit status and stderr tail otherwise. The
 * child runs with V8's baseline WebAssembly compiler only (`--liftoff-only`): it lives two seconds,
 * too short for optimised code to pay for its compilation (measured: CPU 3.8–4.1 → 2.6–2.9 s, wall
 * −0.4 s, peak RSS −75 MB for one initdb).
 */
function runChild(moduleUrl: string, target: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--liftoff-only', '--input-type=module', '-e', CHILD_SOURCE, moduleUrl, target],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: process.env,
      },
    );
    let stderr = '';
    child.stderr.on('data', (b: Buffer) => {
      stderr = (stderr + b.toString()).slice(-4_000);
    });
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      if (code === 0) return resolve();
      const status = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const tail = stderr.trim().split('\n').slice(-5).join('\n');
      reject(new Error(`the child process ${status}${tail ? `: ${tail}` : ''}`));
    });
  });
}

/**
 * Makes `dir` (which exists, and is locked by the caller) a PGlite data folder when it is not one
 * yet, in a child process. Returns whether it made one (false: `PG_VERSION` was already there).
 * Throws {@link PgliteInitError} naming the folder and the child's failure.
 */
export async function ensurePgliteDataDir(dir: string, moduleUrl = pgliteModuleUrl()): Promise<boolean> {
  if (existsSync(join(dir, 'PG_VERSION'))) return false;
  const scratch = join(dir, INITDB_SCRATCH);
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(scratch);
  try {
    await runChild(moduleUrl, scratch);
    if (!existsSync(join(scratch, 'PG_VERSION'))) throw new Error('the child made no PG_VERSION');
    const entries = readdirSync(scratch).filter((e) => e !== 'PG_VERSION');
    for (const e of entries) {
      rmSync(join(dir, e), { recursive: true, force: true });
      renameSync(join(scratch, e), join(dir, e));
    }
    renameSync(join(scratch, 'PG_VERSION'), join(dir, 'PG_VERSION'));
  } catch (e) {
    throw new PgliteInitError(
      `Could not create the PGlite data directory ${dir} (initdb in a child process): ${(e as Error).message}`,
      { cause: e },
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
  return true;
}
