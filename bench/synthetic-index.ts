/**
 * Shared by the benchmarks: a deterministic synthetic index (agents on base, ratings with a
 * campaign agent holding 40 % of them, 1 % revocations), and the databases to run on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import type { IndexEvent } from '../src/index-events.js';
import { openPrivateSchema } from './private-schema.js';

export const EVENTS = Number(process.env.BENCH_EVENTS ?? 200_000);
export const BATCH = Number(process.env.BENCH_BATCH ?? 5_000);
const AGENTS = Number(process.env.BENCH_AGENTS ?? 500);
const RATERS = 4_999; // coprime with the revocation period

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
const addr = (i: number) => `0x${hex(i + 1, 40)}`;

/** Deterministic synthetic events: ~5 logs per block, one campaign agent gets 40 % of the ratings. */
export function* batches(): Generator<{ to: number; events: IndexEvent[] }> {
  const counters = new Map<string, number>();
  let events: IndexEvent[] = [];
  let block = 1_000_000;
  let logIndex = 0;
  const t0 = Date.UTC(2026, 0, 1);
  for (let i = 0; i < EVENTS; i++) {
    if (i % 5 === 0) {
      block++;
      logIndex = 0;
    }
    const pos = {
      network: 'base',
      txHash: `0x${hex(i, 64)}`,
      logIndex: logIndex++,
      blockNumber: block,
      blockTime: new Date(t0 + block * 2000),
    };
    if (i < AGENTS * 2) {
      const agentId = String(i >> 1);
      events.push(
        i % 2 === 0
          ? { ...pos, kind: 'transfer', agentId, from: addr(-1 + 0), to: addr(10_000 + (i >> 1)) }
          : {
              ...pos,
              kind: 'registered',
              agentId,
              agentUri: `https://agents.example/${agentId}.json`,
              minter: addr(9_999),
            },
      );
    } else {
      const agentId = String(i % 10 < 4 ? 0 : i % AGENTS);
      const rater = addr(i % RATERS);
      const key = `${agentId}|${rater}`;
      const last = counters.get(key) ?? 0;
      if (i % 100 === 0 && last > 0) {
        events.push({ ...pos, kind: 'revocation', agentId, rater, feedbackIndex: String(last) });
      } else {
        const idx = last + 1;
        counters.set(key, idx);
        const raw = BigInt(4000 + (i % 6001));
        events.push({
          ...pos,
          kind: 'feedback',
          agentId,
          rater,
          feedbackIndex: String(idx),
          valueRaw: raw.toString(),
          valueDecimals: 2,
          value: (Number(raw) / 100).toString(),
          tag1: ['trust', 'liveness', 'contractRisk', 'activity', ''][i % 5]!,
          tag2: '',
          endpoint: 'https://agent.example/a2a',
          feedbackUri: `https://feedback.example/${i}`,
          feedbackHash: `0x${hex(i, 64)}`,
        });
      }
    }
    if (events.length >= BATCH) {
      yield { to: block, events };
      events = [];
    }
  }
  if (events.length) yield { to: block, events };
}

/** Runs `fn` on an in-memory PGlite, then on PostgreSQL when DATABASE_URL is set (private schema, dropped after). */
export async function onEachDatabase(fn: (label: string, db: Database) => Promise<void>): Promise<void> {
  // BENCH_PGLITE_DIR: PGlite in a new data folder on disk there (removed after), as the indexer
  // runs it: its file-system calls (the WAL, page writes, relation-size probes) are in the figures.
  const onDisk = process.env.BENCH_PGLITE_DIR
    ? mkdtempSync(join(resolve(process.env.BENCH_PGLITE_DIR), 'pglite-'))
    : null;
  const pglite = await openDatabase({ databaseUrl: null, dataDir: onDisk ?? 'memory://' });
  try {
    await migrate(pglite);
    await fn(onDisk ? 'PGlite (on disk)' : 'PGlite (in memory)', pglite);
  } finally {
    await pglite.close();
    if (onDisk) rmSync(onDisk, { recursive: true, force: true });
  }
  const url = process.env.DATABASE_URL;
  if (!url) return;
  const { db, close } = await openPrivateSchema(url);
  try {
    await fn('PostgreSQL', db);
  } finally {
    await close();
  }
}
