/**
 * `GET /reputation/rater/{wallet}`: the wallet as the AUTHOR of ratings (scoring.raterStats). It
 * emits no score, ever: no final_score, no confidence band, no caveats about it as a subject.
 *
 * `roles` (advisory, covers a small slice of the index): how many ratings it wrote under each
 * declared rating direction, read from `tag1` through a small allowlist (`RATER_ROLE_ALLOWLIST`):
 * a tag1 counts for role R when it is exactly R or starts with `R:` (never a free `split(':')`).
 * Everything else is counted in `unknown_tag_count` — data, not an error.
 */
import type { PaidContext, PaidHandler, PaidResult, RawPaidRequest, Validated } from './handler.js';
import { readEmittedAggregates } from '../read/emitted-aggregates.js';
import { readRaterProfileEvidence } from '../read/raters.js';
import { servedRaterProfileEvidence } from './rater-evidence.js';
import { POLICY_VERSION, raterStatsFromAggregates } from '../scoring/index.js';
import { rejectUnknownQuery, walletParam } from './common.js';

/** Declared rating directions (the emitters' `tag1` prefixes). Versioned with `ROLE_POLICY`. */
const RATER_ROLE_ALLOWLIST = Object.freeze(['agent_rating', 'executor_rating', 'worker_rating'] as const);
const ROLE_POLICY = 'tag1-direction-allowlist@1';

/** The allowlisted role a tag1 declares, or null. */
function roleOf(tag1: string): string | null {
  for (const role of RATER_ROLE_ALLOWLIST) {
    if (tag1 === role || tag1.startsWith(`${role}:`)) return role;
  }
  return null;
}

interface RaterProfileInput {
  wallet: string;
}

export const raterProfileHandler: PaidHandler<RaterProfileInput> = {
  tier: 'rater-profile',
  validate(_ctx: PaidContext, req: RawPaidRequest): Validated<RaterProfileInput> {
    const w = walletParam(req);
    if (!w.ok) return w;
    const extra = rejectUnknownQuery(req, []);
    if (extra) return extra;
    return { ok: true, input: { wallet: w.wallet.address } };
  },
  async run(ctx: PaidContext, input: RaterProfileInput): Promise<PaidResult> {
    // From the maintained (network, agent, rater[, tag1]) rows: O(agents rated), never O(ratings).
    const [emitted, evidence] = await Promise.all([
      readEmittedAggregates(ctx.db, input.wallet),
      readRaterProfileEvidence(ctx.db, input.wallet),
    ]);
    const stats = raterStatsFromAggregates(input.wallet, emitted.rows, emitted.first, emitted.last);
    const roleCounts = new Map<string, number>();
    let unknown = 0;
    for (const t of emitted.tags) {
      const n = t.liveCount + t.revokedCount + t.oodCount;
      const role = roleOf(t.tag1);
      if (role === null) unknown += n;
      else roleCounts.set(role, (roleCounts.get(role) ?? 0) + n);
    }
    // Keys in allowlist order, whatever order the rows came in.
    const roles: Record<string, number> = {};
    for (const role of RATER_ROLE_ALLOWLIST) {
      const n = roleCounts.get(role);
      if (n !== undefined && n > 0) roles[role] = n;
    }
    return {
      status: 200,
      body: {
        ...stats,
        roles,
        unknown_tag_count: unknown,
        role_policy: ROLE_POLICY,
        role_allowlist: [...RATER_ROLE_ALLOWLIST],
        // The facts the rater weighting reads (account history, payments, breadth, cohort, graph trust).
        evidence: servedRaterProfileEvidence(
          input.wallet,
          evidence,
          emitted.rows.filter((r) => r.liveCount + r.revokedCount + r.oodCount > 0).length,
        ),
        policy_version: POLICY_VERSION,
      },
    };
  },
};
