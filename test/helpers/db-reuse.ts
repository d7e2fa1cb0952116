/**
 * What lets the suite reuse a closed test database instead of creating the next one (a PGlite
 * instance: helpers/db-template.ts; a PostgreSQL schema: helpers/db.ts): a fingerprint of its
 * schema, compared with a freshly migrated one's, and the statement that empties its tables.
 * A database is only reused when the fingerprints are equal: every relation, column, default,
 * index, constraint, trigger, function, view, policy, setting and recorded migration.
 */

/** Runs a catalog query (PGlite instance or pg client) and returns its rows. */
export type CatalogQuery = <T>(sql: string, params?: unknown[]) => Promise<T[]>;

/** A freshly migrated schema: its fingerprint, and the query that names the tables a test left
 * rows in or drew an id for (names unqualified: run it with the schema first on the search_path). */
export interface SchemaShape {
  fingerprint: string;
  dirty: string;
}

// $1: the schema to fingerprint (resolved through the session's search_path, so names print
// unqualified and two schemas compare equal), or null for every user schema of the database (an
// embedded PGlite, where a test could also have created another schema).
const FINGERPRINT_SQL = `
WITH u AS (SELECT oid, nspname FROM pg_namespace
           WHERE ($1::text IS NULL AND nspname NOT IN ('pg_catalog', 'information_schema')
                  AND nspname NOT LIKE 'pg\\_%') OR nspname = $1::text),
     rel AS (SELECT c.oid FROM pg_class c WHERE c.relnamespace IN (SELECT oid FROM u))
SELECT md5(string_agg(x, E'\\n' ORDER BY x)) AS fp FROM (
  SELECT 'n ' || nspname FROM u WHERE $1::text IS NULL
  UNION ALL SELECT 'e ' || extname || ' ' || extversion FROM pg_extension
  UNION ALL SELECT 'c ' || c.oid::regclass::text || ' ' || c.relkind::text || c.relpersistence::text || ' '
                   || coalesce(array_to_string(c.reloptions, ','), '') || ' ' || c.relrowsecurity
            FROM pg_class c WHERE c.oid IN (SELECT oid FROM rel)
  UNION ALL SELECT 'a ' || a.attrelid::regclass::text || ' ' || a.attname || ' '
                   || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull || ' '
                   || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
            FROM pg_attribute a
            LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE a.attrelid IN (SELECT oid FROM rel) AND a.attnum > 0 AND NOT a.attisdropped
  UNION ALL SELECT 'i ' || pg_get_indexdef(i.indexrelid) FROM pg_index i
            WHERE i.indexrelid IN (SELECT oid FROM rel)
  UNION ALL SELECT 'k ' || conrelid::regclass::text || ' ' || conname || ' ' || pg_get_constraintdef(oid)
                   || ' ' || convalidated
            FROM pg_constraint WHERE connamespace IN (SELECT oid FROM u)
  UNION ALL SELECT 't ' || tgrelid::regclass::text || ' ' || tgname || ' ' || tgenabled::text || ' '
                   || pg_get_triggerdef(oid)
            FROM pg_trigger WHERE NOT tgisinternal AND tgrelid IN (SELECT oid FROM rel)
  UNION ALL SELECT 'p ' || oid::regprocedure::text || ' ' || md5(prosrc) || ' ' || provolatile::text
            FROM pg_proc WHERE pronamespace IN (SELECT oid FROM u)
  UNION ALL SELECT 'v ' || c.oid::regclass::text || ' ' || md5(pg_get_viewdef(c.oid))
            FROM pg_class c WHERE c.relkind IN ('v', 'm') AND c.oid IN (SELECT oid FROM rel)
  UNION ALL SELECT 'r ' || polname FROM pg_policy WHERE polrelid IN (SELECT oid FROM rel)
  UNION ALL SELECT 's ' || array_to_string(setconfig, ',') FROM pg_db_role_setting
  UNION ALL SELECT 'm ' || id FROM schema_migrations
) AS f(x)`;

/** The fingerprint of `schema` (null: every user schema), as the session's search_path sees it. */
export async function schemaFingerprint(q: CatalogQuery, schema: string | null): Promise<string> {
  const [row] = await q<{ fp: string }>(FINGERPRINT_SQL, [schema]);
  return row!.fp;
}

/**
 * A freshly migrated `schema`'s shape; `scope` is what {@link schemaFingerprint} covers. Its
 * `dirty` query lists the tables holding a row or whose own sequence has handed out a value:
 * one EXISTS per table, a few milliseconds, where a TRUNCATE of all of them gives every table and
 * index a new file (40-120 ms on PGlite, most of them empty).
 */
export async function describeSchema(
  q: CatalogQuery,
  schema: string,
  scope: string | null,
): Promise<SchemaShape> {
  const tables = await q<{ t: string; seqs: string[] | null }>(
    `SELECT t.relname AS t,
            (SELECT array_agg(s.relname ORDER BY s.relname) FROM pg_depend d
               JOIN pg_class s ON s.oid = d.objid AND s.relkind = 'S'
              WHERE d.refobjid = t.oid AND d.classid = 'pg_class'::regclass AND d.deptype IN ('a', 'i')) AS seqs
       FROM pg_class t JOIN pg_namespace n ON n.oid = t.relnamespace
      WHERE n.nspname = $1 AND t.relkind IN ('r', 'p') AND t.relname <> 'schema_migrations'
      ORDER BY t.relname`,
    [schema],
  );
  if (tables.length === 0) throw new Error(`the migrated schema ${schema} has no tables`);
  const lit = (name: string) => `'${name.replace(/'/g, "''")}'`;
  const dirty = tables
    .map(({ t, seqs }) => {
      const used = (seqs ?? []).map((sq) => ` OR (SELECT is_called FROM ${quoteIdent(sq)})`).join('');
      return `SELECT ${lit(t)} AS t WHERE EXISTS (SELECT FROM ${quoteIdent(t)})${used}`;
    })
    .join('\nUNION ALL ');
  return { fingerprint: await schemaFingerprint(q, scope), dirty };
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Empties a database of `shape` again as a fresh one is: every table a test left a row in, or
 * drew an id for, truncated with its sequences restarted (CASCADE: and the tables referencing
 * it); the untouched ones are left as they are, already equal to a fresh one's.
 */
export async function emptyTables(q: CatalogQuery, shape: SchemaShape): Promise<void> {
  const dirty = await q<{ t: string }>(shape.dirty);
  if (dirty.length === 0) return;
  await q(`TRUNCATE ${dirty.map((r) => quoteIdent(r.t)).join(', ')} RESTART IDENTITY CASCADE`);
}

/**
 * Makes a closed test database fresh again for reuse: throws when its schema (`scope`, as in
 * {@link schemaFingerprint}) is no longer the migrated `shape`, else empties it ({@link emptyTables}).
 * The caller closes or drops a database this throws for.
 */
export async function resetForReuse(
  q: CatalogQuery,
  shape: SchemaShape,
  scope: string | null,
): Promise<void> {
  if ((await schemaFingerprint(q, scope)) !== shape.fingerprint) throw new Error('schema changed');
  await emptyTables(q, shape);
}
