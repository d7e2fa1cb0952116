/**
 * The account-history lookups: for each rater, its FIRST rating transaction is read once
 * (`eth_getTransactionByHash`) for its sender and nonce. Works from the durable queue
 * `rater_first_tx` (leases with SKIP LOCKED, so several processes split the work and a crashed
 * one's lease runs out), rate-limited per chain (`RATER_TX_RATE` calls a second), retried with
 * doubling waits, then failed. Runs beside the indexer, never inside a pass.
 */
import { randomBytes } from 'node:crypto';
import { createPublicClient, http, type Hex } from 'viem';
import type { ChainConfig } from '../chains.js';
import type { Database } from '../db/database.js';
import { logger } from '../log.js';
import {
  finishRaterTransaction,
  leaseRaterTransactions,
  type RaterTxJob,
  type RaterTxOutcome,
} from '../store/raters.js';

/** A transaction's sender and nonce on a network; null: no such transaction. */
export type TxSource = (network: string, txHash: string) => Promise<{ from: string; nonce: number } | null>;

export interface TxLookupOptions {
  /** Networks whose lookups this process runs (configured, enabled EVM chains). */
  networks: readonly string[];
  batch: number;
  /** Calls per second per network. */
  ratePerSecond: number;
  maxAttempts: number;
  retryBaseSeconds: number;
  leaseSeconds: number;
}

export interface TxLookupContext {
  db: Database;
  options: TxLookupOptions;
  source: TxSource;
  clock?: () => Date;
  owner?: string;
  /** Waits between two calls on one network (tests: no wait). */
  sleep?: (ms: number) => Promise<void>;
}

export interface TxRoundReport {
  leased: number;
  fetched: number;
  retried: number;
  failed: number;
}

/** Transactions from the configured EVM chains (one viem client per network, created lazily). */
export function chainTransactions(chains: readonly ChainConfig[]): TxSource {
  const clients = new Map<string, ReturnType<typeof createPublicClient>>();
  return async (network, txHash) => {
    const chain = chains.find((c) => c.network === network && c.kind === 'evm' && c.enabled && c.rpcUrl);
    if (!chain) throw new Error(`no configured EVM chain ${network}`);
    let client = clients.get(network);
    if (!client) {
      client = createPublicClient({ transport: http(chain.rpcUrl, { retryCount: 1, timeout: 15_000 }) });
      clients.set(network, client);
    }
    try {
      const tx = await client.getTransaction({ hash: txHash as Hex });
      return { from: tx.from.toLowerCase(), nonce: Number(tx.nonce) };
    } catch (e) {
      if ((e as Error).name === 'TransactionNotFoundError') return null;
      throw e;
    }
  };
}

/** The networks lookups run on: configured, enabled EVM chains with an RPC. */
export function lookupNetworks(chains: readonly ChainConfig[]): string[] {
  return chains.filter((c) => c.kind === 'evm' && c.enabled && c.rpcUrl).map((c) => c.network);
}

const after = (now: Date, seconds: number) => new Date(now.getTime() + seconds * 1000);

/** Backoff before attempt n+1: base · 2^(n−1), capped at six hours. */
function retryDelaySeconds(attempts: number, base: number): number {
  return Math.min(6 * 3600, base * 2 ** Math.max(0, Math.min(20, attempts - 1)));
}

async function lookUp(ctx: TxLookupContext, job: RaterTxJob, now: Date): Promise<RaterTxOutcome> {
  const o = ctx.options;
  const retryOr = (reason: string): RaterTxOutcome =>
    job.attempts < o.maxAttempts
      ? { state: 'retry', nextTryAt: after(now, retryDelaySeconds(job.attempts, o.retryBaseSeconds)), reason }
      : { state: 'failed', nextTryAt: now, reason };
  try {
    const tx = await ctx.source(job.network, job.tx_hash);
    // A rating whose transaction the node does not know (yet): retried, then failed.
    if (tx === null) return retryOr('no_such_transaction');
    if (!Number.isSafeInteger(tx.nonce) || tx.nonce < 0 || !/^0x[0-9a-f]{40}$/.test(tx.from))
      return { state: 'failed', nextTryAt: now, reason: 'malformed_transaction' };
    return { state: 'fetched', nextTryAt: now, reason: null, txFrom: tx.from, nonce: tx.nonce };
  } catch (e) {
    logger('raters').warn(
      { network: job.network, err: (e as Error).message.slice(0, 200) },
      'rater transaction lookup failed',
    );
    return retryOr('rpc_error');
  }
}

/** Leases one batch and runs it: networks in parallel, each at most `ratePerSecond` calls a second. */
export async function runTxRound(ctx: TxLookupContext): Promise<TxRoundReport> {
  const clock = ctx.clock ?? (() => new Date());
  const owner = (ctx.owner ??= `raters-${randomBytes(6).toString('hex')}`);
  const o = ctx.options;
  const sleep = ctx.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const jobs = await leaseRaterTransactions(ctx.db, owner, clock(), o.batch, o.leaseSeconds, o.networks);
  const report: TxRoundReport = { leased: jobs.length, fetched: 0, retried: 0, failed: 0 };
  const byNetwork = new Map<string, RaterTxJob[]>();
  for (const j of jobs) byNetwork.set(j.network, [...(byNetwork.get(j.network) ?? []), j]);
  const interval = 1000 / Math.max(1, o.ratePerSecond);
  await Promise.all(
    [...byNetwork.values()].map(async (list) => {
      for (let i = 0; i < list.length; i++) {
        const started = performance.now();
        const job = list[i]!;
        const outcome = await lookUp(ctx, job, clock());
        if (await finishRaterTransaction(ctx.db, job, owner, clock(), outcome)) {
          if (outcome.state === 'fetched') report.fetched++;
          else if (outcome.state === 'retry') report.retried++;
          else report.failed++;
        }
        const wait = interval - (performance.now() - started);
        if (i < list.length - 1 && wait > 0) await sleep(wait);
      }
    }),
  );
  return report;
}

/** Runs rounds until nothing is due (or `maxRounds`). */
export async function drainTxLookups(ctx: TxLookupContext, maxRounds = 50): Promise<TxRoundReport> {
  const total: TxRoundReport = { leased: 0, fetched: 0, retried: 0, failed: 0 };
  for (let i = 0; i < maxRounds; i++) {
    const r = await runTxRound(ctx);
    for (const k of Object.keys(total) as (keyof TxRoundReport)[]) total[k] += r[k];
    if (r.leased === 0) break;
  }
  return total;
}
