/**
 * A Database whose connection can be "cut" in process, on PGlite and PostgreSQL alike: while cut,
 * every call (queries, transactions, the reader, statements inside an open transaction) fails as a
 * refused connection does (`ECONNREFUSED`). The PostgreSQL-only tests cut a real connection with
 * helpers/pg-proxy.ts instead.
 */
import type { Database, Queryable } from '../../src/db/database.js';

export interface FaultyDatabase {
  db: Database;
  cut(): void;
  restore(): void;
  /** The next transaction only fails (a database that blinks once, then answers again). */
  failNextTransaction(): void;
  readonly isCut: boolean;
}

export function faultyDatabase(inner: Database): FaultyDatabase {
  let cut = false;
  let failTransaction = false;
  const check = () => {
    if (cut) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  };
  const wrap = (q: Queryable): Queryable => ({
    async query(sql, params, opts) {
      check();
      return q.query(sql, params, opts);
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
    get isCut() {
      return cut;
    },
  };
}
