/**
 * The PostgreSQL pools whose use the metrics export (`primary`, `read`): src/db/database.ts
 * registers each pool it opens (and unregisters it on close), src/metrics.ts reads them at scrape
 * time. A module of its own so neither of those two imports the other.
 */

/** What the pool gauge reads of a pool (a `pg.Pool` has these counters). */
export interface PoolLike {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
}

const pools = new Map<string, PoolLike>();

/** A PostgreSQL pool whose use is exported (`primary`, `read`); null forgets the name. */
export function registerDbPool(name: string, pool: PoolLike | null): void {
  if (pool) pools.set(name, pool);
  else pools.delete(name);
}

/** The registered pools, by name. */
export function registeredPools(): ReadonlyMap<string, PoolLike> {
  return pools;
}
