/**
 * The fixture and the independent expectations of test/http-lookup.test.ts (the free per-subject
 * routes over the demo scenario): a few Solana rows written through the ingest tables, the stored
 * `ratings` and `agents` rows read back, and what /wallets/{wallet}/chains and an agent-id reading
 * should serve, recomputed from those rows with the pure scoring functions (never from the
 * aggregate tables the routes use).
 */
import type { Database } from '../../src/db/database.js';
import {
  classifyRating,
  normalizeAddress,
  walletScore,
  type EligibleValue,
} from '../../src/scoring/index.js';
import { solanaSeeder } from './solana-seed.js';

// Solana fixture (base58: no 0, O, I, l). Lower-casing SOL_WALLET keeps it valid base58.
export const SOL_WALLET = `So1anaWa11et${'A'.repeat(32)}`; // 44 chars
export const SOL_ASSET = `AssetXYZ${'B'.repeat(30)}`;
export const SOL_ASSET_UNRATED = `AssetUnrated${'C'.repeat(28)}`;
/** A base58 string that is at once a wallet (owns BOTH_OWNED) and an agent asset (owned by SOL_WALLET). */
export const BOTH = `BothWa11etAndAsset${'D'.repeat(20)}`;
export const BOTH_OWNED = `BothOwned${'E'.repeat(30)}`;
const SOL_RATER = (n: number) => `Rater${n}${'R'.repeat(30)}`;

export async function seedSolana(db: Database): Promise<void> {
  const sol = solanaSeeder(db);
  await sol.agent(SOL_ASSET, SOL_WALLET, 'oracle');
  await sol.agent(SOL_ASSET_UNRATED, SOL_WALLET, null);
  await sol.agent(BOTH, SOL_WALLET, null);
  await sol.agent(BOTH_OWNED, BOTH, 'assistant');
  await sol.rate(SOL_ASSET, SOL_RATER(1), '90');
  await sol.rate(SOL_ASSET, SOL_RATER(2), '70');
  await sol.rate(SOL_ASSET, SOL_RATER(2), '80');
  await sol.rate(SOL_ASSET, SOL_WALLET, '100'); // self-rating: out of the score
  await sol.rate(SOL_ASSET, SOL_RATER(3), '10', { revoked: true }); // revoked: out of the score
  await sol.rate(BOTH_OWNED, SOL_RATER(1), '0'); // a real zero
}

export interface Row {
  network: string;
  agent_id: string;
  rater: string;
  value: string;
  revoked: boolean;
  owner: string | null;
}
export interface AgentRow {
  network: string;
  agent_id: string;
  owner: string | null;
  declared_type: string | null;
}

/** Every stored rating (with its agent's owner) and every stored agent. */
export async function readStoredRows(db: Database): Promise<{ ratings: Row[]; agents: AgentRow[] }> {
  const ratings = (
    await db.query<Row & Record<string, unknown>>(
      `SELECT r.network, r.agent_id, r.rater, r.value::text AS value, r.revoked, a.owner
         FROM ratings r LEFT JOIN agents a ON a.network = r.network AND a.agent_id = r.agent_id`,
    )
  ).map((r) => ({ ...r }));
  const agents = await db.query<AgentRow & Record<string, unknown>>(
    `SELECT network, agent_id, owner, declared_type FROM agents`,
  );
  return { ratings, agents };
}

export const byLenThenText = (a: string, b: string) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);

/** The expectations over the rows the test file holds (read when called: they are set in its beforeAll). */
export function lookupExpectations(
  stored: () => { ratings: Row[]; agents: AgentRow[]; chainOrder: string[] },
) {
  const configOrder = (a: string, b: string) =>
    stored().chainOrder.indexOf(a) - stored().chainOrder.indexOf(b);

  function expectedChains(wallet: string) {
    const { ratings, agents } = stored();
    const owned = agents.filter((a) => a.owner === wallet);
    const networks = [...new Set(owned.map((a) => a.network))].sort(configOrder);
    const received = ratings.filter((r) => r.owner === wallet);
    const eligible: EligibleValue[] = received
      .filter((r) => classifyRating(r, wallet) === 'eligible')
      .map((r) => ({ network: r.network, rater: r.rater, value: r.value }));
    const score = walletScore(eligible);
    const perChain = new Map(score.per_chain.map((c) => [c.network, c]));
    const chains = networks.map((network) => {
      const ids = owned
        .filter((a) => a.network === network)
        .map((a) => a.agent_id)
        .sort(byLenThenText);
      const c = perChain.get(network);
      return {
        network,
        agent_count: ids.length,
        agent_ids: ids,
        final_score: c?.final_score ?? null,
        total_reviews: c?.review_count ?? 0,
        distinct_raters: c?.distinct_raters ?? 0,
      };
    });
    return {
      wallet,
      chains,
      chains_with_identity: networks.length,
      chains_with_reputation: networks.filter((n) => received.some((r) => r.network === n)).length,
      identity_count: owned.length,
      total_reviews: eligible.length,
      distinct_raters: new Set(eligible.map((e) => normalizeAddress(e.rater))).size,
      global_score: score.final_score,
      received: received.length,
    };
  }

  /** An agent's own numbers (what an agent-id reading serves), from the stored rows. */
  function expectedAgent(network: string, agentId: string) {
    const { ratings, agents } = stored();
    const a = agents.find((x) => x.network === network && x.agent_id === agentId)!;
    const owner = a.owner ?? '';
    const eligible = ratings
      .filter(
        (r) => r.network === network && r.agent_id === agentId && classifyRating(r, owner) === 'eligible',
      )
      .map((r) => ({ network, rater: r.rater, value: r.value }));
    const s = walletScore(eligible);
    return {
      wallet: a.owner,
      declared_type: a.declared_type,
      final_score: s.final_score,
      total_reviews: eligible.length,
      distinct_raters: new Set(eligible.map((e) => normalizeAddress(e.rater))).size,
    };
  }

  /** Every wallet that owns an agent. */
  const owners = () => [
    ...new Set(
      stored()
        .agents.map((a) => a.owner)
        .filter((o): o is string => o !== null),
    ),
  ];

  return { configOrder, expectedChains, expectedAgent, owners };
}
