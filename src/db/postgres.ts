/**
 * The PostgreSQL driver behind `Database` (./database.ts): a pool for the primary and one for an
 * optional read replica, prepared statements named per text, a connection loss classed as
 * "database unavailable", advisory locks scoped by schema.
 */
import pg from 'pg';
import type { Database, QueryOptions, Queryable, Row } from './database-types.js';
import { LOCK_KEY_SQL, parseInt8, statementName, warnUnprepared } from './driver-shared.js';
import { registerDbPool } from './pool-registry.js';
import { noteStatement, noteWrite } from './write-epoch.js';
import { logger } from '../log.js';

export function openPostgres(url: string, readUrl: string | null): Database {
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
