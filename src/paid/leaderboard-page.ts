/**
 * `GET /leaderboard/page?offset&limit&type`: the same ranking as the free `GET /leaderboard`
 * (read/leaderboard.ts `readLeaderboard`), paged or filtered by self-declared type. `offset` ≥ 0
 * (default 0), `limit` 1..500 (default 100), `type` optional non-empty string (`unknown` selects
 * identities that declare none); out of range or unknown parameters → 422. The total is not
 * published (`total: null`); `next_offset` is null once a page comes back short.
 */
import type { PaidContext, PaidHandler, PaidResult, RawPaidRequest, Validated } from './handler.js';
import { readLeaderboard } from '../read/leaderboard.js';
import { LEADERBOARD_PAGE_LIMIT } from '../request-params.js';
import { ORDERING_POLICY, POLICY_VERSION } from '../scoring/index.js';
import { intQuery, invalidParam, rejectUnknownQuery, singleQuery } from './common.js';

const LEADERBOARD_TYPE_MAX_LENGTH = 200;

interface LeaderboardPageInput {
  offset: number;
  limit: number;
  type: string | null;
}

export const leaderboardPageHandler: PaidHandler<LeaderboardPageInput> = {
  tier: 'leaderboard-deep',
  validate(_ctx: PaidContext, req: RawPaidRequest): Validated<LeaderboardPageInput> {
    const extra = rejectUnknownQuery(req, ['offset', 'limit', 'type']);
    if (extra) return extra;
    const offset = intQuery(req, 'offset', { min: 0, default: 0 });
    if (!offset.ok) return offset;
    const limit = intQuery(req, 'limit', LEADERBOARD_PAGE_LIMIT);
    if (!limit.ok) return limit;
    const type = singleQuery(req, 'type');
    if (!type.ok) return type;
    if (
      type.value !== undefined &&
      (type.value.length === 0 || type.value.length > LEADERBOARD_TYPE_MAX_LENGTH)
    ) {
      return invalidParam(
        ['query', 'type'],
        `type must be 1-${LEADERBOARD_TYPE_MAX_LENGTH} characters.`,
        'string_length',
        type.value,
      );
    }
    return { ok: true, input: { offset: offset.value, limit: limit.value, type: type.value ?? null } };
  },
  async run(ctx: PaidContext, input: LeaderboardPageInput): Promise<PaidResult> {
    const ranking = await readLeaderboard(ctx.db, input);
    const rows = ranking.rows;
    return {
      status: 200,
      body: {
        offset: input.offset,
        limit: input.limit,
        type: input.type,
        returned: rows.length,
        next_offset: rows.length === input.limit ? input.offset + input.limit : null,
        total: null,
        rows,
        shrinkage: { k: ranking.k, prior: ranking.prior },
        ordering_policy: ORDERING_POLICY,
        policy_version: POLICY_VERSION,
        refreshed_at: ranking.refreshed_at,
      },
    };
  },
};
