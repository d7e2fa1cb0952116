/**
 * The single data-access interface; its two drivers are ./postgres.ts and ./pglite.ts. It hides
 * whether the embedded PGlite or a PostgreSQL server is in use and normalizes what the two
 * drivers return differently, so callers never branch:
 *  - int8 (BIGINT, count(*)) → number when it is a safe integer, bigint otherwise (PGlite's rule);
 *  - NUMERIC → exact decimal string (both drivers already agree);
 *  - TIMESTAMPTZ → Date; JSONB → parsed value; arrays → JS arrays.
 */
import { openPglite } from './pglite.js';
import { openPostgres } from './postgres.js';

export { DataDirLockedError, newMemoryPglite, pgliteDatabase } from './pglite.js';
export type { Database, LockResult, QueryOptions, Queryable, Row } from './database-types.js';
import type { Database, Queryable } from './database-types.js';

export function readerOf(db: Database): Queryable {
  return db.reader?.() ?? db;
}

/** Socket-level error codes (node) that mean the database server cannot be talked to. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  // PostgreSQL: admin_shutdown, crash_shutdown, cannot_connect_now, too_many_connections
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);
/** Messages of pg, pg-pool, PGlite and this module when the connection is gone (no code). */
const UNAVAILABLE_MESSAGE =
  /^(Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|timeout exceeded when trying to connect|Cannot use a pool after calling end|PGlite is clos|the database is closed)/;

/**
 * Whether an error means the database cannot be reached right now (server stopped, connection
 * dropped or refused, pool timeout, PGlite closed), as opposed to a bad statement or bad data.
 * The HTTP door answers these `503 database_unavailable` with `Retry-After`, never a 500. Walks
 * `cause` and AggregateError members (pg's happy-eyeballs connect).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  const seen = new Set<unknown>();
  const walk = (e: unknown, depth: number): boolean => {
    if (depth > 8 || e === null || typeof e !== 'object' || seen.has(e)) return false;
    seen.add(e);
    const o = e as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
    if (typeof o.code === 'string' && (UNAVAILABLE_CODES.has(o.code) || /^08[0-9A-Z]{3}$/.test(o.code)))
      return true;
    if (typeof o.message === 'string' && UNAVAILABLE_MESSAGE.test(o.message)) return true;
    if (Array.isArray(o.errors) && o.errors.some((x) => walk(x, depth + 1))) return true;
    return walk(o.cause, depth + 1);
  };
  return walk(err, 0);
}

/**
 * The SQLSTATE of a statement the database refused (pg's and PGlite's errors carry `severity` and
 * a five-character `code`), walking `cause`; null for anything else (an RPC error, a bug).
 */
export function databaseErrorCode(err: unknown): string | null {
  let e: unknown = err;
  for (let depth = 0; depth < 8 && e !== null && typeof e === 'object'; depth++) {
    const o = e as { code?: unknown; severity?: unknown; cause?: unknown };
    if (typeof o.severity === 'string' && typeof o.code === 'string' && /^[0-9A-Z]{5}$/.test(o.code))
      return o.code;
    e = o.cause;
  }
  return null;
}

/**
 * Whether a transaction lost to another one and may simply run again: a deadlock (40P01) or a
 * serialization failure (40001). PostgreSQL rolled it back whole, so nothing of it remains.
 */
export function isTransactionConflict(err: unknown): boolean {
  const code = databaseErrorCode(err);
  return code === '40P01' || code === '40001';
}

/** Seconds a client is asked to wait (`Retry-After`) after `503 database_unavailable`. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** The body of `503 database_unavailable` (every route that needs the database, paid or free). */
export function databaseUnavailableBody(message?: string): {
  error: 'database_unavailable';
  message: string;
  retryable: true;
  retry_after_seconds: number;
} {
  return {
    error: 'database_unavailable',
    message:
      message ??
      'The database cannot be reached right now. Nothing was verified, settled or charged: retry the identical request (with the SAME X-PAYMENT, if any) after Retry-After.',
    retryable: true,
    retry_after_seconds: DATABASE_RETRY_AFTER_SECONDS,
  };
}

interface OpenOptions {
  /** postgres://… ; when null the embedded PGlite is used. */
  databaseUrl: string | null;
  /** PGlite data directory, or 'memory://' for an in-memory database (tests). */
  dataDir: string;
  /** postgres://… of a read replica for `reader()`; only with databaseUrl. */
  databaseReadUrl?: string | null;
  /** In-memory PGlite only: start from this data directory (a PGlite `dumpDataDir()` tarball). */
  loadDataDir?: Blob;
}

export async function openDatabase(opts: OpenOptions): Promise<Database> {
  if (opts.databaseReadUrl && !opts.databaseUrl) {
    throw new Error('a read replica (DATABASE_READ_URL) needs a PostgreSQL primary (DATABASE_URL)');
  }
  if (opts.loadDataDir && (opts.databaseUrl || !opts.dataDir.startsWith('memory://'))) {
    throw new Error('loadDataDir needs an in-memory PGlite (no databaseUrl, dataDir memory://)');
  }
  return opts.databaseUrl
    ? openPostgres(opts.databaseUrl, opts.databaseReadUrl ?? null)
    : openPglite(opts.dataDir, opts.loadDataDir);
}
