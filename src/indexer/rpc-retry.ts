/**
 * The retry policy both scanners share: error classes (EVM JSON-RPC over viem, Solana over
 * @solana/kit), exponential backoff with jitter, the Retry-After of a 429, per-call timeouts and
 * the one-line error description used in logs and `chains.last_error`.
 */
import { sanitizeText, type ScannerLogger } from './scanner.js';

/**
 * 'range' (getLogs asked too much: halve), 'rate_limited' (429: pause, Solana only; the EVM
 * scanner counts 429 as 'transient'), 'timeout', 'transient' (retry) or 'fatal' (give up now).
 */
type RpcErrorClass = 'range' | 'rate_limited' | 'timeout' | 'transient' | 'fatal';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Backoff before retry `attempt` (1-based): base·2^(attempt−1) capped at max, jittered over its upper half. */
export function backoffDelay(attempt: number, o: { baseDelayMs: number; maxDelayMs: number }): number {
  const cap = Math.min(o.maxDelayMs, o.baseDelayMs * 2 ** (attempt - 1));
  return Math.round(cap / 2 + Math.random() * (cap / 2));
}

/** What a retry needs: the attempt bound and the backoff delays. */
interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/**
 * The wait before retry `attempt` of a failed call, shared by both scanners: the backoff delay,
 * logged at debug level (chain, call, attempt, delay, error class), then slept.
 */
export async function backOffBeforeRetry(
  log: ScannerLogger,
  network: string,
  what: string,
  err: unknown,
  attempt: number,
  kind: RpcErrorClass,
  o: RetryPolicy,
  atLeastMs = 0,
): Promise<void> {
  const delay = Math.max(backoffDelay(attempt, o), atLeastMs);
  log.debug?.(
    `[index] ${network}: ${what}: ${describeError(err)}; retry ${attempt}/${o.maxAttempts - 1} in ${delay} ms`,
    { chain: network, call: what, attempt, delay_ms: delay, kind },
  );
  await sleep(delay);
}

/** The Retry-After of a 429 (seconds or an HTTP date) in milliseconds; null when absent. */
export function retryAfterMs(err: unknown, now = Date.now()): number | null {
  let e: unknown = err;
  for (let depth = 0; e && depth < 8; depth++) {
    const o = e as { context?: { headers?: unknown }; headers?: unknown; cause?: unknown };
    const h = o.context?.headers ?? o.headers;
    let raw: string | null = null;
    if (h && typeof (h as Headers).get === 'function') raw = (h as Headers).get('retry-after');
    else if (h && typeof h === 'object') {
      const v =
        (h as Record<string, unknown>)['retry-after'] ?? (h as Record<string, unknown>)['Retry-After'];
      if (typeof v === 'string') raw = v;
    }
    if (raw !== null) {
      const t = raw.trim();
      if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
      const at = Date.parse(t);
      if (!Number.isNaN(at)) return Math.max(0, at - now);
      return null;
    }
    e = o.cause;
  }
  return null;
}

/** A call that did not answer within the timeout. */
export class RpcTimeout extends Error {
  override name = 'RpcTimeout';
  constructor(what: string, ms: number) {
    super(`${what}: no answer within ${ms} ms (timed out)`);
  }
}

/** Runs fn with a timeout: the signal aborts the request, the race covers transports that ignore it. */
export async function withTimeout<T>(
  what: string,
  ms: number,
  fn: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const e = new RpcTimeout(what, ms);
      ac.abort(e);
      reject(e);
    }, ms);
  });
  try {
    return await Promise.race([fn(ac.signal), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/** A one-line, length-bounded description of an error (safe for logs and `last_error`). */
export function describeError(err: unknown): string {
  const o = err as { shortMessage?: unknown; message?: unknown; details?: unknown };
  const main =
    typeof o?.shortMessage === 'string'
      ? o.shortMessage
      : typeof o?.message === 'string'
        ? o.message
        : String(err);
  const details = typeof o?.details === 'string' && !main.includes(o.details) ? ` (${o.details})` : '';
  return sanitizeText(`${main}${details}`.replace(/\s+/g, ' ').trim()).slice(0, 500);
}

// ------------------------------------------------------------------ EVM (viem) errors

interface ErrorFacts {
  text: string;
  status: number | null;
  code: number | null;
  timeout: boolean;
  http: boolean;
  /** A range a JSON-RPC error's `data` object names (Infura: `{from, to}`), the first one found. */
  dataRange: { from: number; to: number } | null;
}

function errorFacts(err: unknown): ErrorFacts {
  const parts: string[] = [];
  let status: number | null = null;
  let code: number | null = null;
  let timeout = false;
  let http = false;
  let dataRange: { from: number; to: number } | null = null;
  let e: unknown = err;
  for (let depth = 0; e && depth < 8; depth++) {
    const o = e as Record<string, unknown>;
    for (const k of ['message', 'shortMessage', 'details'])
      if (typeof o[k] === 'string') parts.push(o[k] as string);
    if (status === null && typeof o.status === 'number') status = o.status;
    if (code === null && typeof o.code === 'number') code = o.code;
    if (typeof o.code === 'string') parts.push(o.code);
    // A JSON-RPC error's `data` may carry the real reason (Tenderly: data.payload "range … limit …").
    if (typeof o.data === 'string') parts.push(o.data);
    else if (o.data && typeof o.data === 'object') {
      const data = o.data as Record<string, unknown>;
      if (typeof data.payload === 'string') parts.push(data.payload);
      const from = typeof data.from === 'string' ? num(data.from) : null;
      const to = typeof data.to === 'string' ? num(data.to) : null;
      if (dataRange === null && from !== null && to !== null && to >= from) dataRange = { from, to };
    }
    const name = typeof o.name === 'string' ? o.name : '';
    if (name === 'TimeoutError' || name === 'AbortError') timeout = true;
    if (name === 'HttpRequestError') http = true;
    e = o.cause;
  }
  return { text: parts.join(' | ').toLowerCase(), status, code, timeout, http, dataRange };
}

const RATE_LIMIT_RE = /rate.?limit|too many requests|throttl|capacity|compute units|request rate/;
const RANGE_RE =
  /range|too large|too big|too many (results|logs|blocks)|limit exceeded|response size|size limit|exceed(s|ed)? .*(limit|max)|more than \d+ (results|logs)|returned more than|max(imum)? (results|logs|block)|query timeout|log response size/;
const TIMEOUT_RE = /timed? ?out|timeout|deadline exceeded/;
const REVERT_RE = /execution reverted|\breverted\b|revert(ed)? (reason|with)|invalid opcode/;
const OUT_OF_GAS_RE = /out of gas|gas (limit|cap) (reached|exceeded)|exceeds (the )?(block )?gas (limit|cap)/;
const METHOD_MISSING_RE =
  /method .*(not (found|supported|available|exist))|unsupported method|method .*does not exist/;
const NETWORK_RE =
  /fetch failed|econnrefused|econnreset|etimedout|enotfound|eai_again|socket hang up|network|other side closed|und_err|epipe|ehostunreach/;

/** Whether a node refused a JSON-RPC method it does not serve (not worth asking again). */
export function isMethodMissing(err: unknown): boolean {
  const f = errorFacts(err);
  return f.code === -32601 || f.code === -32004 || METHOD_MISSING_RE.test(f.text);
}

/** Whether an EVM call failed because the contract reverted (not because of the node). */
export function isRevert(err: unknown): boolean {
  return REVERT_RE.test(errorFacts(err).text);
}

/** Classifies an EVM RPC failure; `forLogs` enables the range class (only getLogs has a range). */
export function classifyEvmError(err: unknown, forLogs: boolean): Exclude<RpcErrorClass, 'rate_limited'> {
  const f = errorFacts(err);
  // An eth_call that reverted, or ran out of gas, will again: not worth a retry.
  if (REVERT_RE.test(f.text) || OUT_OF_GAS_RE.test(f.text)) return 'fatal';
  if (f.status === 429 || RATE_LIMIT_RE.test(f.text)) return 'transient';
  if (forLogs && (f.status === 413 || RANGE_RE.test(f.text))) return 'range';
  if (f.timeout || f.status === 408 || f.status === 504 || TIMEOUT_RE.test(f.text)) return 'timeout';
  if (f.status !== null && f.status >= 500) return 'transient';
  if (NETWORK_RE.test(f.text) || (f.http && f.status === null)) return 'transient';
  // JSON-RPC: method not found / not supported / invalid params / invalid request will not get
  // better by retrying.
  if (f.code === -32601 || f.code === -32602 || f.code === -32600 || f.code === -32004) return 'fatal';
  if (METHOD_MISSING_RE.test(f.text)) return 'fatal';
  if (f.status !== null && f.status >= 400 && f.status < 500) return 'fatal';
  return 'transient';
}

// ------------------------------------------------------------------ "range too large": what the node would accept

/**
 * What a "range too large" error says the node would accept: a block range to ask instead
 * (`from`..`to`: Alchemy's "this block range should work: [0x…, 0x…]", Infura's `data.from/to`,
 * reth's "retry with the range a-b") or a hard limit on the width (`limit`: QuickNode's "limited to
 * a 10,000 range", "exceeds limit of 10000", "range limit 2000", "max block range 5000").
 */
export interface RangeHint {
  from?: number;
  to?: number;
  limit?: number;
}

function num(s: string): number | null {
  const t = s.replace(/[,_]/g, '').toLowerCase();
  const k = t.endsWith('k');
  const n = k ? Number(t.slice(0, -1)) * 1000 : t.startsWith('0x') ? Number.parseInt(t, 16) : Number(t);
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

const SUGGESTED_RANGE_RES = [
  /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/, // Alchemy, zkSync: [0x.., 0x..]
  /retry with the range (\d+)\s*-\s*(\d+)/, // reth
];
const LIMIT_RES = [
  /limited to an? ([\d,]+k?) (?:block )?range/, // QuickNode
  /exceeds (?:the )?limit of ([\d,]+k?)/, // Infura (-32602)
  /range limit(?: of)?:? ([\d,]+k?)/, // Tenderly and others
  /max(?:imum)? (?:block )?range(?: is| of)?:? ([\d,]+k?)/, // reth, Cloudflare-like, Ankr-like
  /up to an? ([\d,]+k?) block range/, // Alchemy's explanation (only when no range is named)
  /ranges? over ([\d,]+k?) blocks/, // dRPC-like
];

/** The range or limit an error names (walks the cause chain, its `data` objects included). */
export function rangeHint(err: unknown): RangeHint {
  const { text, dataRange } = errorFacts(err);
  if (dataRange) return dataRange;
  // Infura's data object travels inside viem's `details` JSON text for an HTTP error body.
  const infura = /"from":"(0x[0-9a-f]+)".*?"to":"(0x[0-9a-f]+)"/.exec(text);
  for (const m of [...SUGGESTED_RANGE_RES.map((re) => re.exec(text)), infura]) {
    if (!m) continue;
    const from = num(m[1]!);
    const to = num(m[2]!);
    if (from !== null && to !== null && to >= from) return { from, to };
  }
  for (const re of LIMIT_RES) {
    const m = re.exec(text);
    const limit = m ? num(m[1]!) : null;
    if (limit !== null && limit > 0) return { limit };
  }
  return {};
}

// ------------------------------------------------------------------ Solana (@solana/kit) errors

const FATAL_JSONRPC = new Set([-32600, -32601, -32602, -32700, -32015]);
const FATAL_TEXT_RE = /invalid param|method not found|unsupported transaction version/;

/** Classifies a Solana RPC failure (no range class: signature pages have a fixed size). */
export function classifySolanaError(err: unknown): Exclude<RpcErrorClass, 'range'> {
  let e: unknown = err;
  for (let depth = 0; e && depth < 8; depth++) {
    const o = e as {
      context?: Record<string, unknown>;
      status?: unknown;
      message?: unknown;
      cause?: unknown;
      name?: unknown;
    };
    if (e instanceof RpcTimeout || o.name === 'TimeoutError') return 'timeout';
    const status =
      typeof o.context?.statusCode === 'number'
        ? o.context.statusCode
        : typeof o.status === 'number'
          ? o.status
          : null;
    if (status !== null) {
      if (status === 429) return 'rate_limited';
      if (status === 408 || status === 504) return 'timeout';
      if (status >= 500) return 'transient';
      if (status >= 400) return 'fatal';
    }
    const code = typeof o.context?.__code === 'number' ? o.context.__code : null;
    if (code !== null && FATAL_JSONRPC.has(code)) return 'fatal';
    if (typeof o.message === 'string') {
      const m = o.message.toLowerCase();
      if (FATAL_TEXT_RE.test(m)) return 'fatal';
      if (TIMEOUT_RE.test(m)) return 'timeout';
    }
    e = o.cause;
  }
  return 'transient';
}
