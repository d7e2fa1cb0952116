/**
 * `repindex index --once` as a user runs it: a child process (node bin/repindex.js) with
 * CHAINS_FILE pointing the indexer at a local chain. Exit codes, and a real crash: the process is
 * killed with SIGKILL in the middle of a pass, restarted, and the index ends up row-for-row equal
 * to an uninterrupted run.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { giveFeedback, registerAgent, revokeFeedback, transferAgent } from '../src/demo/registries.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { runIndexPass } from '../src/indexer/pass.js';
import { openTestDatabase, testDbKind, type TestDatabase } from './helpers/db.js';
import { migratedDataDir } from './helpers/db-template.js';
import {
  configFor,
  deadRpcUrl,
  dumpNetwork,
  quietLogger,
  startLocalChain,
  target,
  type LocalChain,
} from './helpers/indexer-fixtures.js';
import { repindexArgs } from './helpers/repindex-bin.js';
import { startHostileRpc } from './helpers/rpc-proxy.js';

const ROOT = join(import.meta.dirname, '..');
const OTHER_EVM = [
  'avalanche',
  'arbitrum',
  'optimism',
  'polygon',
  'celo',
  'ethereum',
  'bsc',
  'monad',
  'robinhood',
];

let chain: LocalChain;
let ref: TestDatabase;
let reference: Record<string, unknown[]>;
const cleanups: (() => Promise<void> | void)[] = [];

beforeAll(async () => {
  [chain, ref] = await Promise.all([startLocalChain('base', 8453), openTestDatabase()]);
  const k = chain.node.privateKeys;
  const a = chain.node.accounts;
  for (let i = 0; i < 3; i++) await registerAgent(chain.reg, k[1]!, `https://cli${i}.example`);
  await transferAgent(chain.reg, k[1]!, 0, a[2]!);
  for (let i = 0; i < 15; i++)
    await giveFeedback(chain.reg, k[5 + (i % 3)]!, { agentId: i % 3, value: 50 + i });
  await revokeFeedback(chain.reg, k[5]!, 0, 1);
  const r = await runIndexPass({
    db: ref.db,
    config: configFor([target(chain)]),
    log: quietLogger(),
    afterPass: null,
  });
  expect(r.status === 'ok' && r.failed).toEqual([]);
  reference = await dumpNetwork(ref.db, 'base');
  expect(reference.ratings).toHaveLength(15);
});

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  await ref?.close();
  await chain?.close();
});

/** A fresh database for a child process: a PGlite directory, or a private PostgreSQL schema. */
async function childDatabase(): Promise<{
  env: Record<string, string>;
  open(): Promise<Database>;
  dir?: string;
}> {
  if (testDbKind === 'postgres') {
    const t = await openTestDatabase();
    cleanups.push(() => t.close());
    return { env: { DATABASE_URL: t.url! }, open: async () => t.db };
  }
  // A copy of the run's migrated data directory (initdb costs seconds).
  const dir = migratedDataDir(mkdtempSync(join(tmpdir(), 'repindex-idx-')));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return {
    dir,
    env: { DATA_DIR: dir },
    open: () => openDatabase({ databaseUrl: null, dataDir: dir }),
  };
}

function chainsFile(overrides: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), 'repindex-chains-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const body: Record<string, unknown> = {};
  for (const n of OTHER_EVM) body[n] = { enabled: false };
  Object.assign(body, overrides);
  const file = join(dir, 'chains.json');
  writeFileSync(file, JSON.stringify(body));
  return file;
}

function localBase(rpcUrl = chain.node.rpcUrl): Record<string, unknown> {
  return {
    rpcUrl,
    chainId: 8453,
    identityRegistry: chain.reg.identityRegistry,
    reputationRegistry: chain.reg.reputationRegistry,
    startBlock: Number(chain.reg.deployBlock),
    confirmations: 0,
  };
}

function startCli(
  args: string[],
  env: Record<string, string>,
): { child: ChildProcess; done: Promise<{ code: number | null; out: string }> } {
  const child = spawn(process.execPath, repindexArgs(args), {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const done = new Promise<{ code: number | null; out: string }>((resolve) =>
    child.on('exit', (code) => resolve({ code, out })),
  );
  return { child, done };
}

describe('repindex index --once', () => {
  it('exits 0 when every enabled chain succeeded', async () => {
    const db = await childDatabase();
    // Solana has a scanner now and would call its public RPC: no test reaches the internet.
    const { done } = startCli(['index', '--once'], {
      ...db.env,
      CHAINS_FILE: chainsFile({ base: localBase(), solana: { enabled: false } }),
    });
    const { code, out } = await done;
    expect(code, out).toBe(0);
    expect(out).toMatch(/\[index\] base ok blocks/);
    const d = await db.open();
    try {
      expect(await dumpNetwork(d, 'base')).toEqual(reference);
      // the after-pass hook refreshed the free aggregates
      const [agg] = await d.query<{ n: number }>('SELECT count(*)::int AS n FROM agg_wallet_chain');
      expect(agg!.n).toBeGreaterThan(0);
    } finally {
      if (db.dir) await d.close();
    }
  });

  it('exits 3 on a census mismatch the repairs left standing; the next run through an honest node heals it (exit 0)', async () => {
    const db = await childDatabase();
    // Every eth_getLogs answer emptied: the scan writes nothing, the census finds every agent and
    // pair missing, and no repair can read a log.
    const empty = await startHostileRpc(chain.node.rpcUrl, { kind: 'empty', above: 0 });
    cleanups.push(() => empty.close());
    const env = { ...db.env, RPC_RETRY_BASE_MS: '10' };
    const first = await startCli(['index', '--once'], {
      ...env,
      CHAINS_FILE: chainsFile({ base: localBase(empty.url), solana: { enabled: false } }),
    }).done;
    expect(first.code, first.out).toBe(3);
    expect(first.out).toMatch(/census MISMATCH/);
    expect(first.out).toMatch(/exit code 3/);
    const second = await startCli(['index', '--once'], {
      ...env,
      CHAINS_FILE: chainsFile({ base: localBase(), solana: { enabled: false } }),
    }).done;
    expect(second.code, second.out).toBe(0);
    expect(second.out).toMatch(/census ok at block \d+ after 1 repairs/);
    const d = await db.open();
    try {
      expect(await dumpNetwork(d, 'base')).toEqual(reference);
      const [row] = await d.query<{ census_state: string }>(
        'SELECT census_state FROM chains WHERE network = $1',
        ['base'],
      );
      expect(row!.census_state).toBe('ok');
    } finally {
      if (db.dir) await d.close();
    }
  });

  it('exits 1 when an enabled chain failed, and still indexes the others', async () => {
    const db = await childDatabase();
    const file = chainsFile({
      base: localBase(),
      optimism: { ...localBase(await deadRpcUrl()), chainId: 10, enabled: true },
    });
    // A short first backoff (the operator's RPC_RETRY_BASE_MS): the dead chain's five attempts
    // take tens of milliseconds instead of seconds.
    const { code, out } = await startCli(['index', '--once'], {
      ...db.env,
      CHAINS_FILE: file,
      RPC_RETRY_BASE_MS: '10',
    }).done;
    expect(code, out).toBe(1);
    expect(out).toMatch(/\[index\] optimism failed: eth_chainId failed after 5 attempts/);
    const d = await db.open();
    try {
      expect(await dumpNetwork(d, 'base')).toEqual(reference);
      const [row] = await d.query<{ last_error: string }>(
        'SELECT last_error FROM chains WHERE network = $1',
        ['optimism'],
      );
      expect(row!.last_error).toMatch(/fetch failed|ECONNREFUSED|HTTP request failed/i);
    } finally {
      if (db.dir) await d.close();
    }
  });

  it('survives SIGKILL mid-pass: the restarted pass ends with exactly the rows of an uninterrupted run', async () => {
    // A slow node that serves one block per getLogs: the pass writes many small batches.
    const proxy = await startHostileRpc(
      chain.node.rpcUrl,
      { kind: 'range-error', above: 1, message: 'query returned more than 10000 results' },
      { delayMs: 25 },
    );
    cleanups.push(() => proxy.close());
    const db = await childDatabase();
    const env = {
      ...db.env,
      CHAINS_FILE: chainsFile({ base: localBase(proxy.url), solana: { enabled: false } }),
    };
    const first = startCli(['index', '--once'], env);
    await new Promise<void>((resolve, reject) => {
      const timer = setInterval(() => {
        if (proxy.servedRanges.length >= 8) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
      void first.done.then(({ out }) => {
        clearInterval(timer);
        reject(new Error(`the pass ended before it could be killed: ${out}`));
      });
    });
    first.child.kill('SIGKILL');
    const killed = await first.done;
    expect(killed.code).toBeNull();
    // PGlite's data-directory lock file outlives a killed holder until it goes stale (30 s);
    // the holder is known dead here, so remove it as an operator would.
    if (db.dir) rmSync(join(db.dir, '.repindex.lock'), { recursive: true, force: true });

    const mid = await db.open();
    let partial: Record<string, unknown[]>;
    let checkpoint: number | null;
    try {
      partial = await dumpNetwork(mid, 'base');
      const [row] = await mid.query<{ last_scanned_block: number | null }>(
        'SELECT last_scanned_block FROM chains WHERE network = $1',
        ['base'],
      );
      checkpoint = row!.last_scanned_block;
    } finally {
      if (db.dir) await mid.close();
    }
    expect(partial.ratings!.length).toBeLessThan(15);
    expect(checkpoint).not.toBeNull();

    // The restart reads the same chain directly (the slow proxy only had to make the first pass long).
    const second = await startCli(['index', '--once'], {
      ...db.env,
      CHAINS_FILE: chainsFile({ base: localBase(), solana: { enabled: false } }),
    }).done;
    expect(second.code, second.out).toBe(0);
    expect(second.out).toContain(`base ok blocks ${checkpoint! + 1}..`);
    const d = await db.open();
    try {
      expect(await dumpNetwork(d, 'base')).toEqual(reference);
    } finally {
      if (db.dir) await d.close();
    }
  });
});
