#!/usr/bin/env node
// Launcher: runs the CLI IN THIS PROCESS (no child), so signals (Ctrl-C, a process manager's
// SIGTERM) reach the server itself and the exit code is the CLI's own.
//
// It runs the bundled JavaScript in dist/ (built by `npm run build`, which `npm install` / `npm ci`
// run through the `prepare` script). When dist/ is missing or older than src/ (a checkout edited
// since the last build), it says so on stderr and runs the TypeScript sources through tsx instead.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const compiled = join(root, 'dist', 'cli.js');

/** Newest modification time (ms) of the files under `dir` (0 when it does not exist). */
function newestMtime(dir) {
  let newest = 0;
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    const t = e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs;
    if (t > newest) newest = t;
  }
  return newest;
}

/** Why the compiled CLI cannot be used (null when it can). */
function staleReason() {
  if (process.env.REPINDEX_FROM_SOURCE === '1') return 'REPINDEX_FROM_SOURCE=1';
  if (!existsSync(compiled)) return 'dist/ is missing (run `npm run build`)';
  const src = join(root, 'src');
  if (existsSync(src) && newestMtime(src) > statSync(compiled).mtimeMs) {
    return 'dist/ is older than src/ (run `npm run build`)';
  }
  return null;
}

const why = staleReason();
let main;
if (why === null) {
  ({ main } = await import(pathToFileURL(compiled).href));
} else {
  process.stderr.write(`repindex: ${why}; running the TypeScript sources through tsx\n`);
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import(pathToFileURL(join(root, 'src', 'cli.ts')).href));
}

try {
  const code = await main(process.argv.slice(2));
  // -1: a long-running command (serve, demo) keeps the process alive; it exits on a signal.
  if (code >= 0) process.exit(code);
} catch (e) {
  process.stderr.write(`repindex: ${e?.stack ?? String(e)}\n`);
  process.exit(1);
}
