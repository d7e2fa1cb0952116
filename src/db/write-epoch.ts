/**
 * A process-wide counter of database writes made through this process's handles (every
 * statement that is not a plain SELECT, and every committed transaction). Readers that keep
 * derived answers in memory (the free-answer cache) re-check the database's state when it moved,
 * so a write made in this process is visible to the next request at once; writes made by other
 * processes are seen within the cache's polling period.
 */
let epoch = 0;

const READ_ONLY = /^\s*(SELECT|SHOW|EXPLAIN|VALUES)\b/i;

/** The current write epoch of this process. */
export function writeEpoch(): number {
  return epoch;
}

/** Records that this process wrote (or may have written) to a database. */
export function noteWrite(): void {
  epoch += 1;
}

/** Records a write when `sql` is not a plain read. */
export function noteStatement(sql: string): void {
  if (!READ_ONLY.test(sql)) epoch += 1;
}
