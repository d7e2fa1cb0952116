/**
 * Fixtures of the registration-file queue tests (test/registrations-queue.test.ts,
 * test/registrations-probes.test.ts): a migrated database with base's identity registry, a fake
 * fetch answering from a map, registration files, Registered/URIUpdated events on consecutive
 * blocks, their ingest, and the queue row of one agent. The test file keeps the clock (`now`) and
 * the block counter and hands this module getters for them, so its tests move them as before.
 */
import type { ChainConfig } from '../../src/chains.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import type { FetchResult } from '../../src/documents/safe-fetch.js';
import type { IndexEvent } from '../../src/index-events.js';
import { ingestBatch } from '../../src/indexer/ingest.js';
import { registrationOptions, type RegistrationContext } from '../../src/registrations/fetcher.js';
import { REGISTRATION_TYPE } from '../../src/registrations/parse.js';
import { registerChains } from '../../src/store/chain-state.js';
import { openTestDatabase, type TestDatabase } from './db.js';

/* eslint-disable @typescript-eslint/no-explicit-any */

const REGISTRY = '0x8004a169fb4a3325136eb29fa0ceb6d2e539a432';

/** A fresh test database with the configured chains registered (base given an identity registry). */
export async function openRegistrationDatabase(): Promise<{ t: TestDatabase; chains: ChainConfig[] }> {
  const t = await openTestDatabase();
  const chains = loadConfig({}).chains.map((c) =>
    c.network === 'base' ? { ...c, chainId: 8453, identityRegistry: REGISTRY } : c,
  );
  await registerChains(t.db, chains);
  return { t, chains };
}

/** What the fixtures read from the test file: its database, chains, clock and block counter. */
export interface QueueWorld {
  db(): Database;
  chains(): ChainConfig[];
  now(): Date;
  /** The block counter after the last event (the head the ingest reports). */
  block(): number;
  /** Returns the counter and advances it by one (`block++`). */
  takeBlock(): number;
}

export function registrationQueueFixtures(world: QueueWorld) {
  const later = (seconds: number) => new Date(world.now().getTime() + seconds * 1000);
  /** A moment just after the database's now() (jobs the ingest queues are due from then). */
  const soon = () => new Date(Date.now() + 5000);

  /** uri → what the fake fetch answers (a function: it may change between calls). */
  const answers = new Map<string, () => FetchResult>();
  const fetched: string[] = [];
  const fakeFetch = async (uri: string): Promise<FetchResult> => {
    fetched.push(uri);
    const a = answers.get(uri);
    return a ? a() : { ok: false, code: 'http_error', retryable: false, detail: 'HTTP 404' };
  };
  const file = (over: Record<string, unknown>): FetchResult => ({
    ok: true,
    bytes: new TextEncoder().encode(
      JSON.stringify({ type: REGISTRATION_TYPE, name: 'agent', registrations: [], ...over }),
    ),
    contentType: 'application/json',
    finalUrl: 'x',
  });

  function ctx(over: Partial<RegistrationContext> = {}): RegistrationContext {
    const options = registrationOptions(loadConfig({}));
    options.maxAttempts = 3;
    options.retryBaseSeconds = 60;
    options.recheckSeconds = 3600;
    return { db: world.db(), options, chains: world.chains(), clock: world.now, fetch: fakeFetch, ...over };
  }

  const at = () => {
    const b = world.takeBlock();
    return {
      network: 'base',
      txHash: `0x${b.toString(16)}`,
      logIndex: 0,
      blockNumber: b + 1,
      blockTime: null,
    };
  };
  const registered = (agentId: string, uri: string): IndexEvent => ({
    ...at(),
    kind: 'registered',
    agentId,
    agentUri: uri,
    minter: '0x00000000000000000000000000000000000000aa',
  });
  const uriUpdated = (agentId: string, uri: string, blockNumber?: number): IndexEvent => ({
    ...at(),
    ...(blockNumber === undefined ? {} : { blockNumber }),
    kind: 'uri',
    agentId,
    uri,
    updatedBy: '0x00000000000000000000000000000000000000aa',
  });
  const ingest = (events: IndexEvent[]) =>
    ingestBatch(world.db(), events, {
      network: 'base',
      lastScannedBlock: null,
      headAtLastSync: world.block(),
      caughtUp: false,
    });

  async function row(agentId: string) {
    const [r] = await world.db().query<any>(
      `SELECT uri, state, attempts, reason, file_state, name, first_keccak256, changed_at, next_try_at
         FROM agent_registrations WHERE network = 'base' AND agent_id = $1`,
      [agentId],
    );
    return r ?? null;
  }

  return { later, soon, answers, file, ctx, registered, uriUpdated, ingest, row };
}
