/**
 * The demo index, built ONCE per `vitest run` and copied into every test file that reads it.
 *
 * - `buildDemoFixture` (helpers/demo-fixture.ts, run by test/global-setup.ts) plays the demo scenario with the real
 *   `startDemo()` (three local chains, the real indexer pass) into a database of its own, then
 *   keeps that database as a template: on PGlite the rows of every table (binary COPY files) in the
 *   run's TMPDIR, on PostgreSQL (TEST_DATABASE_URL) a template database with a unique name. What the scenario
 *   produced (facts, the pass report, the scenario chains' config) goes into a JSON file beside it.
 *   Global setup starts that build without waiting for it, so the files that do not read the
 *   demo run meanwhile.
 * - {@link openDemoCopy} (a test file's beforeAll) waits for the build, then gives the file its own
 *   copy: a migrated in-memory PGlite of the worker's pool with those rows loaded (no new
 *   instance to start: about 0.6 CPU-s each), or `CREATE DATABASE … TEMPLATE …` dropped again on
 *   close. The chains
 *   are gone by then (their config still names them); a file that needs a live chain asks for
 *   `liveBase` and gets one small local node with the base chain id and the same registry
 *   addresses, nothing played on it.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { ChainConfig } from '../../src/chains.js';
import { loadConfig, type Config } from '../../src/config.js';
import { openDatabase } from '../../src/db/database.js';
import { startLocalNode } from '../../src/demo/local-node.js';
import { deployRegistries } from '../../src/demo/registries.js';
import type { Demo } from '../../src/demo/run-demo.js';
import { SCENARIO_CHAIN_IDS } from '../../src/demo/scenario.js';
import { admin, testDatabaseUrl } from './db.js';
import { openMigratedPglite, readRows } from './db-template.js';
import { awaitDemoFixture, ident, withDatabase, type DemoFixtureFile } from './demo-fixture.js';

/** The scenario chains of the fixture laid over `base`, every other chain disabled (as demoConfig does). */
function fixtureConfig(base: Config, chains: ChainConfig[]): Config {
  return {
    ...base,
    chains: base.chains.map((c) => chains.find((s) => s.network === c.network) ?? { ...c, enabled: false }),
  };
}

export interface DemoCopyOptions {
  /** Base configuration (default: the built-in defaults); the scenario chains are laid over it. */
  config?: Config;
  /** Start one local node with the base chain id and the demo registries (for the x402 market). */
  liveBase?: boolean;
}

/**
 * What the run's demo build played, without a copy of its index: the facts, the timings, the
 * scenario chains' config and what those chains held (helpers/demo-fixture.ts readScenarioChains).
 */
export async function playedDemo(): Promise<DemoFixtureFile> {
  const ref = inject('demoFixture');
  if (!ref) {
    throw new Error(
      'the demo index was not built: test/global-setup.ts builds it when a file calls playedDemo(',
    );
  }
  return awaitDemoFixture(ref);
}

/** This file's own copy of the demo index, shaped like `startDemo()`'s result. */
export async function openDemoCopy(opts: DemoCopyOptions = {}): Promise<Demo> {
  const ref = inject('demoFixture');
  if (!ref) {
    throw new Error(
      'the demo index was not built: test/global-setup.ts builds it when a file calls openDemoCopy(',
    );
  }
  const fixture = await awaitDemoFixture(ref);
  const config = fixtureConfig(opts.config ?? loadConfig({}), fixture.chains);
  const cleanups: (() => Promise<unknown>)[] = [];
  const closeAll = async () => {
    for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
  };
  try {
    let db;
    if (ref.template) {
      const copy = `${ref.template}_${randomBytes(3).toString('hex')}`;
      await admin(async (c) => {
        // Two files copying the template at once may briefly see it "being accessed": retry.
        for (let i = 0; ; i++) {
          try {
            await c.query(`CREATE DATABASE ${ident(copy)} TEMPLATE ${ident(ref.template!)}`);
            return;
          } catch (e) {
            if ((e as { code?: string }).code !== '55006' || i >= 20) throw e;
            await new Promise((r) => setTimeout(r, 250 + Math.random() * 500));
          }
        }
      });
      cleanups.push(() => admin((c) => c.query(`DROP DATABASE IF EXISTS ${ident(copy)} WITH (FORCE)`)));
      db = await openDatabase({ databaseUrl: withDatabase(testDatabaseUrl!, copy), dataDir: 'memory://' });
    } else {
      db = await openMigratedPglite(readRows(join(ref.dir, 'rows')));
    }
    const opened = db;
    cleanups.push(() => opened.close());
    const demo: Demo = {
      config,
      db,
      facts: fixture.facts,
      documents: null,
      nodes: [],
      pass: fixture.pass,
      timings: fixture.timings,
      close: closeAll,
    };
    if (opts.liveBase) {
      const node = await startLocalNode({ chainId: SCENARIO_CHAIN_IDS.base });
      cleanups.push(() => node.close());
      const registries = await deployRegistries(node.rpcUrl, node.privateKeys[0]!);
      const played = fixture.facts.chains.base;
      const same = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
      if (
        !same(registries.identityRegistry, played.identityRegistry) ||
        !same(registries.reputationRegistry, played.reputationRegistry)
      ) {
        throw new Error('the live base node deployed the registries at other addresses than the demo');
      }
      demo.nodes = [{ network: 'base', node, registries }];
      demo.config = {
        ...config,
        chains: config.chains.map((c) => (c.network === 'base' ? { ...c, rpcUrl: node.rpcUrl } : c)),
      };
    }
    return demo;
  } catch (e) {
    await closeAll();
    throw e;
  }
}
