/**
 * What the two drivers (./postgres.ts, ./pglite.ts) share: the prepared-statement names, the
 * int8 parsing rule, and the schema-scoped advisory-lock key.
 */
import { createHash } from 'node:crypto';
import { logger } from '../log.js';

/** The prepared-statement name of a statement text (stable per text, per process). */
const statementNames = new Map<string, string>();
export function statementName(sql: string): string {
  let name = statementNames.get(sql);
  if (name === undefined) {
    name = `ri_${createHash('sha1').update(sql).digest('hex').slice(0, 20)}`;
    statementNames.set(sql, name);
  }
  return name;
}

let warnedUnprepared = false;
export function warnUnprepared(): void {
  if (warnedUnprepared) return;
  warnedUnprepared = true;
  logger('db').warn(
    'a prepared statement was missing on its PostgreSQL connection (DEALLOCATE, or a pooler in transaction ' +
      'mode between repindex and PostgreSQL); such calls fall back to unprepared statements',
  );
}

export function parseInt8(value: string): number | bigint {
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : BigInt(value);
}

// Advisory-lock key: the lock name scoped by the current schema, so two indexes that share one
// PostgreSQL database in different schemas never block each other.
export const LOCK_KEY_SQL = "hashtext(current_schema() || ':' || $1)";
