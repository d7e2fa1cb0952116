/**
 * The feedback-document fetcher: runs beside the indexer (in `serve`, after `index --once`, in the
 * demo), works from the durable queue of `feedback_documents` (SQL in src/store/documents.ts):
 * leases due jobs (SKIP LOCKED: several processes split the work, a crashed one's lease expires),
 * fetches each document safely (./safe-fetch.ts), judges it (./evidence.ts: integrity, fields,
 * proofOfPayment) and finishes the job. Failures retry with exponential backoff up to
 * `maxAttempts`, then the job fails with integrity `unreachable`. A succeeded job is fetched again
 * after `recheckSeconds` so a document replaced later is seen (`changed`).
 */
import { randomBytes } from 'node:crypto';
import { createPublicClient, http, type Hex } from 'viem';
import type { ChainConfig } from '../chains.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { logger } from '../log.js';
import { recordFeedbackDocument } from '../metrics.js';
import {
  finishDocument,
  leaseDocuments,
  wakeIpfsJobs,
  type DocumentJob,
  type DocumentOutcome,
} from '../store/documents.js';
import {
  compareWithLog,
  integrityState,
  judgeTransfer,
  keccakHex,
  parseFeedbackDocument,
  PARSER_VERSION,
  paymentProofOf,
  payeesOf,
  sha256Hex,
  type PaymentVerdict,
  type ReceiptLike,
} from './evidence.js';
import { runQueueRound, startPeriodic, type PeriodicWorker } from './queue.js';
import { fetchDocument, type FetchLimits, type FetchResult } from './safe-fetch.js';

export interface FetcherOptions {
  limits: FetchLimits;
  /** Jobs leased per round. */
  batch: number;
  /** Documents fetched at once. */
  concurrency: number;
  leaseSeconds: number;
  maxAttempts: number;
  retryBaseSeconds: number;
  recheckSeconds: number;
}

/** A transaction receipt on an EVM chain id: null = no such transaction; 'unsupported' = not a chain we index. */
export type ReceiptSource = (chainId: number, txHash: string) => Promise<ReceiptLike | null | 'unsupported'>;

export interface FetcherContext {
  db: Database;
  options: FetcherOptions;
  receipts: ReceiptSource;
  clock?: () => Date;
  /** Lease owner name (default: random per process). */
  owner?: string;
  /** Only this agent's jobs (the demo); default every job. */
  scope?: { network: string; agentId: string };
  /** Replaces the network fetch (tests). */
  fetch?: (uri: string, limits: FetchLimits) => Promise<FetchResult>;
}

export interface RoundReport {
  leased: number;
  succeeded: number;
  retried: number;
  failed: number;
  waiting: number;
}

/** The fetcher's options from the configuration. */
export function fetcherOptions(config: Config): FetcherOptions {
  const f = config.feedbackFetch;
  return {
    limits: {
      maxBytes: f.maxBytes,
      timeoutMs: f.timeoutMs,
      maxRedirects: f.maxRedirects,
      allowPrivate: f.allowPrivate,
      ipfsGateway: f.ipfsGateway,
      userAgent: 'repindex-feedback-fetcher/1 (+read-only reputation index)',
    },
    batch: f.batch,
    concurrency: f.concurrency,
    leaseSeconds: Math.max(60, Math.ceil((f.timeoutMs / 1000) * 4)),
    maxAttempts: f.maxAttempts,
    retryBaseSeconds: f.retryBaseSeconds,
    recheckSeconds: f.recheckSeconds,
  };
}

/** The fetcher's context for a process: the configured limits and the configured chains' receipts. */
export function fetcherContextFor(db: Database, config: Config): FetcherContext {
  return { db, options: fetcherOptions(config), receipts: chainReceipts(config.chains) };
}

/** Receipts from the configured EVM chains, by chain id (one viem client per chain, created lazily). */
export function chainReceipts(chains: readonly ChainConfig[]): ReceiptSource {
  const clients = new Map<number, ReturnType<typeof createPublicClient>>();
  return async (chainId, txHash) => {
    const chain = chains.find((c) => c.kind === 'evm' && c.enabled && c.chainId === chainId && c.rpcUrl);
    if (!chain) return 'unsupported';
    let client = clients.get(chainId);
    if (!client) {
      client = createPublicClient({ transport: http(chain.rpcUrl, { retryCount: 1, timeout: 15_000 }) });
      clients.set(chainId, client);
    }
    try {
      const r = await client.getTransactionReceipt({ hash: txHash as Hex });
      return {
        status: r.status,
        logs: r.logs.map((l) => ({ address: l.address, topics: l.topics, data: l.data })),
      };
    } catch (e) {
      if ((e as Error).name === 'TransactionReceiptNotFoundError') return null;
      throw e;
    }
  };
}

/** The host a URI is fetched from (ipfs: the gateway), lower-cased; null for data: and the unparsable. */
export function fetchHost(uri: string): string | null {
  const t = uri.trim().toLowerCase();
  if (t.startsWith('ipfs://')) return 'ipfs-gateway';
  if (!t.startsWith('http://') && !t.startsWith('https://')) return null;
  try {
    return new URL(t).host;
  } catch {
    return null;
  }
}

const after = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000);

/** Backoff before attempt n+1: base · 2^(n−1), capped at six hours. */
export function retryDelaySeconds(attempts: number, base: number): number {
  return Math.min(6 * 3600, base * 2 ** Math.max(0, Math.min(20, attempts - 1)));
}

/** The payment check of a parsed document (never throws: an RPC failure leaves the state unset). */
async function checkPayment(
  ctx: FetcherContext,
  job: DocumentJob,
  doc: Record<string, unknown>,
): Promise<Pick<DocumentOutcome, 'paymentProof' | 'paymentState' | 'paymentReason'>> {
  const proof = paymentProofOf(doc);
  if (proof === null) return { paymentProof: null, paymentState: null, paymentReason: null };
  if (proof === 'malformed')
    return { paymentProof: null, paymentState: 'mismatch', paymentReason: 'malformed_proof' };
  let receipt: ReceiptLike | null | 'unsupported';
  try {
    receipt = await ctx.receipts(proof.chainId, proof.txHash);
  } catch (e) {
    logger('documents').warn(
      { err: (e as Error).message.slice(0, 200) },
      'payment proof: receipt lookup failed',
    );
    return {};
  }
  if (receipt === 'unsupported')
    return { paymentProof: proof, paymentState: 'unsupported_chain', paymentReason: null };
  const v: PaymentVerdict = judgeTransfer(
    proof,
    job.rater,
    payeesOf(job.owner, job.agent_wallet_hex),
    receipt,
  );
  return {
    paymentProof: { ...proof, ...(v.token ? { token: v.token, amount: v.amount } : {}) },
    paymentState: v.state,
    paymentReason: v.reason,
  };
}

/** Fetches and judges one leased job; returns the outcome to store. */
export async function processJob(ctx: FetcherContext, job: DocumentJob, now: Date): Promise<DocumentOutcome> {
  const o = ctx.options;
  const fetched = await (ctx.fetch ?? fetchDocument)(job.uri, o.limits);
  const recheck = job.first_keccak256 !== null;
  if (!fetched.ok) {
    // A re-check that cannot fetch (whatever the reason, a removed ipfs gateway too) keeps what
    // the earlier fetch proved.
    if (recheck) return { state: 'succeeded', nextTryAt: after(now, o.recheckSeconds), reason: fetched.code };
    if (fetched.code === 'no_ipfs_gateway')
      return {
        state: 'queued',
        nextTryAt: after(now, 3600),
        reason: 'no_ipfs_gateway',
        uncountAttempt: true,
      };
    if (fetched.retryable && job.attempts < o.maxAttempts)
      return {
        state: 'retry',
        nextTryAt: after(now, retryDelaySeconds(job.attempts, o.retryBaseSeconds)),
        reason: fetched.code,
      };
    return {
      state: 'failed',
      nextTryAt: now,
      reason: fetched.code,
      integrityState: fetched.code === 'bad_content_type' ? 'not_json' : 'unreachable',
      parserVersion: PARSER_VERSION,
      mismatches: null,
    };
  }
  const keccak = keccakHex(fetched.bytes);
  if (job.first_keccak256 !== null && job.first_keccak256 !== keccak) {
    // Other bytes than the first fetch's: `changed`. What the first bytes proved (their hashes,
    // fields and payment check) is kept; the new bytes are not evidence of the rating.
    return {
      state: 'succeeded',
      nextTryAt: after(now, o.recheckSeconds),
      reason: 'content_changed',
      integrityState: 'changed',
      parserVersion: PARSER_VERSION,
    };
  }
  const doc = parseFeedbackDocument(fetched.bytes);
  const integrity = integrityState({
    feedbackHash: job.feedback_hash,
    keccak,
    firstKeccak: job.first_keccak256,
    isJson: doc !== null,
  });
  const mismatches = doc
    ? compareWithLog(doc, {
        agentId: job.agent_id,
        rater: job.rater,
        valueRaw: job.value_raw,
        valueDecimals: job.value_decimals,
        tag1: job.tag1,
        tag2: job.tag2,
        endpoint: job.endpoint,
      })
    : null;
  const payment = doc
    ? await checkPayment(ctx, job, doc)
    : { paymentProof: null, paymentState: null, paymentReason: null };
  return {
    state: 'succeeded',
    nextTryAt: after(now, o.recheckSeconds),
    reason: null,
    blob: {
      sha256: sha256Hex(fetched.bytes),
      keccak256: keccak,
      byteLength: fetched.bytes.length,
      contentType: fetched.contentType?.slice(0, 100) ?? null,
      fetchedAt: now,
    },
    // Once `changed`, a document stays `changed` (even if the first bytes come back later).
    integrityState: job.integrity_state === 'changed' ? 'changed' : integrity,
    parserVersion: PARSER_VERSION,
    mismatches,
    ...payment,
  };
}

/** Leases one batch of due jobs and processes it; returns what happened. */
export async function runFetchRound(ctx: FetcherContext): Promise<RoundReport> {
  const clock = ctx.clock ?? (() => new Date());
  const owner = (ctx.owner ??= `fetcher-${randomBytes(6).toString('hex')}`);
  const o = ctx.options;
  const jobs = await leaseDocuments(ctx.db, owner, clock(), o.batch, o.leaseSeconds, ctx.scope ?? null);
  const report: RoundReport = { leased: jobs.length, succeeded: 0, retried: 0, failed: 0, waiting: 0 };
  // Politeness: one fetch at a time per host (feedback hosts are concentrated); other hosts' jobs
  // go first meanwhile (src/documents/queue.ts).
  await runQueueRound<DocumentJob, DocumentOutcome>({
    jobs,
    concurrency: o.concurrency,
    host: (job) => fetchHost(job.uri),
    process: (job) => processJob(ctx, job, clock()),
    onError: (job, e) => {
      logger('documents').warn({ err: e.message.slice(0, 200) }, 'document job failed');
      return {
        state: 'retry',
        nextTryAt: after(clock(), retryDelaySeconds(job.attempts, o.retryBaseSeconds)),
        reason: 'internal_error',
      };
    },
    finish: async (job, outcome) => {
      if (await finishDocument(ctx.db, job, owner, clock(), outcome)) recordFeedbackDocument(outcome.state);
      if (outcome.state === 'succeeded') report.succeeded++;
      else if (outcome.state === 'retry') report.retried++;
      else if (outcome.state === 'failed') report.failed++;
      else report.waiting++;
    },
  });
  return report;
}

/** Runs rounds until no job is due (or `maxRounds`); returns the sum. */
export async function drainDocuments(ctx: FetcherContext, maxRounds = 1000): Promise<RoundReport> {
  const total: RoundReport = { leased: 0, succeeded: 0, retried: 0, failed: 0, waiting: 0 };
  if (ctx.options.limits.ipfsGateway) await wakeIpfsJobs(ctx.db, (ctx.clock ?? (() => new Date()))());
  for (let i = 0; i < maxRounds; i++) {
    const r = await runFetchRound(ctx);
    for (const k of Object.keys(total) as (keyof RoundReport)[]) total[k] += r[k];
    if (r.leased === 0) break;
  }
  return total;
}

export type DocumentFetcher = PeriodicWorker<RoundReport>;

/** Drains the queue every `periodSeconds` (and at start); never overlaps itself; errors are logged. */
export function startDocumentFetcher(ctx: FetcherContext, periodSeconds: number): DocumentFetcher {
  return startPeriodic(
    'documents',
    periodSeconds,
    async () => {
      const r = await drainDocuments(ctx, 50);
      if (r.leased > 0) logger('documents').info(r, 'feedback documents fetched');
      return r;
    },
    'document fetch round failed',
  );
}
