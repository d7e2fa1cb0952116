/**
 * A real `repindex serve` child process, started as `npm start` starts it (`node bin/repindex.js
 * serve`, the compiled CLI) with a clean environment: PATH and HOME, a free port (`PORT=0`), no
 * indexer (`INDEXER_PERIOD_SECONDS=0`), then the caller's variables over those. Resolves once it
 * logs the address it listens on; a process that exits first, or does not listen in time, rejects
 * with everything it printed (and is killed, so a failed start leaves no process behind).
 *
 * Used by test/payments-processes-pg.test.ts and bench/chaos-payments.ts. Node modules only (no
 * vitest), so the benchmarks can import it.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { REPINDEX_BIN, ROOT, repindexArgs } from './repindex-bin.js';

export interface ServeProcess {
  child: ChildProcessByStdio<null, Readable, Readable>;
  /** The address it listens on, e.g. `http://127.0.0.1:43017`. */
  url: string;
  /** Everything it printed so far, stdout and stderr. */
  out(): string;
  /** SIGKILL unless it has exited already; resolves once it has. */
  kill(): Promise<void>;
}

export interface ServeOptions {
  /** Names the process in errors. */
  name: string;
  /** Its environment, over the defaults above (DATABASE_URL or DATA_DIR, TREASURY_ADDRESS, …). */
  env: Record<string, string>;
  /**
   * `true` (default): the suite's flags for a short-lived process (`--liftoff-only`,
   * test/helpers/repindex-bin.ts). `false`: V8's defaults, as a user's `serve` runs.
   */
  shortLived?: boolean;
  /** How long it may take to listen (default 200 s: a loaded machine, a cold start). */
  startTimeoutMs?: number;
}

const LISTENING = /"msg":"listening on (http:\/\/[^ "]+)/;

const running = (c: ServeProcess['child']) => c.exitCode === null && c.signalCode === null;

export async function startServeProcess(opts: ServeOptions): Promise<ServeProcess> {
  const args = opts.shortLived === false ? [REPINDEX_BIN, 'serve'] : repindexArgs(['serve']);
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: '0',
      INDEXER_PERIOD_SECONDS: '0',
      ...opts.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const kill = async () => {
    if (running(child)) child.kill('SIGKILL');
    await exited;
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`serve ${opts.name} did not start: ${out}`)),
        opts.startTimeoutMs ?? 200_000,
      );
      const check = () => {
        const m = LISTENING.exec(out);
        if (!m) return;
        clearTimeout(timer);
        resolve(m[1]!);
      };
      child.stdout.on('data', check);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`serve ${opts.name} exited (${code ?? signal}): ${out}`));
      });
    });
    return { child, url, out: () => out, kill };
  } catch (err) {
    await kill();
    throw err;
  }
}
