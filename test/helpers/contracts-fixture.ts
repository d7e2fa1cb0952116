/**
 * The registries compiled from the current sources, for the test that the committed artifacts are
 * what `contracts/build.ts` produces. solc-js takes about 5 CPU-s on one thread: global setup
 * starts it first, as a child process (`contracts/build.ts --out`), so it runs on the core that
 * the database template's build (one thread) leaves idle, and its output is kept in the build
 * cache for the next runs (keyed by the sources, the build script and solc's version). A test
 * waits for it with {@link awaitCompiledContracts}.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheKey, fromCache, packageVersion } from './build-cache.js';
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

/** The inputs of the compile: the sources, the build script and the compiler. */
function contractsKey(): string {
  const sources = readdirSync(join(ROOT, 'contracts'))
    .filter((f) => f.endsWith('.sol'))
    .map((f) => `contracts/${f}`);
  return cacheKey([...sources, 'contracts/build.ts'], [packageVersion('solc')]);
}

/** Runs `contracts/build.ts --out out` in a child process; `started` receives the child. */
function compileInto(out: string, started: (child: ChildProcess) => void): Promise<void> {
  // solc-js is wasm too: its baseline code is enough for one compile (6.7 instead of 8.7 CPU-s).
  const args = [...SHORT_LIVED_NODE_FLAGS, '--import', 'tsx', 'contracts/build.ts', '--out', out];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
  started(child);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise<void>((resolve, reject) => {
    child.once('error', (e) => reject(new Error(`contracts/build.ts could not start: ${e.message}`)));
    child.once('exit', (code, signal) => {
      if (code === 0) resolve();
      else reject(new Error(`contracts/build.ts --out exited with ${code ?? signal}:\n${stderr}`));
    });
  });
}

/**
 * Puts the artifacts into `ref.dir`: compiled by a child process, or copied from the build cache
 * when the sources, the build script and solc are unchanged since an earlier run
 * (helpers/build-cache.ts). The promise settles when that has finished (a failure is written to
 * the folder for the waiting test to report); `stop()` kills the compiler if it still runs.
 */
export function startContractsBuild(ref: CompiledContractsRef): { done: Promise<void>; stop(): void } {
  let child: ChildProcess | null = null;
  const done = fromCache('solc-artifacts', contractsKey(), join(ref.dir, 'artifacts'), (out) =>
    compileInto(out, (c) => (child = c)),
  ).then(
    () => writeFileSync(join(ref.dir, READY), ''),
    (e: unknown) => writeFileSync(join(ref.dir, FAILED), (e as Error)?.message ?? String(e)),
  );
  return {
    done,
    stop: () => {
      const c = child as ChildProcess | null;
      if (c && c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
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
