/**
 * Builds the demo index once per `vitest run` (test/global-setup.ts); test files copy it through
 * helpers/demo.ts, which explains the scheme. Shared bits (names) live here; the admin connection
 * is helpers/db.ts's admin().
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { ChainConfig } from '../../src/chains.js';
import { newMemoryPglite, pgliteDatabase } from '../../src/db/database.js';
import type { Demo } from '../../src/demo/run-demo.js';
import type { ScenarioFacts, ScenarioNode } from '../../src/demo/scenario.js';
import type { PassReport } from '../../src/indexer/pass.js';
import { admin, testDatabaseUrl } from './db.js';
import { exportRowsFrom } from './db-template.js';

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
  /** What the scenario chains held once played, read before their nodes closed. */
  onChain: ScenarioOnChain;
}

/**
 * One scenario chain as its node answered over RPC after the scenario: every NewFeedback log as
 * [agentId, clientAddress, feedbackIndex, value, tag1, transactionHash] in log order, the
 * FeedbackRevoked count, the owner field of every Registered log, the timestamp of the block the
 * facts name as the chain's last, and ownerOf of every agent the facts list on it (null: reverted).
 */
export interface ScenarioChainRecord {
  feedback: [number, string, number, string, string, string][];
  revocations: number;
  registeredOwners: string[];
  lastBlockTimestamp: number;
  ownerOf: Record<string, string | null>;
}
export type ScenarioOnChain = Record<string, ScenarioChainRecord>;

/**
 * Reads the played scenario chains through viem over HTTP, the way the indexer sees them
 * (test/contracts.test.ts holds the facts to this record: the scenario is played once per run).
 */
export async function readScenarioChains(
  nodes: ScenarioNode[],
  facts: ScenarioFacts,
): Promise<ScenarioOnChain> {
  const { createPublicClient, http } = await import('viem');
  const { identityRegistryAbi, reputationRegistryAbi } = await import('../../src/demo/registries.js');
  const out: ScenarioOnChain = {};
  for (const { network, node, registries } of nodes) {
    const client = createPublicClient({ transport: http(node.rpcUrl) });
    const events = (
      address: `0x${string}`,
      abi: typeof reputationRegistryAbi | typeof identityRegistryAbi,
      eventName: string,
    ) => client.getContractEvents({ address, abi, eventName, fromBlock: 0n } as never);
    const [feedback, revoked, registered] = await Promise.all([
      events(registries.reputationRegistry, reputationRegistryAbi, 'NewFeedback'),
      events(registries.reputationRegistry, reputationRegistryAbi, 'FeedbackRevoked'),
      events(registries.identityRegistry, identityRegistryAbi, 'Registered'),
    ]);
    const args = (l: unknown) => (l as { args: Record<string, unknown> }).args;
    const ownerOf: Record<string, string | null> = {};
    for (const a of facts.agents.filter((x) => x.network === network)) {
      ownerOf[a.agentId] = await client
        .readContract({
          address: registries.identityRegistry,
          abi: identityRegistryAbi,
          functionName: 'ownerOf',
          args: [BigInt(a.agentId)],
        })
        .catch(() => null);
    }
    const last = await client.getBlock({ blockNumber: BigInt(facts.chains[network].lastBlock) });
    out[network] = {
      feedback: feedback.map((l) => {
        const a = args(l);
        return [
          Number(a.agentId),
          String(a.clientAddress),
          Number(a.feedbackIndex),
          String(a.value),
          String(a.tag1),
          String((l as { transactionHash: string }).transactionHash),
        ];
      }),
      revocations: revoked.length,
      registeredOwners: registered.map((l) => String(args(l).owner)),
      lastBlockTimestamp: Number(last.timestamp),
      ownerOf,
    };
  }
  return out;
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
 * `migratedTar`: on PGlite, the run's migrated database as a tarball to start from (spares an
 * initdb). The demo plays into an in-memory instance loaded from it, and the rows are exported from
 * that live instance (no data directory to copy, write and open again).
 */
export async function buildDemoFixture(ref: DemoFixtureRef, migratedTar?: string): Promise<Demo['timings']> {
  const { dir, template } = ref;
  mkdirSync(dir, { recursive: true });
  let memory: PGlite | null = null;
  try {
    // Loaded here, not at the top: global setup returns (and the workers start) while the demo's
    // modules load beside them.
    const { startDemo } = await import('../../src/demo/run-demo.js');
    let demo: Demo;
    if (template) {
      await admin((c) => c.query(`CREATE DATABASE ${ident(template)}`));
      demo = await startDemo({ databaseUrl: withDatabase(testDatabaseUrl!, template), log: quiet });
    } else {
      const tar = migratedTar && existsSync(migratedTar) ? new Blob([readFileSync(migratedTar)]) : undefined;
      memory = await newMemoryPglite(tar);
      // The demo's close() leaves the instance open: its rows are exported below.
      demo = await startDemo({ db: pgliteDatabase(memory, async () => undefined), log: quiet });
    }
    let file: DemoFixtureFile;
    try {
      file = {
        facts: demo.facts,
        pass: demo.pass,
        timings: demo.timings,
        chains: demo.config.chains.filter((c) => c.enabled),
        onChain: await readScenarioChains(demo.nodes, demo.facts),
      };
    } finally {
      await demo.close();
    }
    if (memory) await exportRowsFrom(memory, join(dir, 'rows'));
    writeFileSync(join(dir, `${READY}.part`), JSON.stringify(file));
    renameSync(join(dir, `${READY}.part`), join(dir, READY));
    return demo.timings;
  } catch (e) {
    writeFileSync(join(dir, FAILED), (e as Error)?.stack ?? String(e));
    throw e;
  } finally {
    await memory?.close().catch(() => undefined);
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
