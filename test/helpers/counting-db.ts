/** A Database whose every query, exec and transaction is counted (proves a route did no work). */
import type { Database } from '../../src/db/database.js';

export function countingDb(db: Database): Database & { calls: () => number } {
  let calls = 0;
  const wrapped = {
    kind: db.kind,
    query: (sql: string, params?: readonly unknown[]) => {
      calls += 1;
      return db.query(sql, params);
    },
    exec: (sql: string) => {
      calls += 1;
      return db.exec(sql);
    },
    transaction: <R>(fn: Parameters<Database['transaction']>[0]) => {
      calls += 1;
      return db.transaction(fn) as Promise<R>;
    },
    tryWithLock: db.tryWithLock.bind(db),
    close: async () => undefined,
    calls: () => calls,
  };
  return wrapped as unknown as Database & { calls: () => number };
}
