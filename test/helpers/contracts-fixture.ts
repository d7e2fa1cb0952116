/**
 * The registries compiled from the current sources once per `vitest run`, for the test that the
 * committed artifacts are what `contracts/build.ts` produces. solc-js takes seconds of CPU on one
 * thread; global setup starts it first, as a child process (`contracts/build.ts --out`), so it runs
 * on the core that the database template's build (one thread) leaves idle. A test waits for it
 * with {@link awaitCompiledContracts}.
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, SHORT_LIVED_NODE_FLAGS } from './repindex-bin.js';

const READY = 'done';
const FAILED = 'failed.txt';

/** What global setup hands to the test files: the folder the artifacts are compiled into. */
export interface CompiledContractsRef {
  dir: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** null when no file of the run reads the compiled contracts (then they are not compiled). */
    compiledContracts: CompiledContractsRef | null;
  }
}

/**
 * Starts the compiler into `ref.dir`. The promise settles when it has finished (a failure is
 * written to the folder for the waiting test to report); `stop()` kills it if it still runs.
 */
export function startContractsBuild(ref: CompiledContractsRef): { done: Promise<void>; stop(): void } {
  const out = join(ref.dir, 'artifacts');
  // solc-js is wasm too: its baseline code is enough for one compile (6.7 instead of 8.7 CPU-s).
  const args = [...SHORT_LIVED_NODE_FLAGS, '--import', 'tsx', 'contracts/build.ts', '--out', out];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const done = new Promise<void>((resolve) => {
    const fail = (why: string) => {
      writeFileSync(join(ref.dir, FAILED), why);
      resolve();
    };
    child.once('error', (e) => fail(`contracts/build.ts could not start: ${e.message}`));
    child.once('exit', (code, signal) => {
      if (code !== 0) return fail(`contracts/build.ts --out exited with ${code ?? signal}:\n${stderr}`);
      writeFileSync(join(ref.dir, READY), '');
      resolve();
    });
  });
  return {
    done,
    stop: () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** The compiled artifacts (file name → text), once the build global setup started has finished. */
export async function awaitCompiledContracts(
  ref: CompiledContractsRef | null,
  timeoutMs = 300_000,
): Promise<Map<string, string>> {
  if (!ref)
    throw new Error(
      'the contracts were not compiled: test/global-setup.ts compiles them when a file calls awaitCompiledContracts(',
    );
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (existsSync(join(ref.dir, READY))) {
      const dir = join(ref.dir, 'artifacts');
      return new Map(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));
    }
    if (existsSync(join(ref.dir, FAILED))) throw new Error(readFileSync(join(ref.dir, FAILED), 'utf8'));
    if (Date.now() > until) throw new Error(`the contracts were not compiled within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
