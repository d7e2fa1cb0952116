/**
 * Solana rows written straight into an index (the demo chains are EVM only): agents and ratings on
 * network 'solana', as the Solana scanner would store them. Each call numbers its ratings 1, 2, …
 * (tx hash `<prefix><n>`, feedback index and block n, block time 2026-10-01, tag1 'trust').
 *
 *   const sol = solanaSeeder(db);
 *   await sol.agent(ASSET, OWNER, 'oracle');
 *   await sol.rate(ASSET, RATER, '90');
 *   await sol.rate(ASSET, RATER, '10', { revoked: true });
 */
import type { Database } from '../../src/db/database.js';

export interface SolanaSeeder {
  /** An agent (asset id) owned and minted by `owner`, with an optional declared type. */
  agent(assetId: string, owner: string, declaredType?: string | null): Promise<void>;
  /** A rating of `value` (integer, 0 decimals) by `rater`; revoked when asked. */
  rate(assetId: string, rater: string, value: string, opts?: { revoked?: boolean }): Promise<void>;
}

export function solanaSeeder(db: Pick<Database, 'query'>, txPrefix = 'sig'): SolanaSeeder {
  let seq = 0;
  return {
    async agent(assetId, owner, declaredType = null) {
      await db.query(
        `INSERT INTO agents (network, agent_id, minter, owner, declared_type, registered_block) VALUES ('solana', $1, $2, $2, $3, 1)`,
        [assetId, owner, declaredType],
      );
    },
    async rate(assetId, rater, value, opts = {}) {
      seq++;
      await db.query(
        `INSERT INTO ratings (network, tx_hash, log_index, agent_id, rater, feedback_index, value_raw, value_decimals, value,
                              tag1, block_number, block_time, revoked)
         VALUES ('solana', $1, 0, $2, $3, $4, $5, 0, $6, 'trust', $7, '2026-10-01T00:00:00Z', $8)`,
        [`${txPrefix}${seq}`, assetId, rater, seq, value, value, seq, opts.revoked === true],
      );
    },
  };
}
