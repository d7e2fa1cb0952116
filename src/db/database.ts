/**
 * The single data-access module. It hides whether the embedded PGlite or a PostgreSQL server is
 * in use and normalizes what the two drivers return differently, so callers never branch:
 *  - int8 (BIGINT, count(*)) → number when it is a safe integer, bigint otherwise (PGlite's rule);
 *  - NUMERIC → exact decimal string (both drivers already agree);
 *  - TIMESTAMPTZ → Date; JSONB → parsed value; arrays → JS arrays.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import pg from 'pg';
import lockfile from 'proper-lockfile';
import {
  PGlite,
  parse as pgliteParse,
  protocol as pgliteProtocol,
  types as pgliteTypes,
} from '@electric-sql/pglite';
import { noteStatement, noteWrite } from './write-epoch.js';
import { logger } from '../log.js';
import { registerDbPool } from './pool-registry.js';

export type Row = Record<string, unknown>;

export interface QueryOptions {
  /**
   * Keep this statement's plan warm: on PostgreSQL a named prepared statement per connection
   * (parsed and planned once; the server moves to a generic plan after five executions when it is
   * no dearer); on PGlite a statement prepared once in its one session. For the fixed statements
   * of the paid answers (a few, constant texts), never for SQL built from input.
   */
  prepare?: boolean;
}

export interface Queryable {
  /** Parameterised query ($1, $2, …); returns the rows. */
  query<T extends Row = Row>(sql: string, params?: readonly unknown[], opts?: QueryOptions): Promise<T[]>;
  /** Runs one or more statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

type LockResult<R> = { acquired: true; value: R } | { acquired: false };

export interface Database extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs fn in one transaction: committed when it resolves, rolled back when it throws. */
  transaction<R>(fn: (tx: Queryable) => Promise<R>): Promise<R>;
  /**
   * Runs fn while holding an exclusive lock named `name`, shared by every process on the same
   * database (a PostgreSQL session advisory lock; in-process on PGlite, whose data directory is
   * already owned by one process). Returns `{acquired:false}` at once when the lock is held.
   */
  tryWithLock<R>(name: string, fn: () => Promise<R>): Promise<LockResult<R>>;
  /**
   * Where free read routes may read: a second pool on DATABASE_READ_URL (a replica, possibly a
   * little behind the primary) when one was given, this database otherwise. Writes, payments,
   * paid routes and the indexer never use it. Optional so hand-made test doubles need not supply
   * it; call `readerOf(db)`.
   */
  reader?(): Queryable;
  /**
   * Raw bulk load of CSV text into `table` (`COPY … FROM '/dev/blob'`): PGlite only (the `pg`
   * driver has no COPY FROM STDIN without an extra package). Trusted identifiers only; no
   * conflict handling. The scale bench uses it as the reference for the ingest's write path.
   */
  copyCsv?(table: string, columns: readonly string[], csv: string): Promise<void>;
  close(): Promise<void>;
}

/** The read handle of a database (its replica pool when it has one, else the database itself). */
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

export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
}

/** The prepared-statement name of a statement text (stable per text, per process). */
const statementNames = new Map<string, string>();
function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `ri_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
    statementNames.set(sql, name);
  }
  return name;
}

let warnedUnprepared = false;
function warnUnprepared(): void {
  if (warnedUnprepared) return;
  warnedUnprepared = true;
  logger('db').warn(
    'a prepared statement was missing on its PostgreSQL connection (DEALLOCATE, or a pooler in transaction ' +
      'mode between repindex and PostgreSQL); such calls fall back to unprepared statements',
  );
}

function parseInt8(value: string): number | bigint {
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : BigInt(value);
}

// Advisory-lock key: the lock name scoped by the current schema, so two indexes that share one
// PostgreSQL database in different schemas never block each other.
const LOCK_KEY_SQL = "hashtext(current_schema() || ':' || $1)";

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

// ---------------------------------------------------------------- PostgreSQL

function openPostgres(url: string, readUrl: string | null): Database {
  const typeParsers = {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === 20) return parseInt8;
      return pg.types.getTypeParser(oid, format as 'text');
    },
  } as pg.CustomTypesConfig;
  // A server that never answers fails the first query after 10 s instead of hanging start-up.
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    types: typeParsers,
    connectionTimeoutMillis: 10_000,
  });
  // An idle client that errors (server restart) must not crash the process.
  pool.on('error', (err) => logger('db').error({ err: err.message }, 'idle PostgreSQL client error'));
  // The replica pool (lazy: no connection until the first read). An application_name in the
  // URL wins over this default, which lets an operator tell the pools apart in pg_stat_activity.
  const readPool = readUrl
    ? new pg.Pool({
        connectionString: readUrl,
        max: 10,
        types: typeParsers,
        application_name: 'repindex-read',
      })
    : null;
  readPool?.on('error', (err) =>
    logger('db').error({ err: err.message }, 'idle PostgreSQL read-replica client error'),
  );
  registerDbPool('primary', pool);
  registerDbPool('read', readPool);

  const on = (c: pg.Pool | pg.PoolClient): Queryable => ({
    async query<T extends Row>(sql: string, params?: readonly unknown[], opts?: QueryOptions) {
      noteStatement(sql);
      if (opts?.prepare) {
        try {
          const r = await c.query({
            name: statementName(sql),
            text: sql,
            values: params as unknown[] | undefined,
          });
          return r.rows as T[];
        } catch (e) {
          // 26000: the connection lost a statement the driver thinks it holds (DEALLOCATE); 42P05:
          // the server connection already holds that name (a pooler such as PgBouncer in
          // transaction mode hands it around). Either way: answer with the plain query.
          const code = (e as { code?: string }).code;
          if (code !== '26000' && code !== '42P05') throw e;
          warnUnprepared();
        }
      }
      const r = await c.query(sql, params as unknown[] | undefined);
      return r.rows as T[];
    },
    async exec(sql: string) {
      noteWrite();
      await c.query(sql);
    },
  });
  const base = on(pool);
  const read = readPool ? on(readPool) : null;
  // A client checked out of the pool (a transaction, a held lock) whose connection dies between two
  // statements emits 'error' on itself, not on the pool: without a listener the process crashes.
  // Its statements fail anyway (the caller answers 503); the pool drops it on release.
  const onClientError = (err: Error) =>
    logger('db').warn({ err: err.message }, 'PostgreSQL connection lost while checked out');
  const checkout = async (): Promise<pg.PoolClient> => {
    const client = await pool.connect();
    client.on('error', onClientError);
    const release = client.release.bind(client);
    client.release = (err?: Error | boolean) => {
      client.removeListener('error', onClientError);
      release(err);
    };
    return client;
  };
  const self: Database = {
    kind: 'postgres',
    ...base,
    reader: () => read ?? self,
    async transaction(fn) {
      const client = await checkout();
      try {
        await client.query('BEGIN');
        const out = await fn(on(client));
        await client.query('COMMIT');
        noteWrite();
        return out;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw e;
      } finally {
        client.release();
      }
    },
    async tryWithLock(name, fn) {
      const client = await checkout();
      try {
        const [row] = (await client.query(`SELECT pg_try_advisory_lock(${LOCK_KEY_SQL}) AS ok`, [name]))
          .rows as {
          ok: boolean;
        }[];
        if (!row?.ok) return { acquired: false };
        try {
          return { acquired: true, value: await fn() };
        } finally {
          await client.query(`SELECT pg_advisory_unlock(${LOCK_KEY_SQL})`, [name]).catch(() => undefined);
        }
      } finally {
        client.release();
      }
    },
    async close() {
      registerDbPool('primary', null);
      if (readPool) registerDbPool('read', null);
      await Promise.all([pool.end(), readPool?.end()]);
    },
  };
  return self;
}

// ---------------------------------------------------------------- PGlite

const lockPath = (dir: string) => `${dir}/.repindex.lock`;
const pidPath = (dir: string) => `${dir}/.repindex.pid`;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
}

/**
 * Takes the data-directory lock. A lock left by a process that died (kill -9) would otherwise
 * block a restart until it goes stale; the holder's pid file tells a dead holder from a live one.
 */
async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const opts = { lockfilePath: lockPath(dir), stale: 30_000, update: 10_000 };
  let release: () => Promise<void>;
  try {
    release = await lockfile.lock(dir, opts);
  } catch (e) {
    if ((e as { code?: string }).code !== 'ELOCKED') throw e;
    let holder = NaN;
    try {
      holder = Number(readFileSync(pidPath(dir), 'utf8').trim());
    } catch {
      throw e;
    }
    if (!Number.isInteger(holder) || holder === process.pid || processAlive(holder)) throw e;
    rmSync(lockPath(dir), { recursive: true, force: true });
    release = await lockfile.lock(dir, opts);
  }
  writeFileSync(pidPath(dir), String(process.pid));
  return async () => {
    rmSync(pidPath(dir), { force: true });
    await release();
  };
}

const PGLITE_PARSERS = { [pgliteTypes.INT8]: parseInt8 };

/**
 * A new in-memory PGlite with this module's type parsing, empty or loaded from a `dumpDataDir()`
 * tarball. Wrap it with {@link pgliteDatabase}.
 */
export function newMemoryPglite(loadDataDir?: Blob): Promise<PGlite> {
  return PGlite.create({ parsers: PGLITE_PARSERS, ...(loadDataDir ? { loadDataDir } : {}) });
}

async function openPglite(dataDir: string, loadDataDir?: Blob): Promise<Database> {
  if (dataDir.startsWith('memory://')) {
    const db = await newMemoryPglite(loadDataDir);
    return pgliteDatabase(db, () => db.close());
  }
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true });
  // PGlite takes no lock of its own: two processes on one directory silently lose rows.
  let releaseLock: () => Promise<void>;
  try {
    releaseLock = await lockDataDir(dir);
  } catch (e) {
    if ((e as { code?: string }).code === 'ELOCKED') {
      throw new DataDirLockedError(
        `The data directory ${dir} is in use by another repindex process (for example a running ` +
          '"serve", which already runs the indexer). Stop it, or use PostgreSQL (DATABASE_URL) to run ' +
          'several processes on one index.',
      );
    }
    throw e;
  }
  let db: PGlite;
  try {
    db = await PGlite.create({ dataDir: dir, parsers: PGLITE_PARSERS });
  } catch (e) {
    await releaseLock();
    throw e;
  }
  return pgliteDatabase(db, async () => {
    try {
      await db.close();
    } finally {
      await releaseLock().catch(() => undefined);
    }
  });
}

/** Statement names already prepared in each PGlite instance's one session. */
const pglitePrepared = new WeakMap<PGlite, Set<string>>();

/** A query parameter as the text the server parses (what PGlite's own query sends). */
function pgliteParam(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v)) return pgArrayLiteral(v);
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

/** A one-dimensional array as PostgreSQL's array text: every element quoted, NULL for null. */
function pgArrayLiteral(items: readonly unknown[]): string {
  const el = (x: unknown): string => {
    const t = pgliteParam(x);
    return t === null ? 'NULL' : `"${t.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  };
  return `{${items.map(el).join(',')}}`;
}

/**
 * A named prepared statement on PGlite (its `query` always parses and plans an unnamed one): Parse
 * once per instance, then Bind/Describe/Execute/Sync, run exclusively so no transaction of another
 * caller interleaves. A session that lost the statement (26000) prepares it again once.
 */
async function pglitePreparedQuery<T extends Row>(
  db: PGlite,
  sql: string,
  params: readonly unknown[] | undefined,
): Promise<T[]> {
  const { serialize } = pgliteProtocol;
  let names = pglitePrepared.get(db);
  if (!names) {
    names = new Set();
    pglitePrepared.set(db, names);
  }
  const name = statementName(sql);
  const run = async (prepare: boolean): Promise<T[]> => {
    const parts: Uint8Array[] = [];
    if (prepare) parts.push(serialize.parse({ name, text: sql, types: [] }));
    parts.push(
      serialize.bind({ statement: name, values: (params ?? []).map(pgliteParam) }),
      serialize.describe({ type: 'P' }),
      serialize.execute({}),
      serialize.sync(),
    );
    const message = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      message.set(p, at);
      at += p.length;
    }
    const { messages } = await db.execProtocol(message);
    names.add(name);
    return (pgliteParse.parseResults(messages, db.parsers)[0]?.rows ?? []) as T[];
  };
  return db.runExclusive(async () => {
    const known = names.has(name);
    try {
      return await run(!known);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (known && code === '26000') {
        names.delete(name);
        return run(true);
      }
      if (!known && code === '42P05') {
        names.add(name); // prepared by an earlier holder of this instance
        return run(false);
      }
      throw e;
    }
  });
}

/**
 * The Database over a PGlite instance; `close()` runs `onClose` once (the instance's owner decides
 * what closing means: the test suite hands instances back to a pool). After close every call
 * through this handle, its reader and its transactions throws, even while the instance lives on.
 */
export function pgliteDatabase(db: PGlite, onClose: () => Promise<void>): Database {
  let closed: Promise<void> | null = null;
  const open = () => {
    if (closed) throw new Error('the database is closed');
  };
  const heldLocks = new Set<string>();
  const on = (c: Pick<PGlite, 'query' | 'exec'>, top = false): Queryable => ({
    async query<T extends Row>(sql: string, params?: readonly unknown[], opts?: QueryOptions) {
      open();
      noteStatement(sql);
      // prepared only outside a transaction (a transaction's statements run on its own handle)
      if (opts?.prepare && top) return pglitePreparedQuery<T>(db, sql, params);
      const r = await c.query<T>(sql, params as unknown[] | undefined);
      return r.rows;
    },
    async exec(sql: string) {
      open();
      noteWrite();
      await c.exec(sql);
    },
  });
  const base = on(db, true);
  const self: Database = {
    kind: 'pglite',
    ...base,
    reader: () => self,
    async copyCsv(table, columns, csv) {
      open();
      noteWrite();
      await db.query(`COPY ${table} (${columns.join(', ')}) FROM '/dev/blob' WITH (FORMAT csv)`, [], {
        blob: new Blob([csv]),
      });
    },
    async transaction(fn) {
      open();
      try {
        return await db.transaction((tx) => fn(on(tx)));
      } finally {
        noteWrite();
      }
    },
    async tryWithLock(name, fn) {
      if (heldLocks.has(name)) return { acquired: false };
      heldLocks.add(name);
      try {
        return { acquired: true, value: await fn() };
      } finally {
        heldLocks.delete(name);
      }
    },
    close() {
      closed ??= onClose();
      return closed;
    },
  };
  return self;
}
