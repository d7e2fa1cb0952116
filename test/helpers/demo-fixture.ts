/**
 * Builds the demo index once per `vitest run` (test/global-setup.ts); test files copy it through
 * helpers/demo.ts, which explains the scheme. Shared bits (names, admin connection) live here.
 */
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { ChainConfig } from '../../src/chains.js';
import { startDemo, type Demo } from '../../src/demo/run-demo.js';
import type { ScenarioFacts } from '../../src/demo/scenario.js';
import type { PassReport } from '../../src/indexer/pass.js';
import { testDatabaseUrl } from './db.js';

/** What global setup hands to the test files (vitest `provide`/`inject`: plain JSON). */
export interface DemoFixtureRef {
  /** Folder holding demo.json (and on PGlite pgdata.tar). */
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

export async function admin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: testDatabaseUrl! });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Database names are generated here ([a-z0-9_] only), never taken from input. */
export const ident = (name: string) => {
  if (!/^[a-z0-9_]{1,63}$/.test(name)) throw new Error(`bad database name ${name}`);
  return `"${name}"`;
};

/**
 * Builds the fixture under `dir`; returns its reference and the function that removes it.
 * `migratedDataDir`: on PGlite, a migrated data directory to start from (spares an initdb).
 */
export async function buildDemoFixture(
  dir: string,
  migratedDataDir?: string,
): Promise<{ ref: DemoFixtureRef; timings: Demo['timings']; remove(): Promise<void> }> {
  mkdirSync(dir, { recursive: true });
  let template: string | null = null;
  let demo: Demo;
  if (testDatabaseUrl) {
    const base =
      new URL(testDatabaseUrl).pathname
        .slice(1)
        .toLowerCase()
        .replace(/[^a-z0-9_]/g, '_') || 'db';
    template = `${base.slice(0, 30)}_demo_${randomBytes(4).toString('hex')}`;
    await admin((c) => c.query(`CREATE DATABASE ${ident(template!)}`));
    demo = await startDemo({ databaseUrl: withDatabase(testDatabaseUrl, template), log: quiet });
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
    const db = await PGlite.create({ dataDir: join(dir, 'pgdata') });
    const tar = await db.dumpDataDir('none');
    await db.close();
    writeFileSync(join(dir, 'pgdata.tar'), Buffer.from(await tar.arrayBuffer()));
    rmSync(join(dir, 'pgdata'), { recursive: true, force: true });
  }
  writeFileSync(join(dir, 'demo.json'), JSON.stringify(file));
  return {
    ref: { dir, template },
    timings: demo.timings,
    async remove() {
      rmSync(dir, { recursive: true, force: true });
      if (!template) return;
      await admin(async (c) => {
        // Copies a crashed file could not drop, then the template itself.
        const rows = await c.query<{ datname: string }>(
          `SELECT datname FROM pg_database WHERE datname LIKE $1`,
          [`${template}\\_%`],
        );
        for (const r of rows.rows) await c.query(`DROP DATABASE IF EXISTS ${ident(r.datname)} WITH (FORCE)`);
        await c.query(`DROP DATABASE IF EXISTS ${ident(template!)} WITH (FORCE)`);
      });
    },
  };
}
