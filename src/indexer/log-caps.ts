/**
 * Silent caps on `eth_getLogs` answers, at any number, and the one-block windows no narrower
 * window can split.
 *
 * A node that cuts every answer above C logs down to exactly C (HTTP 200, no error) cannot be
 * told from an honest one by the answer alone, and C need not be a round number. The rule here
 * needs no list of numbers: a count cap never lets an answer exceed C, so an answer SMALLER than
 * the largest count this endpoint has returned so far is whole, and only an answer that REACHES
 * that largest count (or a cap already proven) is checked. It is checked by asking its window
 * again in two parts, split at the block of its middle log (so that each part holds fewer logs
 * than the whole if the whole was complete): when the parts hold more logs than the whole, the
 * whole was cut, the cap is recorded and the parts (checked the same way, recursively) replace
 * it. A window of one block that reaches the count is read from the block's receipts
 * (`eth_getBlockReceipts`, or the receipt of each of its transactions where a node lacks that
 * method), filtered by address and topics: receipts are never capped.
 *
 * The parts of a window are asked at the same time (the rule does not depend on the order in which
 * their answers arrive: the largest count seen only grows).
 *
 * Cost: two extra getLogs per checked window (three for a window whose logs all sit in one
 * block: the blocks before and after it, and its receipts), and nothing for an answer below the
 * largest count seen. On an honest node a window is checked each time its count reaches a new
 * largest value (a handful per pass: ranges grow, counts grow); behind a capping node every
 * capped answer is split until the parts fall below the cap.
 *
 * Functions only: the scanner passes how to read a window and a block's receipts (with its own
 * retry policy) and keeps one {@link CapGuard} per endpoint and pass.
 */
import { isMethodMissing } from './rpc-retry.js';

/** The fields of a log this module reads (a raw eth_getLogs or receipt log). */
export interface RawLogLike {
  address?: unknown;
  topics?: readonly unknown[];
  blockNumber?: unknown;
  logIndex?: unknown;
  transactionHash?: unknown;
  removed?: unknown;
}

/** An eth_getLogs filter's address and topics (null at a position: any). */
export interface LogFilter {
  address: string | string[];
  topics: (string | string[] | null)[];
}

/** What one endpoint's answers taught during a pass. */
export interface CapGuard {
  /** The largest log count an answer has had. */
  maxSeen: number;
  /** The smallest count at which an answer was proven cut (null: none proven). */
  cap: number | null;
  /** Windows checked by asking their parts, and those proven cut. */
  checks: number;
  truncations: number;
  /** One-block windows read from their receipts. */
  denseBlocks: number;
}

export function newCapGuard(): CapGuard {
  return { maxSeen: 0, cap: null, checks: 0, truncations: 0, denseBlocks: 0 };
}

/** Answers with fewer logs are never checked (no cap worth the name is below 2). */
const MIN_CHECKED = 2;

/** Whether an answer of `n` logs must be checked before it is trusted. */
export function mustCheck(g: CapGuard, n: number): boolean {
  return n >= MIN_CHECKED && (n >= g.maxSeen || (g.cap !== null && n >= g.cap));
}

/** How to read a window of blocks and a block's receipts, with the caller's filter and retries. */
export interface WindowReader<L extends RawLogLike> {
  logs(from: number, to: number): Promise<L[]>;
  /** Every log of one block that the filter matches, from its receipts. */
  blockLogs(block: number): Promise<L[]>;
}

const num = (v: unknown): number => {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && /^0x[0-9a-f]+$/i.test(v)) return Number.parseInt(v.slice(2), 16);
  return Number.NaN;
};

/** A log's identity: its transaction and its index in the block. */
export function logKey(l: RawLogLike): string {
  return `${String(l.transactionHash ?? '').toLowerCase()}:${num(l.logIndex)}`;
}

/** Logs of several answers, each once, in chain order. */
function union<L extends RawLogLike>(...lists: L[][]): L[] {
  const seen = new Map<string, L>();
  for (const list of lists) for (const l of list) if (!seen.has(logKey(l))) seen.set(logKey(l), l);
  return [...seen.values()].sort(
    (a, b) => num(a.blockNumber) - num(b.blockNumber) || num(a.logIndex) - num(b.logIndex),
  );
}

/**
 * The complete logs of the window from..to, given the node's answer for it: the answer itself
 * when it is below the largest count seen, else checked as the module comment says. `truncated`:
 * this window's answer was proven cut (the caller narrows its next windows); `checked`: it was
 * asked again in parts (or its block read from the receipts), whatever the outcome.
 */
export async function completeWindow<L extends RawLogLike>(
  g: CapGuard,
  r: WindowReader<L>,
  from: number,
  to: number,
  answer: L[],
): Promise<{ logs: L[]; truncated: boolean; checked: boolean }> {
  const n = answer.length;
  if (!mustCheck(g, n)) {
    g.maxSeen = Math.max(g.maxSeen, n);
    return { logs: answer, truncated: false, checked: false };
  }
  g.maxSeen = Math.max(g.maxSeen, n);
  const blocks = answer.map((l) => num(l.blockNumber)).sort((a, b) => a - b);
  const lo = blocks[0]!;
  const hi = blocks[blocks.length - 1]!;
  let parts: L[][];
  if (!Number.isSafeInteger(lo) || !Number.isSafeInteger(hi) || lo < from || hi > to) {
    // A node that answers with logs outside the window (or without block numbers): ask halves.
    if (from === to) return { logs: answer, truncated: false, checked: false };
    const mid = from + Math.floor((to - from) / 2);
    parts = await Promise.all([part(g, r, from, mid), part(g, r, mid + 1, to)]);
  } else if (lo === hi) {
    // Every log in one block: the blocks around it, and the block itself from its receipts.
    g.denseBlocks++;
    parts = await Promise.all([
      lo > from ? part(g, r, from, lo - 1) : [],
      r.blockLogs(lo),
      lo < to ? part(g, r, lo + 1, to) : [],
    ]);
  } else {
    // Split at the block of the middle log (never at the first block: both parts hold a log).
    let split = blocks[Math.floor(n / 2)]!;
    if (split === lo) split = blocks.find((b) => b > lo)!;
    g.checks++;
    parts = await Promise.all([part(g, r, from, split - 1), part(g, r, split, to)]);
  }
  const logs = union(answer, ...parts);
  const truncated = logs.length > n;
  if (truncated) {
    g.truncations++;
    g.cap = Math.min(g.cap ?? n, n);
  }
  return { logs, truncated, checked: true };
}

/** A part of a checked window: asked, then itself completed by the same rule. */
async function part<L extends RawLogLike>(
  g: CapGuard,
  r: WindowReader<L>,
  from: number,
  to: number,
): Promise<L[]> {
  return (await completeWindow(g, r, from, to, await r.logs(from, to))).logs;
}

// ------------------------------------------------------------------ a block's logs from its receipts

const lower = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : '');

/** Whether a log matches an eth_getLogs filter (address, then each topic position). */
export function matchesFilter(l: RawLogLike, f: LogFilter): boolean {
  const addresses = (Array.isArray(f.address) ? f.address : [f.address]).map(lower);
  if (!addresses.includes(lower(l.address))) return false;
  const topics = l.topics ?? [];
  for (const [i, want] of f.topics.entries()) {
    if (want === null) continue;
    const options = (Array.isArray(want) ? want : [want]).map(lower);
    if (!options.includes(lower(topics[i]))) return false;
  }
  return true;
}

/** A JSON-RPC request with the caller's retry policy; `null` when the node lacks the method. */
export type RpcRequest = (method: string, params: unknown[]) => Promise<unknown>;

/**
 * Every log of block `n` that `filter` matches, from the block's receipts: `eth_getBlockReceipts`
 * when the node serves it (`state.blockReceipts` remembers a refusal), else the block's
 * transaction hashes and one `eth_getTransactionReceipt` each.
 */
export async function blockReceiptLogs(
  request: RpcRequest,
  n: number,
  filter: LogFilter,
  state: { blockReceipts: boolean },
): Promise<RawLogLike[]> {
  const tag = `0x${n.toString(16)}`;
  let receipts: unknown[] | null = null;
  if (state.blockReceipts) {
    try {
      const r = await request('eth_getBlockReceipts', [tag]);
      if (Array.isArray(r)) receipts = r;
    } catch (err) {
      if (!isMethodMissing(err)) throw err;
      state.blockReceipts = false;
    }
  }
  if (receipts === null) {
    const block = (await request('eth_getBlockByNumber', [tag, false])) as { transactions?: unknown } | null;
    const hashes = Array.isArray(block?.transactions) ? block.transactions : [];
    receipts = [];
    for (const h of hashes) receipts.push(await request('eth_getTransactionReceipt', [h]));
  }
  const out: RawLogLike[] = [];
  for (const receipt of receipts) {
    const logs = (receipt as { logs?: unknown } | null)?.logs;
    if (!Array.isArray(logs)) continue;
    for (const l of logs as RawLogLike[]) if (!l.removed && matchesFilter(l, filter)) out.push(l);
  }
  return out;
}
