/**
 * The fixture of test/rater-evidence.test.ts and its suites (test/rater-evidence/*.ts): the file's
 * database and config, and the indexed events it writes (mints, ratings on consecutive
 * transactions, their ingest, a verified payment proof on a rating). One counter numbers the
 * transactions of the whole file, so its suites never write the same hash twice.
 */
import type { Config } from '../../src/config.js';
import type { Database } from '../../src/db/database.js';
import type { IndexEvent } from '../../src/index-events.js';
import { ingestBatch } from '../../src/indexer/ingest.js';
import type { TestDatabase } from './db.js';

export const USDC_BASE = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';
export const H = 3600_000;
export const T0 = Date.UTC(2026, 5, 1);
export const addr = (prefix: string, i: number) =>
  `0x${prefix}${String(i).padStart(40 - prefix.length, '0')}`;

/** What the file's beforeAll opens. */
export interface RaterFixture {
  t: TestDatabase;
  db: Database;
  config: Config;
}

/** The event writers over the fixture (read when called: the file's beforeAll opens it). */
export function raterEventTools(fixture: () => RaterFixture) {
  let txCounter = 0;

  function mint(network: string, agentId: string, owner: string, block: number): IndexEvent[] {
    const at = { network, logIndex: 0, blockNumber: block, blockTime: new Date(T0) };
    return [
      {
        ...at,
        kind: 'transfer',
        txHash: `0x${(++txCounter).toString(16).padStart(64, '0')}`,
        agentId,
        from: addr('0', 0),
        to: owner,
      },
    ];
  }

  function rate(
    network: string,
    agentId: string,
    rater: string,
    value: number,
    at: number,
    block: number,
    index = 1,
  ): IndexEvent {
    return {
      network,
      kind: 'feedback',
      txHash: `0x${(++txCounter).toString(16).padStart(64, '0')}`,
      logIndex: 0,
      blockNumber: block,
      blockTime: new Date(at),
      agentId,
      rater,
      feedbackIndex: String(index),
      valueRaw: String(value),
      valueDecimals: 0,
      value: String(value),
      tag1: '',
      tag2: '',
      endpoint: '',
      feedbackUri: '',
      feedbackHash: null,
    };
  }

  async function ingest(network: string, events: IndexEvent[], block: number): Promise<void> {
    await ingestBatch(fixture().db, events, {
      network,
      lastScannedBlock: block,
      headAtLastSync: block + 12,
      caughtUp: true,
    });
  }

  /** A verified payment proof on a rating (what the document fetcher stores after checking the receipt). */
  async function verifiedPayment(tx: string, token: string, amount: string, chainId = 8453): Promise<void> {
    await fixture().db.query(
      `INSERT INTO feedback_documents (network, tx_hash, log_index, agent_id, rater, block_number, uri, state,
                                       payment_state, payment_proof)
       SELECT network, tx_hash, log_index, agent_id, rater, block_number, 'https://docs.example/f', 'succeeded',
              'verified', $2::jsonb
         FROM ratings WHERE tx_hash = $1`,
      [tx, JSON.stringify({ fromAddress: '0x', toAddress: '0x', chainId, txHash: tx, token, amount })],
    );
  }

  return { mint, rate, ingest, verifiedPayment };
}

export type RaterEventTools = ReturnType<typeof raterEventTools>;
