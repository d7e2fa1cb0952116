/**
 * The data-access interface's types, shared by `Database` users (through ./database.ts) and by
 * the two drivers (./postgres.ts, ./pglite.ts) without an import circle.
 */
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
  /**
   * Raw bulk load of CSV text into `table` (`COPY … FROM '/dev/blob'`), on the handle's own
   * session (inside its transaction for a transaction's handle): PGlite only (the `pg` driver has
   * no COPY FROM STDIN without an extra package). Trusted identifiers only; no conflict handling.
   * The ingest stages a batch's ratings with it (src/store/ratings.ts); the scale bench uses it as
   * the reference for the ingest's write path.
   */
  copyCsv?(table: string, columns: readonly string[], csv: string): Promise<void>;
}

export type LockResult<R> = { acquired: true; value: R } | { acquired: false };

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
  close(): Promise<void>;
}

/** The read handle of a database (its replica pool when it has one, else the database itself). */
