/**
 * The embedded PGlite driver behind `Database` (./database.ts): a data directory locked against a
 * second process (a dead holder's lock is taken over) and, when new, made by a child process
 * (./pglite-initdb.ts), or an in-memory database for tests;
 * statements prepared once per text, parameters passed as PostgreSQL text.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import lockfile from 'proper-lockfile';
import {
  PGlite,
  parse as pgliteParse,
  protocol as pgliteProtocol,
  types as pgliteTypes,
} from '@electric-sql/pglite';
import type { Database, QueryOptions, Queryable, Row } from './database-types.js';
import { parseInt8, statementName } from './driver-shared.js';
import { ensurePgliteDataDir } from './pglite-initdb.js';
import { noteStatement, noteWrite } from './write-epoch.js';

export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
}

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
 * PGlite's own start parameters, plus two for a data folder on disk:
 *  - WAL buffers of 16 MB (PGlite's default is 1/32 of its 160 MB of shared buffers, 5 MB; 16 MB
 *    is what PostgreSQL's own sizing would stop at, one WAL segment). PGlite runs PostgreSQL as
 *    one process, without a WAL writer: once the WAL buffers are full, every new WAL page first
 *    writes out the oldest, one 8 kB write (a synchronous Node `fs` call) at a time. A batch of
 *    the indexer writes about 3 MB of WAL on average; with room for a whole batch, its WAL goes
 *    out in a few large writes at COMMIT. At scale 0.05 of `npm run bench:coldstart`, 64 MB cut
 *    the time in those writes from 12.3 s to 8.7 s (same WAL, 1 GB) but added ~80 MB to the
 *    peak RSS; 16 MB costs at most 11 MB more than the default.
 *  - no full-page images in the WAL (`full_page_writes=off`): they guard against a page torn by
 *    an operating-system crash or a power loss, which PGlite does not survive anyway (it runs with
 *    `fsync=off`); a killed process leaves no torn page (its writes are whole in the kernel's page
 *    cache). With them, every page first touched after a checkpoint (the indexer's CHECKPOINT every
 *    100,000 events, src/indexer/pass-statistics.ts) went into the WAL whole: +18 % of WAL.
 */
const ON_DISK_START_PARAMS = [
  ...(PGlite as unknown as { defaultStartParams: readonly string[] }).defaultStartParams,
  '-c',
  'wal_buffers=16MB',
  '-c',
  'full_page_writes=off',
];

/**
 * A new in-memory PGlite with this module's type parsing, empty or loaded from a `dumpDataDir()`
 * tarball. Wrap it with {@link pgliteDatabase}.
 */
export function newMemoryPglite(loadDataDir?: Blob): Promise<PGlite> {
  return PGlite.create({ parsers: PGLITE_PARSERS, ...(loadDataDir ? { loadDataDir } : {}) });
}

export async function openPglite(dataDir: string, loadDataDir?: Blob): Promise<Database> {
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
    await ensurePgliteDataDir(dir); // a new folder's initdb runs in a child process
    db = await PGlite.create({ dataDir: dir, parsers: PGLITE_PARSERS, startParams: ON_DISK_START_PARAMS });
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
    async copyCsv(table: string, columns: readonly string[], csv: string) {
      open();
      noteWrite();
      await c.query(`COPY ${table} (${columns.join(', ')}) FROM '/dev/blob' WITH (FORMAT csv)`, [], {
        blob: new Blob([csv]),
      });
    },
  });
  const base = on(db, true);
  const self: Database = {
    kind: 'pglite',
    ...base,
    reader: () => self,
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
