/**
 * The real write path as the scale benchmark drives it: feedback events above the loaded ones,
 * the chain's checkpoint, and ingestBatch in batches of 5,000 (the refresh and ingest sections).
 */
import type { Database } from '../../src/db/database.js';
import type { IndexEvent } from '../../src/index-events.js';
import { ingestBatch } from '../../src/indexer/ingest.js';
import { AGENTS, EVENTS, RATERS, addr } from './options.js';

/** `count` feedback events on base above `fromBlock`, feedback indexes above every loaded one. */
export function feedbackEvents(count: number, fromBlock: number, seed: number): IndexEvent[] {
  const out: IndexEvent[] = [];
  for (let k = 0; k < count; k++) {
    const i = EVENTS + seed + k + 1;
    const block = fromBlock + Math.floor(k / 5) + 1;
    const raw = 4000 + (i % 6001);
    out.push({
      network: 'base',
      txHash: `0x${i.toString(16).padStart(64, 'a')}`,
      logIndex: k % 5,
      blockNumber: block,
      blockTime: new Date(Date.UTC(2026, 0, 1) + block * 2000),
      kind: 'feedback',
      agentId: String(i % 10 < 6 ? 0 : i % AGENTS),
      rater: addr(i % RATERS),
      feedbackIndex: String(i),
      valueRaw: String(raw),
      valueDecimals: 2,
      value: (raw / 100).toFixed(2),
      tag1: ['trust', 'liveness', 'contractRisk', 'activity', ''][i % 5]!,
      tag2: '',
      endpoint: 'https://agent.example/a2a',
      feedbackUri: `https://feedback.example/${i}`,
      feedbackHash: `0x${i.toString(16).padStart(64, '0')}`,
    });
  }
  return out;
}

export async function checkpoint(db: Database): Promise<number> {
  const [c] = await db.query<{ b: number }>(
    `SELECT last_scanned_block AS b FROM chains WHERE network = 'base'`,
  );
  return Number(c!.b);
}

export async function ingest(db: Database, events: IndexEvent[]): Promise<void> {
  for (let k = 0; k < events.length; k += 5_000) {
    const batch = events.slice(k, k + 5_000);
    const to = batch[batch.length - 1]!.blockNumber;
    await ingestBatch(db, batch, {
      network: 'base',
      lastScannedBlock: to,
      headAtLastSync: to,
      caughtUp: true,
    });
  }
}
