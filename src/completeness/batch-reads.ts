/**
 * The census's contract reads, many at a time, at one block: through Multicall3's `aggregate3` at
 * its canonical address when the chain has code there (checked with eth_getCode at the census
 * block), else as plain eth_calls sent in JSON-RPC batches of at most 10. Either way each read
 * says whether it succeeded and what it answered; the caller decodes.
 *
 * Packing (Multicall3): reads go into one eth_call until it holds `maxCalls` of them or their
 * estimated gas reaches `gasBudget` (kept under the gas nodes give an eth_call). A read
 * that fails inside a batch may have failed only for lack of gas (a read before it used more than
 * its estimate): failed reads are asked again in batches a quarter the size, then alone (the first
 * 32; the rest too when one of those succeeds, else they are taken as failed like those 32: a
 * function the contract lacks, ids that do not exist); a read that fails alone reverted. When a retried read then succeeds, later batches are made
 * smaller (a node with a lower gas cap). An eth_call that fails as a whole (an error, a response
 * too large) is split in two and asked again, down to one read.
 */
import type { Hex } from 'viem';
import { MULTICALL3_ADDRESS } from '../chains.js';
import type { EvmReads } from '../indexer/evm-scanner.js';
import { classifyEvmError } from '../indexer/rpc-retry.js';
import { decodeAggregate3, encodeAggregate3 } from './abi-codec.js';

/** One contract read: where, what, and a gas estimate for packing. */
export interface Read {
  to: Hex;
  data: Hex;
  gas: number;
  /**
   * Its failure is an answer, not worth asking again (a cheap probe, such as ownerOf of an id
   * that may not exist: it cannot starve the reads after it of gas).
   */
  final?: boolean;
}

/** A read's outcome: its return data, or null when it failed (reverted). */
export type ReadOutcome = Hex | null;

export type BatchMethod = 'multicall3' | 'eth_call';

export interface BatchReaderOptions {
  /** Reads per Multicall3 eth_call at most. */
  maxCalls: number;
  /** Estimated gas per Multicall3 eth_call at most. */
  gasBudget: number;
  /** Multicall3 eth_calls (or JSON-RPC batches) in flight at once. */
  concurrency: number;
}

/**
 * 24 M gas a batch: below the 30 M some nodes (EDR, Hardhat) give an eth_call without a gas limit
 * and geth's 50 M cap; the estimates are generous (measured cold costs plus about a third).
 */
const DEFAULTS: BatchReaderOptions = { maxCalls: 1_000, gasBudget: 24_000_000, concurrency: 4 };

/** Failed reads asked alone before the rest of a systematic failure is taken as is. */
const ALONE_PROBES = 32;

export interface BatchReader {
  readonly method: BatchMethod;
  /** eth_call requests sent (a Multicall3 batch or a plain call each count one). */
  readonly requests: number;
  /** Reads answered. */
  readonly reads: number;
  /** Reads the chain's outcomes for, in order. */
  read(reads: readonly Read[]): Promise<ReadOutcome[]>;
}

/** The reader for `block`: Multicall3 when the chain has its code there, else plain eth_calls. */
export async function batchReader(
  reads: EvmReads,
  block: number,
  opts: Partial<BatchReaderOptions> = {},
): Promise<BatchReader> {
  const o = { ...DEFAULTS, ...opts };
  const code = await reads.code(MULTICALL3_ADDRESS.toLowerCase() as Hex, block);
  return code !== '0x' && code !== '0x0' ? multicallReader(reads, block, o) : plainReader(reads, block, o);
}

/** Runs `jobs` with at most `n` in flight, results in order. */
async function pool<T, R>(items: readonly T[], n: number, job: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await job(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

function plainReader(reads: EvmReads, block: number, o: BatchReaderOptions): BatchReader {
  const r = {
    method: 'eth_call' as const,
    requests: 0,
    reads: 0,
    async read(list: readonly Read[]): Promise<ReadOutcome[]> {
      const groups: Read[][] = [];
      for (let i = 0; i < list.length; i += 10) groups.push(list.slice(i, i + 10));
      const answers = await pool(groups, o.concurrency, (g) => {
        r.requests += g.length;
        return reads.calls(g, block);
      });
      r.reads += list.length;
      return answers.flat();
    },
  };
  return r;
}

function multicallReader(reads: EvmReads, block: number, o: BatchReaderOptions): BatchReader {
  let maxCalls = Math.max(1, o.maxCalls);
  let gasBudget = Math.max(1_000_000, o.gasBudget);
  const target = MULTICALL3_ADDRESS.toLowerCase() as Hex;

  /** One aggregate3 eth_call; a failure as a whole splits it. */
  async function call(batch: readonly Read[]): Promise<ReadOutcome[]> {
    r.requests++;
    const data = encodeAggregate3(batch);
    let out: Hex | null;
    try {
      out = await reads.call(target, data, block);
    } catch (err) {
      // A node that failed after its retries (5xx, 429, the network) fails the census; an answer
      // a smaller batch may fix (too large, out of gas, a timeout) splits the batch.
      if (batch.length === 1 || classifyEvmError(err, false) === 'transient') throw err;
      out = null;
    }
    const results = out === null || out === '0x' ? null : decodeAggregate3(out, batch.length);
    if (results === null) {
      if (batch.length === 1) return [null];
      // The whole eth_call failed (out of gas, too large an answer, an error): halves, and smaller
      // batches from now on.
      const half = Math.ceil(batch.length / 2);
      maxCalls = Math.max(1, Math.min(maxCalls, half));
      const gas = batch.reduce((n, c) => n + c.gas, 0);
      gasBudget = Math.max(1_000_000, Math.min(gasBudget, Math.floor(gas / 2)));
      return [...(await call(batch.slice(0, half))), ...(await call(batch.slice(half)))];
    }
    return results;
  }

  function pack(list: readonly { read: Read; i: number }[], calls: number) {
    const batches: { read: Read; i: number }[][] = [];
    let cur: { read: Read; i: number }[] = [];
    let gas = 0;
    for (const item of list) {
      if (cur.length > 0 && (cur.length >= calls || gas + item.read.gas > gasBudget)) {
        batches.push(cur);
        cur = [];
        gas = 0;
      }
      cur.push(item);
      gas += item.read.gas;
    }
    if (cur.length > 0) batches.push(cur);
    return batches;
  }

  async function round(items: readonly { read: Read; i: number }[], calls: number, out: ReadOutcome[]) {
    const batches = pack(items, calls);
    const answers = await pool(batches, o.concurrency, (b) => call(b.map((x) => x.read)));
    const failed: { read: Read; i: number }[] = [];
    for (const [bi, b] of batches.entries())
      for (const [k, item] of b.entries()) {
        const a = answers[bi]![k]!;
        out[item.i] = a;
        if (a === null && !item.read.final) failed.push(item);
      }
    return failed;
  }

  const r = {
    method: 'multicall3' as const,
    requests: 0,
    reads: 0,
    async read(list: readonly Read[]): Promise<ReadOutcome[]> {
      const out: ReadOutcome[] = new Array(list.length).fill(null);
      const items = list.map((read, i) => ({ read, i }));
      let failed = await round(items, maxCalls, out);
      // Failed reads again, in smaller batches, then alone: only a read that fails alone reverted.
      if (failed.length > 0) {
        const again = await round(failed, Math.max(1, Math.floor(maxCalls / 4)), out);
        if (again.length < failed.length) {
          // Some only lacked gas: this node allows less gas per eth_call than the budget assumed.
          gasBudget = Math.max(1_000_000, Math.floor(gasBudget / 2));
          maxCalls = Math.max(1, Math.floor(maxCalls / 2));
        }
        failed = again;
      }
      if (failed.length > 0) {
        // Alone, a bounded number first: when none of them succeeds the failure is systematic
        // (a function the contract lacks, ids that do not exist) and the rest are taken as is.
        const first = failed.slice(0, ALONE_PROBES);
        const still = await round(first, 1, out);
        if (still.length < first.length) await round(failed.slice(ALONE_PROBES), 1, out);
      }
      r.reads += list.length;
      return out;
    },
  };
  return r;
}
