/**
 * Once per `vitest run` (vitest globalSetup):
 * - builds dist/ when it is missing or older than src/, so the tests that start bin/repindex.js run
 *   the compiled CLI as `npm start` does (`npm ci` already built it through `prepare`);
 * - points TMPDIR at a private folder for the run (in memory when it can: runTmpParent), and at the
 *   end fails the run when a test left a `repindex-*` folder in it (every test removes what it
 *   creates; see helpers/tmp.ts), then removes the folder. Runs started at the same time therefore
 *   never see each other's folders;
 * - compiles the registries from the current sources in a child process, started first so that it
 *   runs beside the template build (helpers/contracts-fixture.ts), when a file of the run reads them;
 * - builds a migrated, empty database once (helpers/db-template.ts), loaded by every test database;
 *   these two come from the build cache when their inputs are unchanged (helpers/build-cache.ts);
 * - builds the demo index once, when a file of the run reads it, and provides it to the files
 *   that copy it (helpers/demo-fixture.ts, helpers/demo.ts). The build is started here but not
 *   awaited: the other files run meanwhile, and a file that reads the demo waits for it.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  statfsSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { startContractsBuild, type CompiledContractsRef } from './helpers/contracts-fixture.js';
import { admin, testDatabaseUrl } from './helpers/db.js';
import { buildDbTemplates } from './helpers/db-template.js';
import {
  buildDemoFixture,
  demoFixtureRef,
  removeDemoFixture,
  type DemoFixtureRef,
} from './helpers/demo-fixture.js';

const ROOT = join(import.meta.dirname, '..');
/** Below vitest's teardownTimeout (vitest.config.ts), which ends a teardown silently. */
const TEARDOWN_GUARD_MS = 50_000;

function newestMtime(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    const t = e.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs;
    if (t > newest) newest = t;
  }
  return newest;
}

function ensureBuilt(): void {
  const cli = join(ROOT, 'dist', 'cli.js');
  if (existsSync(cli) && statSync(cli).mtimeMs >= newestMtime(join(ROOT, 'src'))) return;
  console.log('[global-setup] dist/ is missing or older than src/: building it (npm run build)');
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  if (r.status !== 0) throw new Error('[global-setup] npm run build failed');
}

/** statfs type of tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;

/**
 * Where the run's private folder goes: TMPDIR when it is set, else /dev/shm when it is a tmpfs with
 * room to spare, else the system's temporary folder. The run writes and copies dozens of PGlite
 * data directories (40 MB and 1,000 files each); on a disk busy writing back, one copy costs up
 * to 0.8 CPU-s of kernel time, in memory 0.03 s (10 CPU-s over a run). The run's peak there is
 * about 350 MB, all removed at the end.
 */
function runTmpParent(): string {
  if (process.env.TMPDIR) return tmpdir();
  try {
    const fs = statfsSync('/dev/shm');
    if (fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= 4 * 2 ** 30) return '/dev/shm';
  } catch {
    // no /dev/shm
  }
  return tmpdir();
}

/** Drops this run's test schemas (`t_<tag>_…`) from the PostgreSQL test database. */
async function dropTestSchemas(runTag: string): Promise<void> {
  await admin(async (c) => {
    const { rows } = await c.query<{ nspname: string }>(
      `SELECT nspname FROM pg_namespace WHERE nspname LIKE $1`,
      [`t\\_${runTag}\\_%`],
    );
    for (const r of rows) await c.query(`DROP SCHEMA IF EXISTS "${r.nspname}" CASCADE`);
  });
}

/** Whether a test file of this run contains one of `markers` (a fixture only files that use it need). */
async function runFilesContain(project: TestProject, ...markers: string[]): Promise<boolean> {
  // The file filters given on the command line (vitest keeps them on an internal field; absent: all).
  const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern;
  const { testFiles } = await project.globTestFiles(filters);
  return testFiles.some((f) => {
    const text = readFileSync(f, 'utf8');
    return markers.some((m) => text.includes(m));
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureBuilt();
  const runTmp = mkdtempSync(join(runTmpParent(), 'vitest-repindex-run-'));
  const previous = process.env.TMPDIR;
  process.env.TMPDIR = runTmp;
  const restore = () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
  };
  const t0 = Date.now();
  let building: Promise<unknown> | null = null;
  let demoRef: DemoFixtureRef | null = null;
  let contractsRef: CompiledContractsRef | null = null;
  let contracts: ReturnType<typeof startContractsBuild> | null = null;
  try {
    if (await runFilesContain(project, 'awaitCompiledContracts(')) {
      contractsRef = { dir: join(runTmp, 'contracts') };
      mkdirSync(contractsRef.dir);
      contracts = startContractsBuild(contractsRef);
    }
    const { ref: templates, cached } = await buildDbTemplates(join(runTmp, 'db-template'));
    project.provide('dbTemplate', templates);
    console.log(
      `[global-setup] migrated database template ${cached ? 'copied from the build cache' : 'built'} in ${Date.now() - t0} ms`,
    );
    if (await runFilesContain(project, 'openDemoCopy(', 'playedDemo(')) {
      // Not awaited: the files that do not read the demo run while it is built; openDemoCopy waits.
      demoRef = demoFixtureRef(join(runTmp, 'demo-fixture'));
      const t1 = Date.now();
      building = buildDemoFixture(demoRef, templates.tar).then(
        ({ nodesMs, scenarioMs, indexMs }) =>
          console.log(
            `[global-setup] demo index built once in ${Date.now() - t1} ms (nodes ${nodesMs}, scenario ` +
              `${scenarioMs}, index ${indexMs}), beside the first test files; the files that read it copy it`,
          ),
        (e: unknown) => console.error('[global-setup] the demo index could not be built:', e),
      );
    }
  } catch (e) {
    contracts?.stop();
    await contracts?.done;
    restore();
    rmSync(runTmp, { recursive: true, force: true });
    throw e;
  }
  project.provide('demoFixture', demoRef);
  project.provide('compiledContracts', contractsRef);
  const runTag = randomBytes(4).toString('hex');
  project.provide('runTag', runTag);
  return async () => {
    // vitest abandons a global teardown after teardownTimeout without a word (vitest.config.ts):
    // a step that hangs fails the run here instead, by name, before that.
    let step = 'stopping the contracts compile';
    const guard = setTimeout(() => {
      console.error(`[global-teardown] still ${step} after ${TEARDOWN_GUARD_MS} ms`);
      process.exitCode = 1;
    }, TEARDOWN_GUARD_MS);
    try {
      await teardown((s) => (step = s));
    } finally {
      clearTimeout(guard);
    }
  };

  async function teardown(at: (step: string) => void): Promise<void> {
    try {
      contracts?.stop();
      await contracts?.done;
      at('waiting for the demo build');
      await building;
      at('removing the demo fixture');
      if (demoRef) await removeDemoFixture(demoRef);
    } finally {
      restore();
    }
    // The PostgreSQL test schemas the workers' pools still held (helpers/db.ts).
    at('dropping the test schemas');
    if (testDatabaseUrl) await dropTestSchemas(runTag);
    at('removing the temporary folder');
    const left = readdirSync(runTmp).filter((n) => n.startsWith('repindex-'));
    rmSync(runTmp, { recursive: true, force: true });
    if (left.length > 0) {
      throw new Error(`tests left temporary folders behind (removed now): ${left.join(', ')}`);
    }
  }
}
