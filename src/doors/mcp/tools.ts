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
import { facets, history, leaderboard, lookupAgent, lookupWallet, raterProfile } from './metered-tools.js';
import { pricing } from './pricing-tool.js';
import { fromAnswer, result, type ToolResult } from './results.js';
import { qs, type ToolDeps } from './tool-kit.js';
import { logger } from '../../log.js';
import { LEADERBOARD_FREE_ROWS, LEADERBOARD_PAGE_LIMIT } from '../../request-params.js';
import { ToolArgs } from '../http/schemas/params.js';
import { pathSegment } from '../in-process.js';

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

// ------------------------------------------------------------------ schemas

/** Output schema of every tool: a permissive object discriminated by `status`. */
const OutputSchema = z
  .object({
    status: z.enum(['ok', 'payment_required', 'nothing_to_buy', 'not_found', 'unreachable', 'error']),
  })
  .passthrough();

function toCallResult(r: ToolResult): CallToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(r) }],
    structuredContent: r as unknown as Record<string, unknown>,
  };
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
