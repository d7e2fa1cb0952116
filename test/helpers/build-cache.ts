/**
 * Keeps the test run's deterministic builds between runs: the migrated database template
 * (helpers/db-template.ts) and the registries compiled by solc (helpers/contracts-fixture.ts).
 * Together they cost about 8 CPU-s and 3–4 s before the first test file can start, and their
 * output only changes when their inputs do.
 *
 * An entry is a folder `node_modules/.cache/repindex-tests/<name>-<key>/`, where the key is a
 * SHA-256 of every input of the build (the source files it reads, the versions of the packages
 * that do the work, node's version). A run copies an entry into its own folder rather than using
 * it in place. An entry is written under a temporary name and renamed when complete, so a run
 * never sees half of one (two runs that build the same entry at once both succeed; one copy
 * stays). Storing an entry removes the other entries of that name. `npm ci` (a fresh
 * node_modules) or `rm -rf node_modules/.cache/repindex-tests` makes the next run build them.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from './repindex-bin.js';

export const CACHE_ROOT = join(ROOT, 'node_modules', '.cache', 'repindex-tests');

/** The files under `path` (or `path` itself), sorted, relative to the repository root. */
function filesOf(path: string): string[] {
  const full = join(ROOT, path);
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { withFileTypes: true })
    .flatMap((e) => filesOf(relative(ROOT, join(full, e.name))))
    .sort();
}

/** The version of an installed package (its package.json). */
export function packageVersion(name: string): string {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as {
    version: string;
  };
  return `${name}@${pkg.version}`;
}

/**
 * A key for a build whose inputs are the files at `paths` (folders: every file under them, by
 * name and content) and the strings in `versions`.
 */
export function cacheKey(paths: string[], versions: string[]): string {
  const h = createHash('sha256');
  for (const v of [...versions, `node@${process.version}`]) h.update(`${v}\0`);
  for (const f of paths.flatMap(filesOf)) {
    h.update(`${f}\0`);
    h.update(readFileSync(join(ROOT, f)));
    h.update('\0');
  }
  return h.digest('hex').slice(0, 32);
}

/**
 * Copies the entry `name`/`key` to `target` (a folder that must not exist yet), building it first
 * with `build(dir)` when it is not cached. Returns whether it was cached.
 */
export async function fromCache(
  name: string,
  key: string,
  target: string,
  build: (dir: string) => Promise<void>,
  root = CACHE_ROOT,
): Promise<boolean> {
  const entry = join(root, `${name}-${key}`);
  if (existsSync(entry)) {
    cpSync(entry, target, { recursive: true });
    return true;
  }
  mkdirSync(root, { recursive: true });
  const part = join(root, `.${name}-${key}.part-${randomBytes(4).toString('hex')}`);
  try {
    await build(part);
    cpSync(part, target, { recursive: true });
    try {
      renameSync(part, entry);
    } catch {
      // Another run stored the same entry meanwhile: keep theirs.
    }
  } finally {
    rmSync(part, { recursive: true, force: true });
  }
  // Older entries of this build, and parts that a run killed mid-build left (after an hour).
  for (const other of readdirSync(root)) {
    const path = join(root, other);
    const stale = other.startsWith(`${name}-`) && other !== `${name}-${key}`;
    const orphan = other.startsWith(`.${name}-`) && Date.now() - statSync(path).mtimeMs > 3_600_000;
    if (stale || orphan) rmSync(path, { recursive: true, force: true });
  }
  return false;
}
