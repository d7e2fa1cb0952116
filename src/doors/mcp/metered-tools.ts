/**
 * The bodies of the metered MCP tools (and their free fallbacks): each calls the canonical HTTP
 * route in process (`deps.call`), gated by a free preview where that saves a buyer a useless
 * quote. The choices they make are listed in tools.ts.
 */
import { fromAnswer, result, TOOL_CAVEAT, type ToolCaveat, type ToolResult } from './results.js';
import { paymentNotUsed, qs, type Args, type ToolDeps } from './tool-kit.js';
import { AGENT_RATINGS_LIMIT, LEADERBOARD_FREE_ROWS } from '../../request-params.js';
import { isObject, pathSegment } from '../in-process.js';

/** The free wallet preview, as a gate in front of a wallet-subject metered route. */
async function walletGate(
  deps: ToolDeps,
  w: string,
  opts: { identityRequired: boolean },
): Promise<ToolResult | null> {
  const a = await deps.call(`/wallets/${pathSegment(w)}/chains`);
  if (a.http_status === 422) return fromAnswer(a, deps.treasury);
  if (a.http_status !== 200 || !isObject(a.body)) return null; // the paid route decides
  if (opts.identityRequired && Array.isArray(a.body.chains) && a.body.chains.length === 0) {
    return result('nothing_to_buy', {
      route: a.route,
      http_status: a.http_status,
      preview: a.body,
      detail:
        'This wallet holds no identity on any indexed chain, so no rating has it as subject: the metered decomposition would be empty. Nothing was quoted or charged.',
    });
  }
  return null;
}

export async function lookupWallet(deps: ToolDeps, args: Args<'lookupWallet'>) {
  const gate = await walletGate(deps, args.wallet, { identityRequired: true });
  if (gate) return gate;
  const path = `/reputation/wallet/${pathSegment(args.wallet)}${args.snapshot ? '?snapshot=true' : ''}`;
  return fromAnswer(await deps.call(path, { payment: args.payment }), deps.treasury);
}

export async function raterProfile(deps: ToolDeps, args: Args<'raterProfile'>) {
  const gate = await walletGate(deps, args.wallet, { identityRequired: false });
  if (gate) return gate;
  return fromAnswer(
    await deps.call(`/reputation/rater/${pathSegment(args.wallet)}`, { payment: args.payment }),
    deps.treasury,
  );
}

export async function history(deps: ToolDeps, args: Args<'history'>) {
  const gate = await walletGate(deps, args.wallet, { identityRequired: true });
  if (gate) return gate;
  const path = `/reputation/wallet/${pathSegment(args.wallet)}/history${qs({ bucket: args.bucket })}`;
  return fromAnswer(await deps.call(path, { payment: args.payment }), deps.treasury, (body) => {
    const caveats: ToolCaveat[] = [];
    const undated = isObject(body) && isObject(body.coverage) ? body.coverage.undated_reviews : undefined;
    if (typeof undated === 'number' && undated > 0) {
      caveats.push({
        code: TOOL_CAVEAT.undatedReviews,
        text: `${undated} rating(s) have no on-chain date and sit outside the series: the last point may legitimately sit below final_score.`,
      });
    }
    return { data: body, tool_caveats: caveats };
  });
}

export async function lookupAgent(deps: ToolDeps, args: Args<'lookupAgent'>) {
  const max = args.max_ratings ?? AGENT_RATINGS_LIMIT.default;
  // Free gate: does that agent exist on that network? (the paid route quotes before validating)
  const s = await deps.call(`/search/${pathSegment(args.agent_id)}`);
  if (s.http_status === 422) return fromAnswer(s, deps.treasury);
  if (s.http_status === 200 && isObject(s.body) && Array.isArray(s.body.matches)) {
    const ids = new Set([
      args.agent_id,
      typeof s.body.normalized_query === 'string' ? s.body.normalized_query : args.agent_id,
    ]);
    const found = (s.body.matches as unknown[]).some(
      (m) =>
        isObject(m) &&
        m.network === args.network &&
        Array.isArray(m.agent_ids) &&
        (m.agent_ids as unknown[]).some((id) => typeof id === 'string' && ids.has(id)),
    );
    if (!found) {
      return result('not_found', {
        route: s.route,
        http_status: s.http_status,
        data: s.body,
        detail: `No agent ${args.agent_id} is indexed on ${args.network} (free search; nothing was quoted or charged). The same id on another chain is a different agent.`,
      });
    }
  }
  const path = `/reputation/agent/${pathSegment(args.network)}/${pathSegment(args.agent_id)}${qs({ max_ratings: max })}`;
  return fromAnswer(await deps.call(path, { payment: args.payment }), deps.treasury, (body) => {
    if (!isObject(body)) return { data: body };
    let data: Record<string, unknown> = body;
    const ratings = Array.isArray(body.ratings) ? (body.ratings as unknown[]) : [];
    const p = isObject(body.pagination) ? body.pagination : null;
    let total = typeof p?.total === 'number' ? p.total : ratings.length;
    let returned = ratings.length;
    // The route pages itself; should it send more than asked, the tool cuts (and says so).
    if (max > 0 && ratings.length > max) {
      data = { ...body, ratings: ratings.slice(0, max) };
      total = Math.max(total, ratings.length);
      returned = max;
    }
    const truncated = returned < total;
    const caveats: ToolCaveat[] = truncated
      ? [
          {
            code: TOOL_CAVEAT.truncated,
            text: `Showing ${returned} of ${total} ratings (max_ratings=${max}). The score, confidence and caveats cover every rating; call again with a larger max_ratings (0 = the largest page, ${AGENT_RATINGS_LIMIT.max}) or page the route with after = pagination.next_cursor.`,
          },
        ]
      : [];
    return {
      confidence: body.confidence ?? null,
      caveats: Array.isArray(body.caveats) ? body.caveats : [],
      // the agent's registration file as it declares it, with domain proofs and liveness (also in data)
      registration: body.registration ?? null,
      truncation: { max_ratings: max, returned, total, truncated },
      data,
      tool_caveats: caveats,
    };
  });
}

export async function facets(deps: ToolDeps, args: Args<'facets'>) {
  if (args.wallet === undefined) {
    const a = await deps.call(`/stats/facets${qs({ network: args.network })}`);
    const r = fromAnswer(a, deps.treasury, (body) => ({ scope: 'index', data: body }));
    if (args.payment) r.tool_caveats.push(paymentNotUsed);
    return r;
  }
  const gate = await walletGate(deps, args.wallet, { identityRequired: true });
  if (gate) return gate;
  const a = await deps.call(`/reputation/wallet/${pathSegment(args.wallet)}`, { payment: args.payment });
  return fromAnswer(a, deps.treasury, (body) => {
    if (!isObject(body)) return { data: body };
    const tool_caveats: ToolCaveat[] = [];
    if (args.network !== undefined) {
      tool_caveats.push({
        code: TOOL_CAVEAT.partial,
        text: 'network is ignored with a wallet: a wallet profile carries its facets across every chain.',
      });
    }
    return {
      scope: 'wallet',
      wallet: body.wallet ?? args.wallet,
      data: {
        facets: body.facets ?? null,
        policy_version: body.policy_version ?? null,
        caveats: body.caveats ?? [],
      },
      tool_caveats,
    };
  });
}

export async function leaderboard(deps: ToolDeps, args: Args<'leaderboard'>) {
  const offset = args.offset ?? 0;
  const free =
    args.type === undefined && offset === 0 && (args.limit ?? LEADERBOARD_FREE_ROWS) <= LEADERBOARD_FREE_ROWS;
  if (free) {
    const a = await deps.call('/leaderboard');
    const r = fromAnswer(a, deps.treasury, (body) => {
      const rows = isObject(body) && Array.isArray(body.rows) ? (body.rows as unknown[]) : [];
      const limit = args.limit ?? rows.length;
      const kept = rows.slice(0, limit);
      const caveats: ToolCaveat[] =
        kept.length < rows.length
          ? [
              {
                code: TOOL_CAVEAT.trimmedTail,
                text: `The free page holds ${rows.length} rows; the tail past limit=${limit} was cut.`,
              },
            ]
          : [];
      return {
        data: isObject(body) ? { ...body, rows: kept } : body,
        pagination: {
          source: 'free',
          offset: 0,
          limit,
          returned: kept.length,
          next_offset: kept.length === limit && kept.length > 0 ? kept.length : null,
          total: null,
        },
        tool_caveats: caveats,
      };
    });
    if (args.payment) r.tool_caveats.push(paymentNotUsed);
    return r;
  }
  const path = `/leaderboard/page${qs({ offset: args.offset, limit: args.limit, type: args.type })}`;
  return fromAnswer(await deps.call(path, { payment: args.payment }), deps.treasury, (body) => {
    const rows = isObject(body) && Array.isArray(body.rows) ? (body.rows as unknown[]) : [];
    const b = isObject(body) ? body : {};
    return {
      data: body,
      pagination: {
        source: 'metered',
        offset: typeof b.offset === 'number' ? b.offset : offset,
        limit: typeof b.limit === 'number' ? b.limit : (args.limit ?? null),
        returned: rows.length,
        next_offset: typeof b.next_offset === 'number' ? b.next_offset : null,
        // The API does not publish the size of the ranking.
        total: null,
      },
    };
  });
}
