/** Helpers the store's multi-row statements share (rows go in as arrays through unnest()). */
import type { Queryable } from '../db/database.js';

/** Rows per multi-row statement. */
const CHUNK = 4_000;

export const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** Splits rows into statements of at most CHUNK rows. */
export function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += CHUNK) out.push(rows.slice(i, i + CHUNK));
  return out;
}

/** Runs a statement that selects one `n` and returns it (0 when no row). */
export async function count(tx: Queryable, sql: string, params: readonly unknown[]): Promise<number> {
  const [row] = await tx.query<{ n: number }>(sql, params);
  return Number(row?.n ?? 0);
}

/**
 * Wraps an INSERT so the chain's live counter (GET /health) moves by the rows it really inserted,
 * in the same statement and transaction; selects that number as `n`.
 */
export function countedInsert(insert: string, counter: 'agents_count' | 'ratings_count'): string {
  return `WITH ins AS (${insert} RETURNING network),
    bump AS (UPDATE chains c SET ${counter} = c.${counter} + x.n
               FROM (SELECT network, count(*) AS n FROM ins GROUP BY network) x WHERE c.network = x.network)
    SELECT count(*)::int AS n FROM ins`;
}

/**
 * One CSV field for `COPY … WITH (FORMAT csv)`: NULL unquoted and empty, any other value quoted
 * (its quotes doubled), so the server reads exactly the text an array parameter would give it
 * (the empty string stays an empty string; commas, quotes, newlines and backslashes are data).
 */
export function csvField(v: string | number | null): string {
  if (v === null) return '';
  const t = typeof v === 'number' ? String(v) : v;
  return t.includes('"') ? `"${t.replace(/"/g, '""')}"` : `"${t}"`;
}
