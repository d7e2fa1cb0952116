/**
 * `GET /reputation/agent/{network}/{agent_id}`: one agent and EVERY rating it received, each with
 * its transaction, block, log index, rater, facet (tag1), value (number at full precision plus the
 * exact string) and revoked marker with the revoking transaction; beside them the agent's score,
 * `confidence`, `caveats[]` and `policy_version`, computed with the same policy as the wallet
 * route, relative to the agent's CURRENT owner (its ratings by that owner are self-ratings).
 *
 * Choices where the interface leaves room (documented in docs/API.md):
 *  - unknown `network` → 404 `unknown_network` with `known_networks`, exactly like
 *    `GET /chains/{network}` (the network is a path segment: an unknown one names no resource);
 *  - `agent_id` of the wrong shape for that chain (decimal counter on EVM, normalized "007" → "7";
 *    base58 on solana) → 422;
 *  - agent not indexed (no identity row and no rating) → 404 `{detail: 'agent not indexed'}`,
 *    checked in `validate` so the paywall never charges for it;
 *  - paging: `limit` default 200, 1..1000, 0 = the largest page (1000) (`max_ratings` of the MCP
 *    tool is an accepted alias); `offset` default 0, ≥ 0, or `after` = the previous page's
 *    `pagination.next_cursor` (keyset on block, log index, tx hash; not with a non-zero offset).
 *    The handler never holds more than one page of ratings. The score always covers EVERY
 *    rating (it comes from the maintained aggregates, O(distinct raters)); the page only cuts the
 *    `ratings` list, and `pagination` always declares it (total, returned, next_offset,
 *    next_cursor, truncated).
 */
import type { PaidContext, PaidHandler, PaidResult, RawPaidRequest, Validated } from './handler.js';
import { normalizeAgentId } from '../identifiers.js';
import {
  agentIsIndexed,
  formatCursor,
  parseCursor,
  readAgentRatingsPage,
  type AgentRatingRow,
  type RatingCursor,
} from '../read/agent.js';
import { readAgentDetailInputs } from '../read/agent-aggregates.js';
import { readEvidenceCounts, readRatingEvidence, ratingKey, type RatingEvidence } from '../read/documents.js';
import { servedEvidence } from './evidence.js';
import { readAgentRegistration } from '../read/registrations.js';
import { servedRegistration } from './registration.js';
import { EVIDENCE_SOURCES, servedRatingEvidence } from './rater-evidence.js';
import {
  evidenceLookup,
  inDomain,
  round6,
  sameAddress,
  scoreSubjectFromAggregates,
  type VoiceWeight,
} from '../scoring/index.js';
import {
  intQuery,
  invalidParam,
  iso,
  rejectUnknownQuery,
  singleQuery,
  unknownNetworkResult,
} from './common.js';
import { AGENT_RATINGS_LIMIT, resolveNetwork } from '../request-params.js';

export const AGENT_RATINGS_MAX_LIMIT = AGENT_RATINGS_LIMIT.max;

interface AgentDetailInput {
  network: string;
  agentId: string;
  limit: number;
  offset: number;
  after: RatingCursor | null;
}

/** One rating as served, with its document, author class, responses, payment proof and rater evidence. */
function servedRating(
  r: AgentRatingRow,
  owner: string | null,
  evidence: RatingEvidence | undefined,
  relayers: readonly string[],
  raterEvidence: Record<string, unknown>,
) {
  return {
    tx_hash: r.tx_hash,
    block_number: r.block_number,
    log_index: r.log_index,
    block_time: iso(r.block_time),
    rater: r.rater,
    client: r.rater,
    feedback_index: r.feedback_index,
    facet: r.tag1,
    tag1: r.tag1,
    tag2: r.tag2,
    value: Number(r.value),
    value_exact: r.value,
    value_raw: r.value_raw,
    value_decimals: r.value_decimals,
    normalized_value: inDomain(r.value) ? Number(r.value) : null,
    is_self: owner !== null && sameAddress(r.rater, owner),
    revoked: r.revoked,
    is_revoked: r.revoked,
    revoked_tx: r.revoked_tx,
    revoked_block: r.revoked_block,
    revoked_at: iso(r.revoked_at),
    feedback_uri: r.feedback_uri,
    feedback_hash: r.feedback_hash,
    endpoint: r.endpoint,
    ...servedEvidence(r.rater, evidence, relayers),
    rater_evidence: raterEvidence,
  };
}

export const agentDetailHandler: PaidHandler<AgentDetailInput> = {
  tier: 'agent-detail',
  async validate(ctx: PaidContext, req: RawPaidRequest): Promise<Validated<AgentDetailInput>> {
    const rawNetwork = req.params.network ?? '';
    const network = resolveNetwork(ctx, rawNetwork);
    if (network === null) return unknownNetworkResult(ctx, rawNetwork);
    const rawId = req.params.agent_id ?? '';
    const agentId = normalizeAgentId(network, rawId);
    if (agentId === null) {
      return invalidParam(
        ['path', 'agent_id'],
        network === 'solana'
          ? 'agent_id on solana is a base58 asset address (32-44 chars, case-sensitive).'
          : 'agent_id on an EVM chain is the registry counter in decimal digits.',
        'value_error',
        rawId,
      );
    }
    const extra = rejectUnknownQuery(req, ['limit', 'max_ratings', 'offset', 'after']);
    if (extra) return extra;
    if (req.query.limit !== undefined && req.query.max_ratings !== undefined) {
      return invalidParam(
        ['query', 'max_ratings'],
        'Give limit or its alias max_ratings, not both.',
        'value_error',
      );
    }
    const limitKey = req.query.max_ratings !== undefined ? 'max_ratings' : 'limit';
    const limit = intQuery(req, limitKey, AGENT_RATINGS_LIMIT);
    if (!limit.ok) return limit;
    const offset = intQuery(req, 'offset', { min: 0, default: 0 });
    if (!offset.ok) return offset;
    const afterRaw = singleQuery(req, 'after');
    if (!afterRaw.ok) return afterRaw;
    let after: RatingCursor | null = null;
    if (afterRaw.value !== undefined) {
      after = parseCursor(afterRaw.value);
      if (after === null) {
        return invalidParam(
          ['query', 'after'],
          'after is the pagination.next_cursor of a previous page.',
          'value_error',
          afterRaw.value,
        );
      }
      if (offset.value !== 0) {
        return invalidParam(
          ['query', 'offset'],
          'Give offset or after, not both.',
          'value_error',
          offset.value,
        );
      }
    }
    if (!(await agentIsIndexed(ctx.db, network, agentId))) {
      return { ok: false, status: 404, body: { detail: 'agent not indexed' } };
    }
    return {
      ok: true,
      input: {
        network,
        agentId,
        limit: limit.value === 0 ? AGENT_RATINGS_LIMIT.max : limit.value,
        offset: offset.value,
        after,
      },
    };
  },

  async run(ctx: PaidContext, input: AgentDetailInput): Promise<PaidResult> {
    const { network, agentId } = input;
    // At once: the identity, aggregates and index-wide inputs; the page; the evidence counts. Then
    // one statement over the page's keys for its documents and responses.
    const [aggs, page, evidenceCounts, registration] = await Promise.all([
      readAgentDetailInputs(ctx.db, network, agentId),
      // One row past the page says whether another page follows.
      readAgentRatingsPage(ctx.db, network, agentId, {
        limit: input.limit + 1,
        offset: input.offset,
        after: input.after,
      }),
      readEvidenceCounts(ctx.db, [{ network, agentId }]),
      // Its registration file, domain proofs and liveness (src/registrations/, src/liveness/).
      readAgentRegistration(ctx.db, network, agentId),
    ]);
    const { agent, backfilled, chainPriors, facetIndexMeans } = aggs;
    const meta = { prior: aggs.prior };
    const total = aggs.total;
    if (agent === null && total === 0) return { status: 404, body: { detail: 'agent not indexed' } };
    const owner = agent?.owner ?? null;
    const raterEvidence = evidenceLookup(aggs.raterFacts);
    // How each voice was weighed (weighted_score's composition), served on the page's ratings.
    const weights = new Map<string, VoiceWeight>();
    const s = scoreSubjectFromAggregates(owner ?? '', aggs.aggregates, {
      onVoiceWeights: (ws) => {
        for (const w of ws) weights.set(w.rater, w);
      },
      prior: round6(meta.prior),
      chainPriors: new Map([...chainPriors].map(([n, p]) => [n, round6(p)])),
      raterSubjectCounts: aggs.raterSubjectCounts,
      raterEvidence,
      degraded: total > 0 && !backfilled,
      facetIndexMeans,
      identities: [{ network, agentIds: [agentId] }],
    });
    const more = page.length > input.limit;
    if (more) page.pop();
    const returned = page.length;
    const lastRow = page[page.length - 1];
    const full = more;
    const end = input.offset + returned;
    // The page's documents, payment proofs and responses: one statement over the page's keys.
    const evidence = await readRatingEvidence(ctx.db, page);
    const relayers = ctx.config.knownRelayers ?? [];
    const raterEvidenceOf = (rater: string, eligible: boolean) =>
      servedRatingEvidence(rater, aggs.raterFacts.get(rater), eligible ? weights.get(rater) : undefined);
    return {
      status: 200,
      body: {
        network,
        agent_id: agentId,
        current_owner: owner,
        minter: agent?.minter ?? null,
        declared_type: agent?.declared_type ?? null,
        agent_uri: agent?.agent_uri ?? null,
        registration: servedRegistration(registration),
        indexed_identity: agent !== null,
        registered: agent
          ? {
              block_number: agent.registered_block,
              tx_hash: agent.registered_tx,
              at: iso(agent.registered_at),
            }
          : null,
        score: s.final_score,
        final_score: s.final_score,
        shrunk_score: s.shrunk_score,
        weighted_score: s.weighted_score,
        rater_weight_policy: s.rater_weight_policy,
        review_count: s.total_reviews,
        total_reviews: s.total_reviews,
        distinct_raters: s.distinct_raters,
        revoked_count: s.revoked_count,
        out_of_domain_count: s.out_of_domain_count,
        self_rated: s.self_rated,
        facets: s.facets,
        concentration: s.concentration,
        top_client: s.top_client,
        top_client_share: s.top_client_share,
        confidence: s.confidence,
        activity: s.activity,
        caveats: s.caveats,
        policy_version: s.policy_version,
        evidence: { ...evidenceCounts, moves_score: false },
        rater_evidence: { computed_at: aggs.evidenceComputedAt, sources: EVIDENCE_SOURCES },
        pagination: {
          total,
          returned,
          offset: input.offset,
          limit: input.limit,
          after: input.after === null ? null : formatCursor(input.after),
          next_offset: input.after === null && full && end < total ? end : null,
          next_cursor: full && lastRow !== undefined ? formatCursor(lastRow) : null,
          truncated: returned < total,
        },
        ratings: page.map((r) =>
          servedRating(
            r,
            owner,
            evidence.get(ratingKey(r)),
            relayers,
            raterEvidenceOf(
              r.rater,
              !r.revoked && inDomain(r.value) && !(owner !== null && sameAddress(r.rater, owner)),
            ),
          ),
        ),
      },
    };
  },
};
