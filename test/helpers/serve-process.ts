/**
 * A real `repindex serve` child process, started as `npm start` starts it (`node bin/repindex.js
 * serve`, the compiled CLI) with a clean environment: PATH and HOME, a free port (`PORT=0`), no
 * indexer (`INDEXER_PERIOD_SECONDS=0`), then the caller's variables over those. Resolves once it
 * logs the address it listens on; a process that exits first, or does not listen in time, rejects
 * with everything it printed (and is killed, so a failed start leaves no process behind).
 *
 * Used by test/payments-processes-pg.test.ts, test/metrics.test.ts, test/cli.test.ts,
 * bench/chaos-payments.ts and bench/soak.ts. Node modules only (no vitest), so the benchmarks can
 * import it.
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
  /** What it printed on stdout alone (its log lines). */
  stdout(): string;
  /** SIGKILL unless it has exited already; resolves once it has. */
  kill(): Promise<void>;
  /** SIGTERM (a process manager's stop); resolves with its exit code once it has exited. */
  stop(): Promise<number | null>;
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
  /**
   * Resolve only once its output also matches this (e.g. the scheduler's start-up line, which
   * comes after the listening line); default: the listening line alone.
   */
  readyWhen?: RegExp;
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
  let stdout = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    stdout += d.toString();
  });
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const kill = async () => {
    if (running(child)) child.kill('SIGKILL');
    await exited;
  };
  const stop = async () => {
    if (running(child)) child.kill('SIGTERM');
    return exited;
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`serve ${opts.name} did not start: ${out}`)),
        opts.startTimeoutMs ?? 200_000,
      );
      const check = () => {
        const m = LISTENING.exec(out);
        if (!m || (opts.readyWhen && !opts.readyWhen.test(out))) return;
        clearTimeout(timer);
        resolve(m[1]!);
      };
      child.stdout.on('data', check);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`serve ${opts.name} exited (${code ?? signal}): ${out}`));
      });
    });
    return { child, url, out: () => out, stdout: () => stdout, kill, stop };
  } catch (err) {
    await kill();
    throw err;
  }
}
