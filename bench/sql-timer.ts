/**
 * A statement timer for the write-side benches (bench/coldstart/sql-timing.ts,
 * bench/write-profile.ts): `timed(db)` wraps a database (and every transaction it opens) so that
 * each `query`/`exec` adds its time to `times`, keyed by the statement's first `keyLength`
 * characters with its whitespace collapsed.
 */
import type { Queryable } from '../src/db/database.js';

export function statementTimer(keyLength: number) {
  const times = new Map<string, { n: number; ms: number }>();
  const key = (sql: string) => sql.replace(/\s+/g, ' ').trim().slice(0, keyLength);

  function timed<Q extends Queryable>(q: Q): Q {
    return new Proxy(q, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (prop === 'query' || prop === 'exec')
          return async (sql: string, ...rest: unknown[]) => {
            const t0 = performance.now();
            try {
              return await (v as (...a: unknown[]) => Promise<unknown>).call(target, sql, ...rest);
            } finally {
              const e = times.get(key(sql)) ?? { n: 0, ms: 0 };
              e.n++;
              e.ms += performance.now() - t0;
              times.set(key(sql), e);
            }
          };
        if (prop === 'transaction')
          return (fn: (tx: Queryable) => Promise<unknown>) =>
            (v as (f: typeof fn) => Promise<unknown>).call(target, (tx) => fn(timed(tx)));
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }
  return { times, timed };
}
