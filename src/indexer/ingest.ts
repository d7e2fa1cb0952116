/**
 * The shared ingest: writes one batch of normalized events (from any scanner) together with the
 * chain's checkpoint in ONE database transaction, so a crash at any moment loses nothing and
 * duplicates nothing: the next pass restarts from the last committed checkpoint and every insert
 * is idempotent (keyed by network + tx hash + log index).
 *
 * Rules (the subject and rating rules are written out in docs/POLICIES.md):
 *  - ownership follows ERC-721 Transfer and only moves forward in chain order
 *    ((block, log index) compared with agents.owner_block / owner_log_index); Registered sets the
 *    minter, never the owner;
 *  - feedback for an agent the index has not seen is kept as is (no placeholder agent): it joins
 *    the agent by (network, agent_id) once Registered/Transfer arrive;
 *  - revocations are stored, then applied to every matching rating (network, agent, rater,
 *    feedback index), also when the rating arrives after its revocation; the rating stays;
 *  - ResponseAppended is kept as logged (responder classed owner / operator / third_party against
 *    the agent's owner and agentWallet as known when the batch is written; the Solana scanner then
 *    re-classes its responses by the ownership and agent wallet history, see
 *    reclassRespondersByHistory), and every rating naming a feedbackURI gets a fetch job in the
 *    feedback-document queue;
 *  - every agentURI set (Registered, URIUpdated) keeps one registration-file fetch job per agent in
 *    line with it (src/store/registrations.ts: a new URI queues the file afresh);
 *  - declared type: the agent's own MetadataSet keys `type`, `agentType`, `category` (in that
 *    order of preference; UTF-8 text, trimmed, non-empty), else the `agentType`/`category` of an
 *    inline `data:` registration file; never fetched over the network.
 * This file decides which events apply (chain order, first or last per key); the statements that
 * write them, all parameterised, live in src/store/ (agents.ts, ratings.ts, chain-state.ts).
 */
import { databaseErrorCode, isTransactionConflict, type Database, type Queryable } from '../db/database.js';
import { logger } from '../log.js';
import { recordIngestConflict } from '../metrics.js';
import { sleep } from './rpc-retry.js';
import {
  insertTransfers,
  MAX_DECLARED_TYPE_CHARS,
  refreshDeclaredTypes,
  upsertAgents,
  upsertMetadata,
  type AgentWrite,
} from '../store/agents.js';
import { writeCheckpoint, type CheckpointUpdate } from '../store/chain-state.js';
import { enqueueDocuments } from '../store/documents.js';
import { syncRegistrationJobs } from '../store/registrations.js';
import { applyRevocations, insertRatings, insertRevocations } from '../store/ratings.js';
import { insertResponses } from '../store/responses.js';
import { sanitizeText } from './scanner.js';
import type {
  FeedbackEvent,
  IndexEvent,
  MetadataSetEvent,
  RegisteredEvent,
  ResponseEvent,
  RevocationEvent,
  TransferEvent,
  UriUpdatedEvent,
} from '../index-events.js';

/** Largest inline data: registration file read for a declared type. */
const MAX_DATA_URI_CHARS = 64 * 1024;

export interface IngestCounts {
  ratings: number;
  revocations: number;
  transfers: number;
  metadata: number;
  /** Ratings whose revoked flag this batch set. */
  revokedApplied: number;
  /** ResponseAppended rows stored. */
  responses: number;
  /** Feedback documents queued for the fetcher. */
  documentsQueued: number;
}

interface IngestHooks {
  /** Called inside the transaction after every write, before COMMIT (tests inject crashes here). */
  beforeCommit?: (tx: Queryable) => Promise<void> | void;
}

/** Position comparison: is a after b in chain order? */
function after(
  a: { blockNumber: number; logIndex: number },
  b: { blockNumber: number; logIndex: number },
): boolean {
  return a.blockNumber > b.blockNumber || (a.blockNumber === b.blockNumber && a.logIndex > b.logIndex);
}

/** Keeps the last (or first) event per key in chain order. */
function pick<T extends { blockNumber: number; logIndex: number }>(
  rows: T[],
  key: (r: T) => string,
  which: 'last' | 'first',
): T[] {
  const m = new Map<string, T>();
  for (const r of rows) {
    const k = key(r);
    const cur = m.get(k);
    if (!cur || (which === 'last' ? after(r, cur) : after(cur, r))) m.set(k, r);
  }
  return [...m.values()];
}

const agentKey = (e: { network: string; agentId: string }) => `${e.network}\u0000${e.agentId}`;

/** Declared type from an inline `data:` JSON registration file (agentType, category). */
export function declaredTypeFromUri(uri: string): string | null {
  if (!uri.startsWith('data:') || uri.length > MAX_DATA_URI_CHARS) return null;
  const comma = uri.indexOf(',');
  if (comma < 0) return null;
  const header = uri.slice(5, comma).toLowerCase();
  if (!header.startsWith('application/json')) return null;
  let body = uri.slice(comma + 1);
  try {
    body = header.split(';').includes('base64')
      ? Buffer.from(body, 'base64').toString('utf8')
      : decodeURIComponent(body);
    const doc: unknown = JSON.parse(body);
    if (typeof doc !== 'object' || doc === null) return null;
    for (const k of ['agentType', 'category']) {
      const v = (doc as Record<string, unknown>)[k];
      if (typeof v === 'string' && v.trim() !== '')
        return sanitizeText(v.trim()).slice(0, MAX_DECLARED_TYPE_CHARS);
    }
  } catch {
    return null;
  }
  return null;
}

/** A batch's events, by kind. */
interface EventsByKind {
  registered: RegisteredEvent[];
  transfers: TransferEvent[];
  uris: UriUpdatedEvent[];
  metadata: MetadataSetEvent[];
  feedback: FeedbackEvent[];
  revocations: RevocationEvent[];
  responses: ResponseEvent[];
}

function byKind(events: readonly IndexEvent[]): EventsByKind {
  const k: EventsByKind = {
    registered: [],
    transfers: [],
    uris: [],
    metadata: [],
    feedback: [],
    revocations: [],
    responses: [],
  };
  for (const e of events) {
    switch (e.kind) {
      case 'registered':
        k.registered.push(e);
        break;
      case 'transfer':
        k.transfers.push(e);
        break;
      case 'uri':
        k.uris.push(e);
        break;
      case 'metadata':
        k.metadata.push(e);
        break;
      case 'feedback':
        k.feedback.push(e);
        break;
      case 'revocation':
        k.revocations.push(e);
        break;
      case 'response':
        k.responses.push(e);
        break;
    }
  }
  return k;
}

/**
 * Identity, in one statement: every agent an identity event names gets a row; its owner follows
 * its last Transfer (forward only), its minter its first Registered, its URI the latest of
 * Registered.agentURI and URIUpdated.newURI (forward only). Returns the URIs set and the
 * transfers stored.
 */
async function writeIdentity(tx: Queryable, k: EventsByKind) {
  const rows = new Map<string, AgentWrite>();
  const row = (e: { network: string; agentId: string }) => {
    const key = agentKey(e);
    let r = rows.get(key);
    if (!r) {
      r = { network: e.network, agentId: e.agentId, owner: null, minter: null, uri: null };
      rows.set(key, r);
    }
    return r;
  };
  for (const e of pick([...k.registered, ...k.transfers, ...k.uris, ...k.metadata], agentKey, 'first'))
    row(e);
  for (const e of pick(k.transfers, agentKey, 'last'))
    row(e).owner = { to: e.to, blockNumber: e.blockNumber, logIndex: e.logIndex };
  for (const e of pick(k.registered, agentKey, 'first'))
    row(e).minter = {
      minter: e.minter,
      blockNumber: e.blockNumber,
      txHash: e.txHash,
      blockTime: e.blockTime,
    };
  const latest = pick(
    [...k.registered.map((e) => ({ ...e, uri: e.agentUri })), ...k.uris.map((e) => ({ ...e }))],
    agentKey,
    'last',
  );
  for (const e of latest)
    row(e).uri = {
      uri: e.uri,
      blockNumber: e.blockNumber,
      logIndex: e.logIndex,
      declaredType: declaredTypeFromUri(e.uri),
    };
  if (rows.size > 0) await upsertAgents(tx, [...rows.values()]);
  const transfers = await insertTransfers(tx, k.transfers);
  return { uris: latest, transfers };
}

/** Metadata: the latest value per key, forward only. Returns the values written and the count. */
async function writeMetadata(
  tx: Queryable,
  k: EventsByKind,
): Promise<{ latest: MetadataSetEvent[]; n: number }> {
  const latest = pick(k.metadata, (e) => `${agentKey(e)}\u0000${e.key}`, 'last');
  return { latest, n: await upsertMetadata(tx, latest) };
}

/**
 * Revocations apply to the matching ratings whichever of the two arrived first (the earliest
 * revocation of a rating wins; already revoked ratings are left alone: idempotent).
 */
async function applyBatchRevocations(tx: Queryable, k: EventsByKind): Promise<number> {
  const targets = pick(
    [...k.feedback, ...k.revocations],
    (e) => `${agentKey(e)}\u0000${e.rater}\u0000${e.feedbackIndex}`,
    'first',
  );
  return applyRevocations(tx, targets);
}

/** Writes the events (no transaction of its own: call it inside one), step by step. */
async function writeEvents(tx: Queryable, events: readonly IndexEvent[]): Promise<IngestCounts> {
  const k = byKind(events);
  const { uris, transfers } = await writeIdentity(tx, k);
  // Registration files: a new agentURI (or the same one set again) queues its fetch (src/registrations/).
  await syncRegistrationJobs(tx, uris);
  const metadata = await writeMetadata(tx, k);
  // The declared type of every agent whose metadata or URI this batch touched.
  await refreshDeclaredTypes(tx, pick([...metadata.latest, ...uris], agentKey, 'first'));
  const ratings = await insertRatings(tx, k.feedback);
  const revocations = await insertRevocations(tx, k.revocations);
  const revokedApplied = await applyBatchRevocations(tx, k);
  // Feedback documents: one fetch job per rating naming a URI (src/documents/ fetches them).
  const documentsQueued = await enqueueDocuments(tx, k.feedback);
  // Responses, after ownership and metadata: the responder is classed against the agent as now known.
  const responses = await insertResponses(tx, k.responses);
  return {
    ratings,
    revocations,
    transfers,
    metadata: metadata.n,
    revokedApplied,
    responses,
    documentsQueued,
  };
}

/** Runs of one batch's transaction when it keeps losing to another chain's (deadlock, serialization). */
export const INGEST_CONFLICT_ATTEMPTS = 6;

/**
 * Writes one batch and its checkpoint in ONE transaction: either both land or neither does.
 *
 * On PostgreSQL, chains are written concurrently and the maintained aggregates keyed by the rater
 * wallet alone (live_rater, live_rater_subject: one wallet rates on several chains) are updated by
 * every chain's triggers, in no common order: two batches can deadlock. PostgreSQL then rolls one
 * of them back whole (40P01); that batch is written again after a short random pause, up to
 * INGEST_CONFLICT_ATTEMPTS runs, before the chain fails for this pass.
 */
export async function ingestBatch(
  db: Database,
  events: readonly IndexEvent[],
  checkpoint: CheckpointUpdate,
  hooks: IngestHooks = {},
): Promise<IngestCounts> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction(async (tx) => {
        const counts = await writeEvents(tx, events);
        await writeCheckpoint(tx, checkpoint);
        if (hooks.beforeCommit) await hooks.beforeCommit(tx);
        return counts;
      });
    } catch (e) {
      if (attempt >= INGEST_CONFLICT_ATTEMPTS || !isTransactionConflict(e)) throw e;
      recordIngestConflict(checkpoint.network);
      logger('indexer').warn(
        { chain: checkpoint.network, attempt, code: databaseErrorCode(e) },
        'a batch lost to a concurrent transaction (deadlock or serialization failure) and is written again',
      );
      await sleep(Math.floor(Math.random() * 100 * attempt) + 20);
    }
  }
}
