/**
 * A Database whose connection can be "cut" in process, on PGlite and PostgreSQL alike: while cut,
 * every call (queries, transactions, the reader, statements inside an open transaction) fails as a
 * refused connection does (`ECONNREFUSED`). The PostgreSQL-only tests cut a real connection with
 * helpers/pg-proxy.ts instead.
 */
import type { Database, Queryable, QueryOptions, Row } from '../../src/db/database.js';

export interface FaultyDatabase {
  db: Database;
  cut(): void;
  restore(): void;
  /** The next transaction only fails (a database that blinks once, then answers again). */
  failNextTransaction(): void;
  /**
   * The next statement whose SQL matches `sql` runs (and commits, outside a transaction), then the
   * database is cut and the statement fails as a dropped connection does: a write the server made
   * whose answer never came back.
   */
  cutAfter(sql: RegExp): void;
  readonly isCut: boolean;
}

export function faultyDatabase(inner: Database): FaultyDatabase {
  let cut = false;
  let failTransaction = false;
  let cutAfter: RegExp | null = null;
  const check = () => {
    if (cut) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  };
  const wrap = (q: Queryable): Queryable => ({
    async query<T extends Row = Row>(sql: string, params?: readonly unknown[], opts?: QueryOptions) {
      check();
      const rows = await q.query<T>(sql, params, opts);
      if (cutAfter?.test(sql)) {
        cutAfter = null;
        cut = true;
        throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
      }
      return rows;
    },
    async exec(sql) {
      check();
      return q.exec(sql);
    },
  });
  const db: Database = {
    kind: inner.kind,
    ...wrap(inner),
    reader: () => wrap(inner.reader?.() ?? inner),
    async transaction(fn) {
      check();
      if (failTransaction) {
        failTransaction = false;
        throw Object.assign(new Error('Connection terminated unexpectedly'), { code: 'ECONNRESET' });
      }
      return inner.transaction((tx) => fn(wrap(tx)));
    },
    async tryWithLock(name, fn) {
      check();
      return inner.tryWithLock(name, fn);
    },
    close: () => inner.close(),
  };
  return {
    db,
    cut: () => {
      cut = true;
    },
    restore: () => {
      cut = false;
    },
    failNextTransaction: () => {
      failTransaction = true;
    },
    cutAfter: (sql) => {
      cutAfter = sql;
    },
    get isCut() {
      return cut;
    },
  };
}
