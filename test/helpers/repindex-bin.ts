/**
 * How the tests start the repindex binary: `node bin/repindex.js <args>`, as `npx repindex` and
 * `npm start` do, plus one V8 flag, `--liftoff-only` (wasm runs on V8's baseline compiler only).
 * A test's CLI process lives for seconds; optimising PGlite's wasm with TurboFan costs such a process
 * more CPU than it saves (`repindex migrate` on a migrated directory: 2.2 → 0.9 CPU-s, 1.5 → 0.8 s).
 * The flag changes no behaviour: the same code, output, exit codes and signals. A user's long-lived
 * `serve` keeps V8's defaults.
 */
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
export const REPINDEX_BIN = join(ROOT, 'bin', 'repindex.js');

/** The node flags for a short-lived process of the suite (the CLI, a script). */
export const SHORT_LIVED_NODE_FLAGS = ['--liftoff-only'];

/** `process.execPath`'s arguments for `repindex <args>`. */
export function repindexArgs(args: string[]): string[] {
  return [...SHORT_LIVED_NODE_FLAGS, REPINDEX_BIN, ...args];
}
