/**
 * Builds the demo index once per `vitest run` (test/global-setup.ts); test files copy it through
 * helpers/demo.ts, which explains the scheme. Shared bits (names) live here; the admin connection
 * is helpers/db.ts's admin().
 */
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainConfig } from '../../src/chains.js';
import { startDemo, type Demo } from '../../src/demo/run-demo.js';
import type { ScenarioFacts } from '../../src/demo/scenario.js';
import type { PassReport } from '../../src/indexer/pass.js';
import { admin, testDatabaseUrl } from './db.js';
import { exportRowsTo } from './db-template.js';

/** What global setup hands to the test files (vitest `provide`/`inject`: plain JSON). */
export interface DemoFixtureRef {
  /** Folder holding demo.json (and on PGlite rows/: every table's rows, binary COPY). */
  dir: string;
  /** PostgreSQL: the template database's name; null on PGlite. */
  template: string | null;
}

export interface DemoFixtureFile {
  facts: ScenarioFacts;
  pass: PassReport;
  timings: Demo['timings'];
  /** The scenario chains as the demo configured them (their rpcUrl no longer answers). */
  chains: ChainConfig[];
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** null when no file of the run reads the demo index (then it is not built). */
    demoFixture: DemoFixtureRef | null;
  }
}

const quiet = { info: () => undefined, warn: () => undefined };

/** `url` with its database name replaced (works for host URLs and `postgres:///db?host=/socket`). */
export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** Database names are generated here ([a-z0-9_] only), never taken from input. */
export const ident = (name: string) => {
  if (!/^[a-z0-9_]{1,63}$/.test(name)) throw new Error(`bad database name ${name}`);
  return `"${name}"`;
};

/** Where the fixture will be built: the folder and, on PostgreSQL, the template database's name. */
export function demoFixtureRef(dir: string): DemoFixtureRef {
  if (!testDatabaseUrl) return { dir, template: null };
  const base =
    new URL(testDatabaseUrl).pathname
      .slice(1)
      .toLowerCase()
      .replace(/[^a-z0-9_]/g, '_') || 'db';
  return { dir, template: `${base.slice(0, 30)}_demo_${randomBytes(4).toString('hex')}` };
}

const READY = 'demo.json';
const FAILED = 'failed.txt';

/**
 * Builds the fixture into `ref` (global setup starts it without waiting: the files that do not
 * read the demo run meanwhile, and {@link awaitDemoFixture} waits for it). Its last act writes
 * demo.json (atomically); a failure is written to failed.txt for the waiting files to report.
 * `migratedDataDir`: on PGlite, a migrated data directory to start from (spares an initdb).
 */
export async function buildDemoFixture(
  ref: DemoFixtureRef,
  migratedDataDir?: string,
): Promise<Demo['timings']> {
  const { dir, template } = ref;
  mkdirSync(dir, { recursive: true });
  try {
    let demo: Demo;
    if (template) {
      await admin((c) => c.query(`CREATE DATABASE ${ident(template)}`));
      demo = await startDemo({ databaseUrl: withDatabase(testDatabaseUrl!, template), log: quiet });
    } else {
      if (migratedDataDir) cpSync(migratedDataDir, join(dir, 'pgdata'), { recursive: true });
      demo = await startDemo({ dataDir: join(dir, 'pgdata'), log: quiet });
    }
    const enabled = demo.config.chains.filter((c) => c.enabled);
    const file: DemoFixtureFile = {
      facts: demo.facts,
      pass: demo.pass,
      timings: demo.timings,
      chains: enabled,
    };
    await demo.close();
    if (!template) {
      await exportRowsTo(join(dir, 'pgdata'), join(dir, 'rows'));
      rmSync(join(dir, 'pgdata'), { recursive: true, force: true });
    }
    writeFileSync(join(dir, `${READY}.part`), JSON.stringify(file));
    renameSync(join(dir, `${READY}.part`), join(dir, READY));
    return demo.timings;
  } catch (e) {
    writeFileSync(join(dir, FAILED), (e as Error)?.stack ?? String(e));
    throw e;
  }
}

/** The built fixture's facts, once its build has finished (polls; the build runs in global setup). */
export async function awaitDemoFixture(ref: DemoFixtureRef, timeoutMs = 600_000): Promise<DemoFixtureFile> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (existsSync(join(ref.dir, READY))) {
      return JSON.parse(readFileSync(join(ref.dir, READY), 'utf8')) as DemoFixtureFile;
    }
    if (existsSync(join(ref.dir, FAILED))) {
      throw new Error(`the demo index could not be built: ${readFileSync(join(ref.dir, FAILED), 'utf8')}`);
    }
    if (Date.now() > until) throw new Error(`the demo index was not built within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Removes the fixture: its folder and, on PostgreSQL, the template and any copy left of it. */
export async function removeDemoFixture(ref: DemoFixtureRef): Promise<void> {
  rmSync(ref.dir, { recursive: true, force: true });
  const template = ref.template;
  if (!template) return;
  await admin(async (c) => {
    // Copies a crashed file could not drop, then the template itself.
    const rows = await c.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [
      `${template}\\_%`,
    ]);
    for (const r of rows.rows) await c.query(`DROP DATABASE IF EXISTS ${ident(r.datname)} WITH (FORCE)`);
    await c.query(`DROP DATABASE IF EXISTS ${ident(template)} WITH (FORCE)`);
  });
}
