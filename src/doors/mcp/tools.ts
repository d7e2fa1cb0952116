/**
 * The 14 tools of the MCP door. Each tool calls the canonical HTTP route IN PROCESS through the
 * same app (`RouteCaller`, see results.ts) and never re-implements a query: no SQL, no scoring
 * here. Metered tools pass their `payment` argument as the `X-PAYMENT` header of that call, so
 * they go through the same paywall as any HTTP client; the HTTP status becomes the tool status.
 *
 * Free (never accept `payment`; their input objects are strict): rep_pricing, rep_resolve,
 * rep_check_wallet, rep_chains, rep_feed, rep_index_status, rep_types, rep_manifesto.
 * Metered (declare `payment`): rep_lookup_wallet, rep_rater_profile, rep_lookup_agent,
 * rep_history, rep_facets (free without `wallet`), rep_leaderboard (first page free).
 *
 * Choices where the contract is silent (documented):
 *  - `nothing_to_buy`: the wallet-subject metered tools (rep_lookup_wallet, rep_history,
 *    rep_facets with a wallet) first read the free preview `/wallets/{wallet}/chains`; a wallet
 *    holding no identity on any indexed chain (`chains: []`) has no rating as a subject, so the
 *    tool answers `nothing_to_buy` with the preview and neither quotes nor spends a payment. A
 *    wallet WITH an identity but no eligible rating still goes to the paid route (self-ratings
 *    and revoked ratings are only decomposed there). The preview reads an hourly view and may
 *    trail the paid lookup by up to one refresh. A preview answering 422 (`not_an_address`) gives
 *    status `error`: the tool does not quote a price for a typo. rep_rater_profile uses the same
 *    preview only as a shape check (a rater needs no identity).
 *  - rep_lookup_agent first reads the free `/search/{agent_id}`: no match on that network gives
 *    `not_found` without quoting (the paid route would 402 before validating); a 422 gives `error`.
 *    `max_ratings` travels as the route's own `max_ratings` query parameter (so the quoted and
 *    the paid resource are `GET /reputation/agent/{network}/{agent_id}?max_ratings=N`); the
 *    result always carries `truncation` and a `truncated` tool caveat when the list was cut.
 *  - rep_leaderboard is served from the free `/leaderboard` when `type` is absent, `offset` is 0
 *    and `limit` is at most the free page (100): cut to `limit` with a `trimmed-tail` caveat.
 *    Anything else goes to the metered `/leaderboard/page`. `pagination.total` is always null.
 *  - rep_facets with a wallet buys the wallet profile (`GET /reputation/wallet/{wallet}`, the
 *    same resource as rep_lookup_wallet) and returns its `facets`; without a wallet it is the free
 *    `/stats/facets` (optional `network`), and a `payment` given there is not used (caveat).
 *  - rep_pricing reads `/pricing` and `/health` and probes each metered tier once, without
 *    payment, on a fixed neutral subject (the zero address, agent `base/1`): the live 402 is the
 *    authority of the price, so each probe reports its `accepts[]` amount and recipient check.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import {
  fromAnswer,
  result,
  TOOL_CAVEAT,
  type RouteAnswer,
  type RouteCaller,
  type ToolCaveat,
  type ToolResult,
} from './results.js';
import { logger } from '../../log.js';
import { METERED_ROUTES } from '../../metered-routes.js';
import { AGENT_RATINGS_LIMIT, LEADERBOARD_FREE_ROWS, LEADERBOARD_PAGE_LIMIT } from '../../request-params.js';
import { ToolArgs } from '../http/schemas/params.js';
import { isObject, pathSegment } from '../in-process.js';

interface ToolDeps {
  call: RouteCaller;
  /** The pinned treasury (`config.treasuryAddress`); null: every challenge is DO_NOT_PAY. */
  treasury: string | null;
}

export const FREE_TOOLS = [
  'rep_pricing',
  'rep_resolve',
  'rep_check_wallet',
  'rep_chains',
  'rep_feed',
  'rep_index_status',
  'rep_types',
  'rep_manifesto',
] as const;
export const METERED_TOOLS = [
  'rep_lookup_wallet',
  'rep_rater_profile',
  'rep_lookup_agent',
  'rep_history',
  'rep_facets',
  'rep_leaderboard',
] as const;
export const TOOL_NAMES: readonly string[] = [...FREE_TOOLS, ...METERED_TOOLS];

/** A tool's arguments, typed by its schema in src/doors/http/schemas/params.ts. */
type Args<K extends keyof typeof ToolArgs> = z.infer<(typeof ToolArgs)[K]>;
/** The neutral request rep_pricing probes each metered tier with (declared in METERED_ROUTES). */
const PROBE_PATHS: Readonly<Record<string, string>> = Object.fromEntries(
  METERED_ROUTES.flatMap((r) => r.tiers.map((t) => [t.id, t.probe])),
);

// ------------------------------------------------------------------ schemas

/** Output schema of every tool: a permissive object discriminated by `status`. */
const OutputSchema = z
  .object({
    status: z.enum(['ok', 'payment_required', 'nothing_to_buy', 'not_found', 'unreachable', 'error']),
  })
  .passthrough();

const qs = (params: Record<string, string | number | boolean | undefined>): string => {
  const u = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.set(k, String(v));
  const s = u.toString();
  return s ? `?${s}` : '';
};

function toCallResult(r: ToolResult): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(r) }],
    structuredContent: r as unknown as Record<string, unknown>,
  };
}

const paymentNotUsed: ToolCaveat = {
  code: TOOL_CAVEAT.paymentNotUsed,
  text: 'A payment was given but this answer comes from a free route: it was not sent, nothing was charged.',
};

// ------------------------------------------------------------------ tool bodies

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

async function lookupWallet(deps: ToolDeps, args: Args<'lookupWallet'>) {
  const gate = await walletGate(deps, args.wallet, { identityRequired: true });
  if (gate) return gate;
  const path = `/reputation/wallet/${pathSegment(args.wallet)}${args.snapshot ? '?snapshot=true' : ''}`;
  return fromAnswer(await deps.call(path, { payment: args.payment }), deps.treasury);
}

async function raterProfile(deps: ToolDeps, args: Args<'raterProfile'>) {
  const gate = await walletGate(deps, args.wallet, { identityRequired: false });
  if (gate) return gate;
  return fromAnswer(
    await deps.call(`/reputation/rater/${pathSegment(args.wallet)}`, { payment: args.payment }),
    deps.treasury,
  );
}

async function history(deps: ToolDeps, args: Args<'history'>) {
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

async function lookupAgent(deps: ToolDeps, args: Args<'lookupAgent'>) {
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

async function facets(deps: ToolDeps, args: Args<'facets'>) {
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

async function leaderboard(deps: ToolDeps, args: Args<'leaderboard'>) {
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

async function pricing(deps: ToolDeps): Promise<ToolResult> {
  const [p, h] = await Promise.all([deps.call('/pricing'), deps.call('/health')]);
  if (p.http_status !== 200 || !isObject(p.body)) return fromAnswer(p, deps.treasury);
  const catalog = p.body;
  const tool_caveats: ToolCaveat[] = [];
  let index: Record<string, unknown> | null = null;
  let policies: Record<string, unknown> | null = null;
  if (h.http_status === 200 && isObject(h.body)) {
    const hb = h.body;
    index = {
      agents: hb.agents ?? null,
      feedback_entries: hb.feedback_entries ?? null,
      chains: Array.isArray(hb.chains) ? hb.chains.length : null,
      indexer_period_seconds: hb.indexer_period_seconds ?? null,
    };
    policies = {
      policy_version: hb.policy_version ?? null,
      ordering_policy: hb.ordering_policy ?? null,
      rater_weight_policy: hb.rater_weight_policy ?? null,
      confidence_policy: hb.confidence_policy ?? null,
      reading_policy: hb.reading_policy ?? null,
      pricing_version: catalog.pricing_version ?? null,
    };
  } else {
    tool_caveats.push({
      code: TOOL_CAVEAT.partial,
      text: `The live index size and policies could not be read (GET /health answered ${h.http_status ?? 'nothing'}); prices are still valid.`,
    });
  }
  const tiers = Array.isArray(catalog.tiers) ? (catalog.tiers as unknown[]).filter(isObject) : [];
  const metered = tiers.filter((t) => t.free === false && typeof t.id === 'string');
  const probes = await Promise.all(
    metered.map(async (t) => {
      const id = t.id as string;
      const path = PROBE_PATHS[id];
      if (!path) return { tier: id, probed: false, reason: 'no probe subject for this tier' };
      const a: RouteAnswer = await deps.call(path);
      const probe: Record<string, unknown> = {
        tier: id,
        route: a.route,
        http_status: a.http_status,
        catalog_price_usd: t.price_usd ?? null,
      };
      if (a.http_status === 402 && isObject(a.body)) {
        const c = a.body;
        const accepts = Array.isArray(c.accepts) ? (c.accepts as unknown[]).filter(isObject) : [];
        const amounts = [...new Set(accepts.map((x) => x.amount))];
        const r = fromAnswer(a, deps.treasury);
        return {
          ...probe,
          live: true,
          price_usd: c.price_usd ?? null,
          amount: amounts.length === 1 ? amounts[0] : amounts,
          networks: accepts.map((x) => x.network),
          matches_catalog: amounts.length === 1 && amounts[0] === t.amount,
          recipient_check: r.recipient_check,
        };
      }
      return {
        ...probe,
        live: false,
        detail:
          a.http_status === 404
            ? 'the route is not mounted'
            : 'the route did not answer with a 402 challenge',
      };
    }),
  );
  if (probes.some((x) => !('live' in x) || x.live !== true)) {
    tool_caveats.push({
      code: TOOL_CAVEAT.partial,
      text: 'Some metered routes did not answer their 402 probe (see probes[]).',
    });
  }
  return result('ok', {
    route: p.route,
    http_status: p.http_status,
    data: {
      pricing_version: catalog.pricing_version ?? null,
      currency: catalog.currency ?? null,
      treasury: catalog.treasury ?? null,
      networks: catalog.networks ?? null,
      authority: catalog.authority ?? null,
      free_tier: catalog.free_tier ?? null,
      tiers: catalog.tiers ?? [],
      index,
      policies,
      probes,
    },
    tool_caveats,
  });
}

// ------------------------------------------------------------------ registration

/** One MCP tool: its name, description, input schema and what it runs (a route called in process). */
interface Tool {
  name: string;
  description: string;
  inputSchema: z.ZodObject;
  run(deps: ToolDeps, args: unknown): Promise<ToolResult>;
}

/** A tool whose `run` sees its input typed by its schema (the SDK validates it before `run`). */
function tool<S extends z.ZodObject>(
  name: string,
  description: string,
  inputSchema: S,
  run: (deps: ToolDeps, args: z.infer<S>) => Promise<ToolResult>,
): Tool {
  return { name, description, inputSchema, run: (deps, args) => run(deps, args as z.infer<S>) };
}

/** GET `path` in process; the answer as a tool result. */
const get = async (deps: ToolDeps, path: string) => fromAnswer(await deps.call(path), deps.treasury);

/** Every tool, in the order `tools/list` shows them. */
const TOOLS: readonly Tool[] = [
  // ---------------------------------------------------------------- free
  tool(
    'rep_pricing',
    'Free. Prices of every metered route, the pinned treasury, accepted networks, the live index size and the policies in force; probes the live 402 of each metered route (the 402 is the authority of a price).',
    ToolArgs.none,
    (deps) => pricing(deps),
  ),
  tool(
    'rep_resolve',
    'Free. GET /search/{q}: exact lookup of an EVM address, a Solana base58 key or an agent id; one row per chain (never a single answer), each with its owner, final_score and the paid detail route. No name search.',
    ToolArgs.resolve,
    (deps, a) => get(deps, `/search/${pathSegment(a.q)}`),
  ),
  tool(
    'rep_check_wallet',
    'Free. GET /wallets/{wallet}/chains: the per-chain preview of a wallet (identities, final_score, reviews and distinct raters per chain, global score). An invalid wallet gives status error.',
    ToolArgs.checkWallet,
    (deps, a) => get(deps, `/wallets/${pathSegment(a.wallet)}/chains`),
  ),
  tool(
    'rep_chains',
    'Free. GET /chains (every chain side by side), or GET /chains/{network} for one chain (stats, top wallets scored with that chain only, facets, daily activity).',
    ToolArgs.chains,
    (deps, a) =>
      get(
        deps,
        a.network === undefined ? '/chains' : `/chains/${pathSegment(a.network)}${qs({ days: a.days })}`,
      ),
  ),
  tool(
    'rep_feed',
    "Free. GET /feed: the newest ratings by the chain's own clock, optionally for one network.",
    ToolArgs.feed,
    (deps, a) => get(deps, `/feed${qs({ network: a.network, limit: a.limit })}`),
  ),
  tool(
    'rep_index_status',
    'Free. GET /health: agents and ratings indexed, per-chain scan coverage, indexer period and the versioned policies.',
    ToolArgs.none,
    (deps) => get(deps, '/health'),
  ),
  tool(
    'rep_types',
    'Free. GET /stats/types: declared-type coverage (self-declared, never verified) with total_agents and unknown_share.',
    ToolArgs.none,
    (deps) => get(deps, '/stats/types'),
  ),
  tool(
    'rep_manifesto',
    'Free. GET /manifesto: the principles of the index and how to verify each of them.',
    ToolArgs.none,
    (deps) => get(deps, '/manifesto'),
  ),
  // ---------------------------------------------------------------- metered
  tool(
    'rep_lookup_wallet',
    'Metered (GET /reputation/wallet/{wallet}; snapshot=true adds a durable receipt at a higher price). The full decomposition: per-chain scores, facets, self-rating gap, concentration, confidence, caveats. Without payment: the 402 challenge and recipient_check.',
    ToolArgs.lookupWallet,
    (deps, a) => lookupWallet(deps, a),
  ),
  tool(
    'rep_rater_profile',
    'Metered (GET /reputation/rater/{wallet}). The wallet as a rater: ratings emitted, revocations, subjects, dispersion, per-chain split, self-ratings, roles. Emits no score.',
    ToolArgs.raterProfile,
    (deps, a) => raterProfile(deps, a),
  ),
  tool(
    'rep_lookup_agent',
    "Metered (GET /reputation/agent/{network}/{agent_id}). One agent with every rating and its transaction; confidence and caveats on top. Each rating also carries its feedback document status (integrity of the fetched file against the on-chain feedbackHash, fields that disagree with the log), author_class, responses[] appended on chain and payment_proof (the document's proofOfPayment checked on chain: verified / not_found / mismatch / unsupported_chain); evidence that moves no score. registration (on top, and in data): the agent's registration file as the agent declares it (state pending / valid / invalid / unreachable / changed, name, description, services[] each with domain_proof and liveness, x402_support, active, fetched_at; every string is untrusted text). The same id on another chain is a different agent: network is required.",
    ToolArgs.lookupAgent,
    (deps, a) => lookupAgent(deps, a),
  ),
  tool(
    'rep_history',
    'Metered (GET /reputation/wallet/{wallet}/history). The score over on-chain time, weekly or monthly, with coverage.undated_reviews.',
    ToolArgs.history,
    (deps, a) => history(deps, a),
  ),
  tool(
    'rep_facets',
    'Per-area (tag1 facet) reputation versus the index mean. With wallet: metered (the facets of GET /reputation/wallet/{wallet}). Without wallet: free, the global reference table GET /stats/facets (optional network).',
    ToolArgs.facets,
    (deps, a) => facets(deps, a),
  ),
  tool(
    'rep_leaderboard',
    `Wallets ranked by evidence (shrunk_score). First page (up to ${LEADERBOARD_FREE_ROWS} rows, offset 0, no type) is free from GET /leaderboard; other offsets, limit over ${LEADERBOARD_FREE_ROWS} (up to ${LEADERBOARD_PAGE_LIMIT.max}) or a type filter go to the metered GET /leaderboard/page. pagination.total is always null (not published).`,
    ToolArgs.leaderboard,
    (deps, a) => leaderboard(deps, a),
  ),
];

export function buildMcpServer(deps: ToolDeps, info: { name: string; version: string }): McpServer {
  const server = new McpServer(info, { capabilities: { tools: {} } });
  const annotations = { readOnlyHint: true, openWorldHint: false };

  // The SDK's generic callback type does not follow a schema type parameter; the input is
  // validated by the SDK against `inputSchema` before `run` sees it.
  const register = server.registerTool.bind(server) as unknown as (
    name: string,
    config: {
      description: string;
      inputSchema: z.ZodObject;
      outputSchema: typeof OutputSchema;
      annotations: typeof annotations;
    },
    cb: (args: unknown) => Promise<CallToolResult>,
  ) => void;
  for (const t of TOOLS) {
    register(
      t.name,
      { description: t.description, inputSchema: t.inputSchema, outputSchema: OutputSchema, annotations },
      async (args: unknown) => {
        try {
          return toCallResult(await t.run(deps, args));
        } catch (e) {
          logger('mcp').error(
            { tool: t.name, err: e instanceof Error ? e.message : String(e) },
            'tool failed',
          );
          return toCallResult(result('unreachable', { detail: 'the tool failed before the route answered' }));
        }
      },
    );
  }
  return server;
}
