/**
 * The index side of the census benchmark: a private database (in-memory PGlite, or a schema of
 * DATABASE_URL dropped on close) and every agent and feedback of the chain (the planted ones
 * excepted) written by the real ingest.
 */
import { openDatabase, type Database } from '../../src/db/database.js';
import { migrate } from '../../src/db/migrate.js';
import type { IndexEvent } from '../../src/index-events.js';
import { ingestBatch } from '../../src/indexer/ingest.js';
import { AGENTS, PER_AGENT, clientOf, ownerOf, revokedOf, uriOf, valueOf } from './options.js';
import { openPrivateSchema } from '../private-schema.js';

/** The index side: every agent and every feedback of the chain (planted ones excepted), by the real ingest. */
export async function writeIndex(db: Database, block: number, head: number): Promise<number> {
  let tx = 0;
  const at = {
    network: 'base',
    logIndex: 0,
    blockNumber: block,
    blockTime: new Date('2026-06-01T00:00:00Z'),
  };
  const next = () => ({ ...at, txHash: `0x${(++tx).toString(16).padStart(64, '0')}` });
  let events: IndexEvent[] = [];
  let written = 0;
  const flush = async (last: boolean) => {
    await ingestBatch(db, events, {
      network: 'base',
      lastScannedBlock: last ? head : null,
      headAtLastSync: head,
      caughtUp: last,
      successAt: last ? new Date() : null,
    });
    written += events.length;
    events = [];
  };
  for (let i = 0; i < AGENTS; i++) {
    const agentId = String(i);
    events.push({
      ...next(),
      kind: 'transfer',
      agentId,
      from: '0x0000000000000000000000000000000000000000',
      to: ownerOf(i),
    });
    events.push({ ...next(), kind: 'registered', agentId, agentUri: uriOf(i), minter: ownerOf(i) });
    for (let j = 0; j < PER_AGENT; j++) {
      const rater = clientOf(i, j);
      const v = String(valueOf(i, j));
      events.push({
        ...next(),
        kind: 'feedback',
        agentId,
        rater,
        feedbackIndex: '1',
        valueRaw: v,
        valueDecimals: 0,
        value: v,
        tag1: '',
        tag2: '',
        endpoint: '',
        feedbackUri: '',
        feedbackHash: null,
      });
      if (revokedOf(i, j)) events.push({ ...next(), kind: 'revocation', agentId, rater, feedbackIndex: '1' });
    }
    if (events.length >= 20_000) await flush(false);
  }
  await flush(true);
  return written;
}

export async function openBenchDatabase(): Promise<{
  db: Database;
  label: string;
  close: () => Promise<void>;
}> {
  const url = process.env.DATABASE_URL;
  if (!url) {
    const db = await openDatabase({ databaseUrl: null, dataDir: 'memory://' });
    await migrate(db);
    return { db, label: 'PGlite (in memory)', close: () => db.close() };
  }
  return { ...(await openPrivateSchema(url)), label: 'PostgreSQL' };
}
