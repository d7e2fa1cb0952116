/** The `chains` table: one row per configured network, kept in step with the configuration. */
import type { ChainConfig } from '../chains.js';
import type { Queryable } from '../db/database.js';

/** Upserts every configured chain (kind, chain id, enabled); scan state is left untouched. */
export async function registerChains(db: Queryable, chains: ChainConfig[]): Promise<void> {
  for (const ch of chains) {
    await db.query(
      `INSERT INTO chains (network, kind, chain_id, enabled) VALUES ($1, $2, $3, $4)
       ON CONFLICT (network) DO UPDATE SET kind = EXCLUDED.kind, chain_id = EXCLUDED.chain_id, enabled = EXCLUDED.enabled`,
      [ch.network, ch.kind, ch.chainId, ch.enabled],
    );
  }
}
